"""A directory given to `ingest`: the chat logs under it.

Every file under the directory, recursively, in sorted path order; files and directories whose
name starts with a dot are left out. With `format="auto"`, a file whose format cannot be told
(a README, a picture) is skipped with a warning; with a format named, every file is read as it.

A ChatGPT export unpacked under the directory (a folder whose `conversations.json` is a ChatGPT
export, with `format` `"auto"` or `"chatgpt"`) gives its `conversations.json` only: the
export's other files (`user.json`, `chat.html`, images) are left out, with one warning.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import InvalidInputError
from engine.ingest.readers import resolve_format
from engine.ingest.report import IngestWarning

CHATGPT_EXPORT = "conversations.json"


def chat_logs(directory: str, format: str) -> tuple[dict[str, str], list[IngestWarning]]:
    """The logs under `directory` (path as shown -> format) and a warning per file skipped.

    Raises:
        InvalidInputError: `format` is unknown, or the directory holds no chat log.
    """
    root = Path(directory)
    files = _files(root)
    exports = _chatgpt_exports(files, format)
    read = {folder / CHATGPT_EXPORT for folder in exports}
    logs: dict[str, str] = {}
    skipped: list[IngestWarning] = []
    for folder in exports:
        skipped += _export_warning(directory, root, folder, files)
    for path in files:
        if path not in read and any(folder in path.parents for folder in exports):
            continue
        shown = _shown(directory, root, path)
        try:
            logs[shown] = resolve_format(path, format)
        except InvalidInputError as exc:
            if format != "auto":
                raise
            reason = f"{exc}: skipped"
            skipped.append(IngestWarning(path=shown, location="file", reason=reason))
    if not logs:
        raise InvalidInputError(f"no chat log in directory {directory!r}")
    return logs, skipped


def _shown(directory: str, root: Path, path: Path) -> str:
    return directory if path == root else os.path.join(directory, os.fspath(path.relative_to(root)))


def _chatgpt_exports(files: list[Path], format: str) -> list[Path]:
    """The folders holding a ChatGPT export's `conversations.json`."""
    if format not in ("auto", "chatgpt"):
        return []
    return [p.parent for p in files if p.name == CHATGPT_EXPORT and _is_chatgpt(p, format)]


def _is_chatgpt(path: Path, format: str) -> bool:
    try:
        return resolve_format(path, format) == "chatgpt"
    except InvalidInputError:
        return False


def _export_warning(
    directory: str, root: Path, folder: Path, files: list[Path]
) -> list[IngestWarning]:
    others = [p for p in files if folder in p.parents and p != folder / CHATGPT_EXPORT]
    if not others:
        return []
    reason = (
        f"a ChatGPT export: {CHATGPT_EXPORT} is read, its {len(others)} other files "
        "(account details, pages, images) are left out"
    )
    return [IngestWarning(path=_shown(directory, root, folder), location="file", reason=reason)]


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        found += [Path(folder, n) for n in names if not n.startswith(".")]
    return sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(root).parts)
