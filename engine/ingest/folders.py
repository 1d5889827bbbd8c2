"""A directory given to `ingest`: the chat logs under it.

Every file under the directory, recursively, in sorted path order; files and directories whose
name starts with a dot are left out. With `format="auto"`, a file whose format cannot be told
(a README, a picture) is skipped with a warning; with a format named, every file is read as it.

An export unpacked under the directory is read as one log: a ChatGPT or Claude export (a folder
whose `conversations.json` is such an export, with `format` `"auto"` or the export's) gives its
`conversations.json` only, its other files (`user.json`, `chat.html`, `projects.json`, images)
left out with one warning; a Slack export (a folder holding a `channels.json` list,
with `format` `"auto"` or `"slack"`) is the folder itself, read by the Slack reader.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from engine.errors import InvalidInputError
from engine.ingest.readers import resolve_format
from engine.ingest.report import IngestWarning
from engine.ingest.slack_export import CHANNELS, is_slack_export

CONVERSATIONS = "conversations.json"
# an export whose conversations.json is the log: what it is called, what else it holds
_CONVERSATION_EXPORTS = {
    "chatgpt": ("a ChatGPT export", "account details, pages, images"),
    "claude": ("a Claude export", "account details, projects"),
}


@dataclass(frozen=True, slots=True)
class _Export:
    """An export under the directory: its folder, the log read (a file in it, or the folder
    itself for Slack) and its format."""

    folder: Path
    log: Path
    format: str


def chat_logs(directory: str, format: str) -> tuple[dict[str, str], list[IngestWarning]]:
    """The logs under `directory` (path as shown -> format) and a warning per file skipped.

    Raises:
        InvalidInputError: `format` is unknown, or the directory holds no chat log.
    """
    root = Path(directory)
    if format in ("auto", "slack") and is_slack_export(root):
        return {directory: "slack"}, []
    files = _files(root)
    exports = _exports(files, format)
    logs: dict[str, str] = {}
    skipped: list[IngestWarning] = []
    for found in exports:
        skipped += _export_warning(directory, root, found, files)
    for path in files:
        export = _holding(exports, path)
        if export is not None:
            if export.log in (path, export.folder):  # a Slack export: at its first file
                logs.setdefault(_shown(directory, root, export.log), export.format)
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


def _exports(files: list[Path], format: str) -> list[_Export]:
    """The exports under the directory: folders of a ChatGPT or Claude `conversations.json`,
    and Slack exports."""
    found: list[_Export] = []
    for path in files:
        if path.name == CONVERSATIONS and (kind := _conversations_format(path, format)):
            found.append(_Export(path.parent, path, kind))
        elif path.name == CHANNELS and format in ("auto", "slack") and is_slack_export(path.parent):
            found.append(_Export(path.parent, path.parent, "slack"))
    return found


def _conversations_format(path: Path, format: str) -> str | None:
    if format not in ("auto", *_CONVERSATION_EXPORTS):
        return None
    try:
        kind = resolve_format(path, format)
    except InvalidInputError:
        return None
    return kind if kind in _CONVERSATION_EXPORTS else None


def _holding(exports: list[_Export], path: Path) -> _Export | None:
    """The innermost export `path` is part of, if any."""
    holding = [e for e in exports if e.folder in path.parents]
    return max(holding, key=lambda e: len(e.folder.parts), default=None)


def _export_warning(
    directory: str, root: Path, export: _Export, files: list[Path]
) -> list[IngestWarning]:
    if export.format not in _CONVERSATION_EXPORTS:
        return []  # a Slack export: its reader says what it leaves out
    others = [p for p in files if _holding([export], p) and p != export.log]
    if not others:
        return []
    what, holds = _CONVERSATION_EXPORTS[export.format]
    reason = (
        f"{what}: {CONVERSATIONS} is read, its {len(others)} other files ({holds}) are left out"
    )
    shown = _shown(directory, root, export.folder)
    return [IngestWarning(path=shown, location="file", reason=reason)]


def _files(root: Path) -> list[Path]:
    found: list[Path] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        found += [Path(folder, n) for n in names if not n.startswith(".")]
    return sorted((p for p in found if p.is_file()), key=lambda p: p.relative_to(root).parts)
