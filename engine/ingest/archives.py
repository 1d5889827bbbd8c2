"""Zip archives given to `ingest`: most apps send their export as one (ChatGPT, Claude, Slack,
an iPhone's WhatsApp chat). An archive is read as the folder it unpacks to.

Its chat-log files (`.json`, `.jsonl`, `.ndjson`, `.csv`, `.txt`) are unpacked into a private
temporary folder named as the archive (a WhatsApp `_chat.txt` takes its chat's name from it),
read, and removed; pictures and other files are not unpacked. What is read is shown under the
archive's own path (`export.zip/conversations.json`). Refused, naming the entry: an entry that
would land outside the folder (an absolute path, `..`), and an archive whose logs would not fit
the free disk (their sizes as the archive declares them, which bound what unpacking writes).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from contextlib import ExitStack
from pathlib import Path, PurePosixPath

from engine.errors import InvalidInputError

LOG_SUFFIXES = frozenset({".json", ".jsonl", ".ndjson", ".csv", ".txt"})


def is_archive(path: str) -> bool:
    """Whether `path` is a zip archive to unpack (a file named `.zip` that is one)."""
    return path.lower().endswith(".zip") and os.path.isfile(path) and zipfile.is_zipfile(path)


class Archives(ExitStack):
    """The archives unpacked for one read, removed when it ends (`with Archives() as ...`)."""

    def __init__(self) -> None:
        super().__init__()
        self._shown: dict[str, str] = {}  # unpacked folder -> the archive as the caller named it

    def opened(self, path: str) -> str:
        """`path`, or for an archive the folder it was unpacked to.

        Raises:
            InvalidInputError: the archive cannot be read, holds an entry that would land
                outside its folder, or would not fit the free disk.
        """
        if not is_archive(path):
            return path
        root = self.enter_context(tempfile.TemporaryDirectory(prefix="graphmem-zip-"))
        folder = os.path.join(root, Path(path).stem or "archive")
        unpack(path, folder)
        self._shown[folder] = path
        return folder

    def shown(self, path: str) -> str:
        """`path` as the caller knows it: under the archive's path for an unpacked file."""
        for folder, archive in self._shown.items():
            if path == folder or path.startswith(folder + os.sep):
                return archive + path[len(folder) :]
        return path


def unpack(path: str, folder: str) -> None:
    """Unpack the chat-log files of the zip archive `path` into `folder`.

    Raises:
        InvalidInputError: as `Archives.opened`.
    """
    try:
        with zipfile.ZipFile(path) as archive:
            entries = [e for e in archive.infolist() if _is_log(e)]
            os.makedirs(folder, exist_ok=True)
            _check_room(path, entries, folder)
            for entry in entries:
                archive.extract(entry, folder)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InvalidInputError(f"cannot unpack {path!r}: {exc}") from exc


def _is_log(entry: zipfile.ZipInfo) -> bool:
    """A regular file with a chat log's suffix, outside macOS's `__MACOSX` copies."""
    name = PurePosixPath(entry.filename)
    if name.is_absolute() or ".." in name.parts or "\\" in entry.filename:
        raise InvalidInputError(f"the archive's entry {entry.filename!r} would land outside it")
    is_link = stat.S_ISLNK(entry.external_attr >> 16)
    hidden = name.parts[0] == "__MACOSX" or any(p.startswith(".") for p in name.parts)
    return not (entry.is_dir() or is_link or hidden) and name.suffix.lower() in LOG_SUFFIXES


def _check_room(path: str, entries: list[zipfile.ZipInfo], folder: str) -> None:
    size = sum(entry.file_size for entry in entries)
    free = shutil.disk_usage(Path(folder).parent).free
    if size > free:
        raise InvalidInputError(
            f"{path!r} unpacks to {size / 1e9:.1f} GB of chat logs and the temporary folder "
            f"has {free / 1e9:.1f} GB free: unpack it where there is room (TMPDIR) and give "
            "the folder"
        )
