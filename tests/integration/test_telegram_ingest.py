"""A Telegram Desktop export through `graphmem ingest`: recognised by its content, stored with
its speakers and the export's ids, searchable, and a rerun of a later export stores only what
is new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ingest_runs import found_first, ingest_twice

MESSAGES = [
    {"id": 1, "type": "message", "date_unixtime": "1703970903", "from": "Ann", "from_id": "u1",
     "text": "I moved to Lisbon last week!"},
    {"id": 2, "type": "message", "date_unixtime": "1703970960", "from": "Bob", "from_id": "u2",
     "text": "ok"},
    {"id": 3, "type": "message", "date_unixtime": "1703971000", "from": "Bob", "from_id": "u2",
     "text": "ok"},
]  # fmt: skip
LATER = {"id": 4, "type": "message", "date_unixtime": "1704000000", "from": "Bob",
         "from_id": "u2", "text": "My sister Eva works at the Gulbenkian museum."}  # fmt: skip


def _export(path: Path, messages: list[dict[str, object]]) -> Path:
    chat = {"name": "Bob", "type": "personal_chat", "id": 4242, "messages": messages}
    path.write_text(json.dumps(chat, indent=1), encoding="utf-8")
    return path


def test_a_telegram_chat_is_ingested_once_and_searchable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _export(tmp_path / "result.json", MESSAGES)

    first, again = ingest_twice(path, lambda: _export(path, [*MESSAGES, LATER]), capsys)

    assert first["formats"] == {str(path): "telegram"}
    assert (first["messages_added"], again["messages_added"]) == (3, 1)
    found, stored = found_first(path, "Where did Ann move?")
    assert (found.text, found.speaker, found.source) == (
        "I moved to Lisbon last week!",
        "Ann",
        "4242:1",
    )
    assert stored == 4
