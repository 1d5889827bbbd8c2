"""The Claude export reader: messages in order with their roles, times and conversations, the
blocks and messages left out and counted, stable ids, faults located, and auto-detection (a
file, told from a ChatGPT export; an unpacked export in a directory)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from engine.ingest import read_chat_log
from engine.ingest.folders import chat_logs
from engine.ingest.readers import resolve_format
from tests import chatgpt_export
from tests.claude_export import LEFT_OUT, SHOWN, export, message, text, write_export


def read(path: Path, **options: Any) -> Any:
    return read_chat_log(path, **({"format": "claude", "user_id": "ann"} | options))


def test_the_messages_are_read_in_order_with_roles_times_and_conversations(
    tmp_path: Path,
) -> None:
    result = read(write_export(tmp_path))

    assert result.errors == []
    assert [(r.source, r.role, r.content, r.ts, r.session_id) for r in result.records] == SHOWN
    assert [r.conversation_id for r in result.records] == [s[4] for s in SHOWN]
    assert {r.user_id for r in result.records} == {"ann"}
    assert {r.speaker for r in result.records} == {None}  # as ChatGPT: the role says who
    assert [r.metadata for r in result.records] == [{"title": "Trip to Kyoto"}] * 4 + [{}]
    assert not any(r.positional for r in result.records)  # a message uuid is no place
    assert all(r.exported_id for r in result.records)


def test_blocks_and_messages_without_text_are_counted_in_one_warning(tmp_path: Path) -> None:
    [warning] = read(write_export(tmp_path)).warnings
    assert (warning.location, warning.reason) == ("file", LEFT_OUT)


def test_records_keep_their_checksums_when_a_newer_export_lists_more(tmp_path: Path) -> None:
    old = read(write_export(tmp_path / "old")).records
    assert [r.checksum for r in read(write_export(tmp_path / "old")).records] == [
        r.checksum for r in old
    ]
    newer = copy.deepcopy(export()[1]) | {"uuid": "conv-new", "name": "Bikes"}
    newer["chat_messages"] = [message("n-1", "human", [text("I bought a bike.")], None)]
    new = read(write_export(tmp_path / "new", [newer, *export()])).records

    assert [r.checksum for r in new[1:]] == [r.checksum for r in old]
    assert len({r.checksum for r in old}) == len(old)


def test_a_conversation_without_messages_is_one_error_and_the_others_read(
    tmp_path: Path,
) -> None:
    conversations = export()
    conversations[0].pop("chat_messages")
    path = write_export(tmp_path, [*conversations, {"uuid": "empty", "chat_messages": []}])
    result = read(path)

    [error] = result.errors
    assert str(error) == (
        f"{path}: record 1: expected a conversation object with a 'chat_messages' list"
    )
    assert [r.source for r in result.records] == ["d-1"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"sender": "system"}, "unknown sender 'system': expected 'human' or 'assistant'"),
        ({"sender": None}, "unknown sender None: expected 'human' or 'assistant'"),
        ({"content": [{"type": "text", "text": 42}]}, "a text block's text must be a string"),
        ({"uuid": {"id": 1}}, "uuid must be a string, got dict"),
    ],
)
def test_a_message_that_cannot_be_read_is_an_error_in_its_place(
    tmp_path: Path, change: dict[str, Any], reason: str
) -> None:
    conversations = export()
    conversations[0]["chat_messages"][1] |= change
    result = read(write_export(tmp_path, conversations))

    [error] = result.errors
    assert error.location == "record 1 message 2"
    assert error.reason.startswith(reason)
    assert [r.source for r in result.records] == ["k-1", "k-3", "k-4", "d-1"]


@pytest.mark.parametrize(
    ("body", "location", "reason"),
    [
        ('{"chat_messages": []}', "file", "expected a JSON list of conversations, got dict"),
        ('[{"uuid": "a", "chat_messages": []}, {"uu', "record 2", "invalid JSON"),
    ],
)
def test_a_file_that_is_no_export_is_named_with_what_is_wrong(
    tmp_path: Path, body: str, location: str, reason: str
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(body)
    [error] = read(path).errors
    assert (error.path, error.location) == (str(path), location)
    assert error.reason.startswith(reason)


def test_an_unreadable_time_takes_the_one_before_and_a_missing_uuid_is_placed(
    tmp_path: Path,
) -> None:
    conversations = export()
    conversations[0]["chat_messages"][3]["created_at"] = "at tea time"
    conversations[0]["chat_messages"][3].pop("uuid")
    result = read(write_export(tmp_path, conversations))

    record = result.records[3]
    assert (record.source, record.ts) == ("conv-kyoto#4", SHOWN[2][3])
    reasons = [w.reason for w in result.warnings if w.location == "record 1 message 4"]
    assert "the message takes the time of the one before it" in reasons[0]
    assert reasons[1] == "no uuid: its source is 'conv-kyoto#4'"


def test_auto_tells_a_claude_export_from_a_chatgpt_one(tmp_path: Path) -> None:
    claude = tmp_path / "claude.json"
    claude.write_text(json.dumps(export(), indent=2))
    chatgpt = tmp_path / "chatgpt.json"
    chatgpt.write_text(json.dumps(chatgpt_export.export()))
    assert (resolve_format(claude), resolve_format(chatgpt)) == ("claude", "chatgpt")
    assert read_chat_log(claude, user_id="ann").format == "claude"

    # a tool's input with a "mapping" key comes after the conversation's chat_messages
    conversations = export()
    tool = {"type": "tool_use", "name": "x", "input": {"mapping": {}}}
    conversations[0]["chat_messages"][0]["content"].insert(0, tool)
    claude.write_text(json.dumps(conversations))
    assert resolve_format(claude) == "claude"


def test_a_directory_reads_each_export_s_conversations_only(tmp_path: Path) -> None:
    logs_dir = tmp_path / "logs"
    write_export(logs_dir / "claude-2024")
    chatgpt_export.write_export(logs_dir / "chatgpt-2024")
    logs, warnings = chat_logs(str(logs_dir), "auto")

    assert logs == {
        str(logs_dir / "chatgpt-2024" / "conversations.json"): "chatgpt",
        str(logs_dir / "claude-2024" / "conversations.json"): "claude",
    }
    assert [(w.path, w.reason.partition(":")[0]) for w in warnings] == [
        (str(logs_dir / "chatgpt-2024"), "a ChatGPT export"),
        (str(logs_dir / "claude-2024"), "a Claude export"),
    ]
    assert "its 2 other files (account details, projects) are left out" in warnings[1].reason
    claude_only, _ = chat_logs(str(logs_dir / "claude-2024"), "claude")
    assert claude_only == {str(logs_dir / "claude-2024" / "conversations.json"): "claude"}


def test_each_export_read_as_the_other_says_which_format_it_is(tmp_path: Path) -> None:
    """A Claude export read with --format chatgpt (or the other way round) failed on every
    conversation with "no mapping" and no word of the format that reads it."""
    claude = read_chat_log(write_export(tmp_path / "c"), format="chatgpt", user_id="ann")
    chatgpt = read_chat_log(
        chatgpt_export.write_export(tmp_path / "g"), format="claude", user_id="ann"
    )

    assert claude.records == [] and chatgpt.records == []
    assert all("a Claude export: read it with --format claude" in e.reason for e in claude.errors)
    assert all(
        "a ChatGPT export: read it with --format chatgpt" in e.reason for e in chatgpt.errors
    )
    assert claude.errors and chatgpt.errors
