"""The Telegram reader: one chat's `result.json` and a whole account's export, the text's
marked-up parts, forwarded messages, what is left out, and the export's own ids and times. No
store is needed: the files are only read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.ingest import read_chat_log
from engine.ingest.chat_records import ReadResult

MESSAGES: list[dict[str, Any]] = [
    {"id": 1, "type": "service", "date": "2023-12-30T21:00:00", "date_unixtime": "1703970000",
     "actor": "Ann Lee", "action": "create_group"},
    {"id": 2, "type": "message", "date": "2023-12-30T21:15:03", "date_unixtime": "1703970903",
     "from": "Ann Lee", "from_id": "user1", "text": "I moved to Lisbon last week!"},
    {"id": 3, "type": "message", "date": "2023-12-30T21:16:00", "date_unixtime": "1703970960",
     "from": "Bob", "from_id": "user2", "reply_to_message_id": 2,
     "text": ["Nice! See ", {"type": "text_link", "text": "this guide", "href": "https://x.org"},
              " and ", {"type": "mention", "text": "@ann"}]},
    {"id": 4, "type": "message", "date": "2023-12-30T21:17:00", "date_unixtime": "1703971020",
     "from": "Bob", "from_id": "user2", "photo": "photos/photo_1.jpg", "text": ""},
    {"id": 5, "type": "message", "date": "2023-12-30T21:18:00", "date_unixtime": "1703971080",
     "from": "Bob", "from_id": "user2", "forwarded_from": "Eva",
     "text": "I work at the Gulbenkian museum."},
]  # fmt: skip
CHAT = {"name": "Ann Lee", "type": "personal_chat", "id": 4242, "messages": MESSAGES}


def _read(tmp_path: Path, document: object) -> ReadResult:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return read_chat_log(path, user_id="bob")


def test_one_chats_export_keeps_what_people_wrote(tmp_path: Path) -> None:
    result = _read(tmp_path, CHAT)

    assert result.format == "telegram" and result.errors == []
    rows = [(r.source, r.speaker, r.content, r.ts.isoformat() if r.ts else "", r.metadata)
            for r in result.records]  # fmt: skip
    assert rows == [
        ("4242:2", "Ann Lee", "I moved to Lisbon last week!", "2023-12-30T21:15:03+00:00",
         {"chat": "Ann Lee"}),
        ("4242:3", "Bob", "Nice! See this guide (https://x.org) and @ann",
         "2023-12-30T21:16:00+00:00", {"chat": "Ann Lee", "reply_to": "2"}),
        ("4242:5", "Eva", "I work at the Gulbenkian museum.", "2023-12-30T21:18:00+00:00",
         {"chat": "Ann Lee", "forwarded_by": "Bob"}),
    ]  # fmt: skip
    first = result.records[0]
    assert (first.user_id, first.session_id, first.role, first.exported_id) == (
        "bob",
        "4242",
        "user",
        True,
    )
    assert [w.reason for w in result.warnings] == [
        "3 messages read from 1 chat; left out 2: 1 service, 1 media"
    ]


def test_an_accounts_export_reads_every_chat(tmp_path: Path) -> None:
    other = {"name": "Family", "type": "private_group", "id": 77, "messages": MESSAGES[1:2]}
    account = {
        "about": "Here is the data you requested.",
        "personal_information": {"first_name": "Bob"},
        "chats": {"about": "...", "list": [CHAT, other, {"name": "broken"}]},
        "left_chats": {"about": "...", "list": []},
    }

    result = _read(tmp_path, account)

    assert [r.source for r in result.records] == ["4242:2", "4242:3", "4242:5", "77:2"]
    assert [(e.location, e.reason) for e in result.errors] == [
        ("chats 3", "expected a chat: an object with a 'messages' list")
    ]


def test_a_message_with_no_sender_is_an_error_of_its_own(tmp_path: Path) -> None:
    lost = {"id": 9, "type": "message", "date_unixtime": "1703971080", "text": "hello"}
    result = _read(tmp_path, {**CHAT, "messages": [lost, *MESSAGES[1:2]]})

    assert [(e.location, e.reason) for e in result.errors] == [
        ("file message 1", "no sender ('from' or 'from_id'): who wrote it cannot be told")
    ]
    assert [r.source for r in result.records] == ["4242:2"]


def test_json_that_is_no_telegram_export_says_what_was_expected(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}), encoding="utf-8")

    result = read_chat_log(path, format="telegram", user_id="bob")

    assert [e.reason for e in result.errors] == [
        "expected a Telegram export: a chat with 'messages', or an account's 'chats'"
    ]


def test_an_export_older_than_unix_times_is_recognised(tmp_path: Path) -> None:
    old = [{k: v for k, v in m.items() if k != "date_unixtime"} for m in MESSAGES]
    result = _read(tmp_path, CHAT | {"messages": old})

    assert result.format == "telegram"
    assert [r.source for r in result.records] == ["4242:2", "4242:3", "4242:5"]


def test_a_location_alone_is_media_left_out(tmp_path: Path) -> None:
    place = {"latitude": 38.7, "longitude": -9.1}
    shared = {"id": 6, "type": "message", "date_unixtime": "1703971100", "from": "Bob",
              "from_id": "user2", "location_information": place, "text": ""}  # fmt: skip
    result = _read(tmp_path, {**CHAT, "messages": [MESSAGES[1], shared]})
    assert [w.reason for w in result.warnings] == [
        "1 message read from 1 chat; left out 1: 1 media"
    ]
