"""A chat export names no graphmem user: WhatsApp, Telegram and Discord exports, zipped or not,
written with `users_from_file=True` are refused message by message (SECURITY.md, "An export
reads only itself"), as Slack's, ChatGPT's and Claude's are."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.memory import Memory

WHATSAPP = "12/30/23, 9:15 PM - Ann: I moved to Lisbon.\n12/30/23, 9:16 PM - Bob: ok\n"
TELEGRAM = {
    "name": "Bob", "type": "personal_chat", "id": 1,
    "messages": [{"id": 1, "type": "message", "date_unixtime": "1703970903", "from": "Ann",
                  "text": "I moved to Lisbon."}],
}  # fmt: skip
DISCORD = {
    "guild": {"id": "1", "name": "g"}, "channel": {"id": "5", "name": "general"},
    "messages": [{"id": "9", "type": "Default", "timestamp": "2023-12-30T21:15:03+00:00",
                  "content": "I moved to Lisbon.", "author": {"id": "2", "name": "ann"}}],
}  # fmt: skip


def _whatsapp(folder: Path) -> Path:
    path = folder / "WhatsApp Chat with Bob.txt"
    path.write_text(WHATSAPP, encoding="utf-8")
    return path


def _zipped(folder: Path) -> Path:
    path = folder / "WhatsApp Chat - Bob.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("_chat.txt", WHATSAPP)
    return path


def _json(name: str, document: object) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        path = folder / name
        path.write_text(json.dumps(document, indent=1), encoding="utf-8")
        return path

    return write


EXPORTS = {
    "whatsapp": _whatsapp,
    "whatsapp zipped": _zipped,
    "telegram": _json("result.json", TELEGRAM),
    "discord": _json("g - general [5].json", DISCORD),
}


@pytest.mark.parametrize("write", EXPORTS.values(), ids=list(EXPORTS))
def test_an_export_names_no_user(
    quiet_memory: Memory, tmp_path: Path, write: Callable[[Path], Path]
) -> None:
    report = quiet_memory.ingest(write(tmp_path), users_from_file=True, dry_run=True)
    assert report.messages_pending == 0 and report.errors
    assert {e.reason for e in report.errors} == {"the record names no user; pass user_id= (--user)"}
