"""A Discord channel exported by DiscordChatExporter through `graphmem ingest`: recognised by
its content, stored with its speakers and the export's ids, searchable, and a rerun of a later
export stores only what is new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.ingest_runs import found_first, ingest_twice

ANN = {"id": "11", "name": "ann_lee", "nickname": "Ann", "isBot": False}
BOB = {"id": "22", "name": "bob", "nickname": None, "isBot": False}
MESSAGES = [
    {"id": "101", "type": "Default", "timestamp": "2023-12-30T21:15:03+00:00",
     "content": "I moved to Lisbon last week!", "author": ANN},
    {"id": "102", "type": "Default", "timestamp": "2023-12-30T21:16:00+00:00",
     "content": "ok", "author": BOB},
    {"id": "103", "type": "Default", "timestamp": "2023-12-30T21:16:30+00:00",
     "content": "ok", "author": BOB},
]  # fmt: skip
LATER = {"id": "104", "type": "Default", "timestamp": "2023-12-31T10:00:00+00:00",
         "content": "My sister Eva works at the Gulbenkian museum.", "author": BOB}  # fmt: skip


def _export(path: Path, messages: list[dict[str, object]]) -> Path:
    channel = {"id": "555", "type": "GuildTextChat", "name": "general"}
    document = {"guild": {"id": "1", "name": "friends"}, "channel": channel, "messages": messages}
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def test_a_discord_channel_is_ingested_once_and_searchable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _export(tmp_path / "friends - general [555].json", MESSAGES)

    first, again = ingest_twice(path, lambda: _export(path, [*MESSAGES, LATER]), capsys)

    assert first["formats"] == {str(path): "discord"}
    assert (first["messages_added"], again["messages_added"]) == (3, 1)
    found, stored = found_first(path, "Where did Ann move?")
    assert (found.text, found.speaker, found.source) == (
        "I moved to Lisbon last week!",
        "Ann",
        "555:101",
    )
    assert stored == 4
