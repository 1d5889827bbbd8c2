"""A directory given to `ingest`: the chat logs under it.

Every file under the directory, recursively, in sorted path order; files and directories whose
name starts with a dot are left out. With `format="auto"`, a file whose format cannot be told
(a README, a picture) is skipped with a warning; with a format named, every file is read as it.
"""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import InvalidInputError
from engine.ingest.readers import resolve_format
from engine.ingest.report import IngestWarning


def chat_logs(directory: str, format: str) -> tuple[dict[str, str], list[IngestWarning]]:
    """The logs under `directory` (path as shown -> format) and a warning per file skipped.

    Raises:
        InvalidInputError: `format` is unknown, or the directory holds no chat log.
    """
    root = Path(directory)
    logs: dict[str, str] = {}
    skipped: list[IngestWarning] = []
    for path in _files(root):
        shown = os.path.join(directory, os.fspath(path.relative_to(root)))
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


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        found += [Path(folder, n) for n in names if not n.startswith(".")]
    return sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(root).parts)
