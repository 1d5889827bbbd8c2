"""The Discord reader: a DiscordChatExporter channel export, what is left out (system messages,
bots, attachments alone), replies, nicknames, and the export's own ids and times. No store is
needed: the files are only read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.ingest import read_chat_log
from engine.ingest.chat_records import ReadResult

ANN = {"id": "11", "name": "ann_lee", "discriminator": "0000", "nickname": "Ann", "isBot": False}
BOB = {"id": "22", "name": "bob", "discriminator": "0000", "nickname": None, "isBot": False}
BOT = {"id": "33", "name": "MEE6", "discriminator": "4876", "nickname": None, "isBot": True}
MESSAGES: list[dict[str, Any]] = [
    {"id": "100", "type": "GuildMemberJoin", "timestamp": "2023-12-30T21:00:00+00:00",
     "content": "", "author": BOB},
    {"id": "101", "type": "Default", "timestamp": "2023-12-30T21:15:03.123+01:00",
     "content": "I moved to Lisbon last week!", "author": ANN, "attachments": []},
    {"id": "102", "type": "Reply", "timestamp": "2023-12-30T21:16:00+01:00",
     "content": "Nice, @Ann!", "author": BOB, "reference": {"messageId": "101"}},
    {"id": "103", "type": "Default", "timestamp": "2023-12-30T21:17:00+01:00", "content": "",
     "author": BOB, "attachments": [{"id": "9", "url": "photo.png"}]},
    {"id": "104", "type": "Default", "timestamp": "2023-12-30T21:18:00+01:00",
     "content": "GG bob, you just advanced to level 2!", "author": BOT},
]  # fmt: skip
EXPORT = {
    "guild": {"id": "1", "name": "Lisbon friends"},
    "channel": {"id": "555", "type": "GuildTextChat", "name": "general"},
    "messages": MESSAGES,
    "messageCount": len(MESSAGES),
}


def _read(tmp_path: Path, document: object) -> ReadResult:
    path = tmp_path / "Lisbon friends - general [555].json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return read_chat_log(path, user_id="ann")


def test_a_channels_export_keeps_what_people_wrote(tmp_path: Path) -> None:
    result = _read(tmp_path, EXPORT)

    assert result.format == "discord" and result.errors == []
    rows = [(r.source, r.speaker, r.content, r.ts.isoformat() if r.ts else "", r.metadata)
            for r in result.records]  # fmt: skip
    channel = {"channel": "general", "guild": "Lisbon friends"}
    assert rows == [
        ("555:101", "Ann", "I moved to Lisbon last week!", "2023-12-30T20:15:03.123000+00:00",
         channel),
        ("555:102", "bob", "Nice, @Ann!", "2023-12-30T20:16:00+00:00",
         channel | {"reply_to": "101"}),
    ]  # fmt: skip
    first = result.records[0]
    assert (first.user_id, first.session_id, first.role, first.exported_id) == (
        "ann",
        "555",
        "user",
        True,
    )
    assert [w.reason for w in result.warnings] == [
        "2 messages read from 1 channel; left out 3: 1 GuildMemberJoin, 1 with only "
        "attachments, 1 from bots"
    ]


def test_a_message_with_no_author_is_an_error_of_its_own(tmp_path: Path) -> None:
    lost = {"id": "9", "type": "Default", "timestamp": "2023-12-30T21:00:00Z", "content": "hi"}
    result = _read(tmp_path, {**EXPORT, "messages": [lost, MESSAGES[1]]})

    assert [(e.location, e.reason) for e in result.errors] == [
        ("message 1", "no author: who wrote it cannot be told")
    ]
    assert [r.source for r in result.records] == ["555:101"]


def test_json_that_is_no_channel_export_says_what_was_expected(tmp_path: Path) -> None:
    result = _read(tmp_path, {"guild": {}, "channel": {}})
    assert [e.reason for e in result.errors] == [
        "expected a DiscordChatExporter channel: an object with 'channel' and 'messages'"
    ]
