"""The ChatGPT export reader: the branch last shown, what is left out and counted, times,
ids, broken trees, auto-detection (a file, an unpacked export in a directory), and the
conversation-at-a-time decoding of large files."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidInputError
from engine.ingest import read_chat_log
from engine.ingest.folders import chat_logs
from engine.ingest.json_list import BadItem, NotAList, json_items
from engine.ingest.readers import resolve_format
from tests.chatgpt_export import A0, LEFT_OUT, SHOWN, at, export, message, tree, write_export


def test_the_shown_branch_is_read_in_order_with_times_roles_and_ids(tmp_path: Path) -> None:
    path = write_export(tmp_path)
    result = read_chat_log(path, format="chatgpt", user_id="ann")

    assert result.errors == []
    assert [(r.source, r.role, r.content, r.ts) for r in result.records] == SHOWN
    assert {r.user_id for r in result.records} == {"ann"}
    assert [r.session_id for r in result.records] == ["conv-a"] * 4 + ["conv-b"] * 3
    assert [r.conversation_id for r in result.records] == ["conv-a"] * 4 + ["conv-b"] * 3
    assert {r.speaker for r in result.records} == {None}  # as ShareGPT: the role says who
    assert result.records[0].metadata == {"title": "Moving to Lisbon"}
    assert not any(r.positional for r in result.records)  # a message id is no place
    assert all(r.exported_id for r in result.records)


def test_what_is_left_out_is_counted_in_one_warning(tmp_path: Path) -> None:
    result = read_chat_log(write_export(tmp_path), format="chatgpt", user_id="ann")

    [warning] = result.warnings
    assert (warning.location, warning.reason) == ("file", LEFT_OUT)


def test_records_are_the_same_on_every_read(tmp_path: Path) -> None:
    path = write_export(tmp_path)
    first = read_chat_log(path, user_id="ann").records
    again = read_chat_log(path, user_id="ann").records
    assert [r.checksum for r in again] == [r.checksum for r in first]
    assert len({r.checksum for r in first}) == len(first)


def test_a_re_export_with_a_new_conversation_first_keeps_every_checksum(tmp_path: Path) -> None:
    old = read_chat_log(write_export(tmp_path / "old"), user_id="ann").records
    newer = copy.deepcopy(export()[1]) | {"id": "conv-c", "conversation_id": "conv-c"}
    newer["mapping"] = tree(
        "c-root", ("c-root", message("c-u1", "user", ["I bought a bike."], 1714700000.0))
    )
    newer["current_node"] = "c-u1"
    new = read_chat_log(write_export(tmp_path / "new", [newer, *export()]), user_id="ann")

    assert [r.checksum for r in new.records[1:]] == [r.checksum for r in old]


def broken(change: Any) -> list[Any]:
    conversations = export()
    change(conversations[0])
    return conversations


def _cycle(c: dict[str, Any]) -> None:
    c["mapping"]["client-created-root"]["parent"] = "a-a2"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda c: c.pop("mapping"), "expected a conversation object with a 'mapping'"),
        (lambda c: c.update(current_node="gone"), "current_node 'gone' is not in the mapping"),
        (lambda c: c.pop("current_node"), "no current_node"),
        (_cycle, "the mapping has a cycle: node 'a-a2' is its own parent"),
        (
            lambda c: c["mapping"]["a-u1"].update(parent="lost"),
            "node 'a-u1' names parent 'lost', not in the mapping",
        ),
    ],
)
def test_a_broken_conversation_is_one_error_and_the_others_read(
    tmp_path: Path, change: Any, reason: str
) -> None:
    path = write_export(tmp_path, broken(change))
    result = read_chat_log(path, format="chatgpt", user_id="ann")

    [error] = result.errors
    assert (error.path, error.location) == (str(path), "record 1")
    assert error.reason.startswith(reason)
    assert f"{path}: record 1: " in str(error)
    assert [r.source for r in result.records] == ["b-u1", "b-a1", "b-u2"]


def test_a_message_without_a_role_or_parts_is_an_error_in_its_place(tmp_path: Path) -> None:
    def change(c: dict[str, Any]) -> None:
        c["mapping"]["a-u1"]["message"]["author"] = {}
        c["mapping"]["a-a1"]["message"]["content"].pop("parts")

    result = read_chat_log(write_export(tmp_path, broken(change)), user_id="ann")

    assert [(e.location, e.reason) for e in result.errors] == [
        ("record 1 message a-u1", "the message has no author.role"),
        ("record 1 message a-a1", "a text message needs a 'parts' list"),
    ]
    assert [r.source for r in result.records] == ["a-u2", "a-a2", "b-u1", "b-a1", "b-u2"]


@pytest.mark.parametrize(
    ("text", "location", "reason"),
    [
        ('{"mapping": {}}', "file", "expected a JSON list of conversations, got dict"),
        ("", "file", "invalid JSON"),
        ('[{"mapping": {}, "current_node": "x"}, {"ti', "record 2", "invalid JSON"),
        ("[1] [2]", "file", "extra data after the list"),
    ],
)
def test_a_file_that_is_no_export_is_named_with_what_is_wrong(
    tmp_path: Path, text: str, location: str, reason: str
) -> None:
    path = tmp_path / "conversations.json"
    path.write_text(text)
    result = read_chat_log(path, format="chatgpt")

    assert result.records == []
    error = result.errors[-1]
    assert (error.path, error.location) == (str(path), location)
    assert error.reason.startswith(reason)


def test_an_unreadable_create_time_is_a_warning_and_the_message_keeps_its_place(
    tmp_path: Path,
) -> None:
    def change(c: dict[str, Any]) -> None:
        c["mapping"]["a-a2"]["message"]["create_time"] = "at tea time"

    path = write_export(tmp_path, broken(change))
    result = read_chat_log(path, user_id="ann")

    [record] = [r for r in result.records if r.source == "a-a2"]
    assert record.ts == at(A0 + 150)  # the time of the message before it: the tool's
    assert [w.location for w in result.warnings] == ["record 1 message a-a2", "file"]
    assert "the message takes the time of the one before it" in result.warnings[0].reason


def test_auto_detects_an_export_file(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export(), indent=2))
    assert resolve_format(path) == "chatgpt"
    assert read_chat_log(path).format == "chatgpt"


def test_a_directory_holding_an_export_reads_its_conversations_only(tmp_path: Path) -> None:
    write_export(tmp_path / "logs" / "chatgpt-2024")
    (tmp_path / "logs" / "notes.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    logs, warnings = chat_logs(str(tmp_path / "logs"), "auto")

    export_dir = str(tmp_path / "logs" / "chatgpt-2024")
    assert logs == {
        f"{export_dir}/conversations.json": "chatgpt",
        str(tmp_path / "logs" / "notes.jsonl"): "openai-jsonl",
    }
    [warning] = warnings
    assert warning.path == export_dir
    assert "conversations.json is read, its 4 other files" in warning.reason


def test_a_format_named_reads_an_export_folder_alike(tmp_path: Path) -> None:
    write_export(tmp_path)
    logs, _ = chat_logs(str(tmp_path), "chatgpt")
    assert logs == {str(tmp_path / "conversations.json"): "chatgpt"}


def test_an_unknown_format_is_still_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as caught:
        read_chat_log(write_export(tmp_path), format="chatgpt-html")
    assert "chatgpt" in str(caught.value)


@pytest.mark.parametrize("cut", [0.6, 0.9])
def test_a_file_cut_short_says_so_at_the_record_it_ends_in(tmp_path: Path, cut: float) -> None:
    path = write_export(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: int(len(text) * cut)])
    result = read_chat_log(path, format="chatgpt", user_id="ann")

    [error] = result.errors
    assert error.location == "record 2"
    assert error.reason.startswith("invalid JSON: ")
    assert error.reason.endswith("; the file ends inside it: cut short?")
    assert "starting at" not in error.reason
    assert [r.source for r in result.records] == ["a-u1", "a-a1", "a-u2", "a-a2"]


# -- json_items: one item at a time -------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize(
    "doc", [[], [1], [1, 22, 333], [{"a": "é" * 40}, [], {"b": [1, {"c": None}]}, "s", 1.5]]
)
@pytest.mark.parametrize("indent", [None, 2])
def test_json_items_cut_anywhere_gives_the_same_items(
    doc: list[Any], chunk: int, indent: int | None
) -> None:
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    assert list(json_items(io.StringIO(text), chunk)) == doc


@pytest.mark.parametrize(
    ("text", "number", "reason"),
    [
        ("[1,]", 2, "invalid JSON: Expecting value"),
        ("[1 2]", 1, "expected ',' or ']' after it, found '2'"),
        ("[1", 1, "expected ',' or ']' after it, found the end of the file"),
        ('["abc', 1, "invalid JSON: Unterminated string"),
        ("[1] x", None, "extra data after the list"),
    ],
)
def test_json_items_names_the_bad_item(text: str, number: int | None, reason: str) -> None:
    with pytest.raises(BadItem) as caught:
        list(json_items(io.StringIO(text), 2))
    assert caught.value.number == number
    assert caught.value.reason.startswith(reason)


def test_json_items_holds_about_one_item_at_a_time() -> None:
    item = {"text": "x" * 1000}
    text = json.dumps([item] * 500)
    handle = io.StringIO(text)
    items = json_items(handle, 4096)
    next(items)
    assert handle.tell() < 8192  # a chunk or two read, not the file
    assert sum(1 for _ in items) == 499
    with pytest.raises(NotAList):
        list(json_items(io.StringIO('{"a": 1}')))


def test_a_byte_order_mark_is_read_and_bytes_that_are_not_utf8_are_named(tmp_path: Path) -> None:
    path = tmp_path / "conversations.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(export()).encode())
    assert len(read_chat_log(path, user_id="ann").records) == len(SHOWN)

    path.write_bytes(json.dumps(export()).encode()[:-2] + b"\xff]")
    [error] = read_chat_log(path, format="chatgpt", user_id="ann").errors
    assert (error.location, error.reason) == ("file", "not valid UTF-8")


def test_a_voice_message_is_read_from_its_transcription(tmp_path: Path) -> None:
    """Voice mode keeps what was said in an `audio_transcription` part beside the audio."""
    voice = [
        {"content_type": "audio_transcription", "text": "I start at the bakery on Monday."},
        {"content_type": "audio_asset_pointer", "asset_pointer": "sediment://file-2"},
    ]
    spoken = copy.deepcopy(export()[1]) | {"id": "conv-v", "conversation_id": "conv-v"}
    spoken["mapping"] = tree(
        "v-root", ("v-root", message("v-u1", "user", voice, 1714700000.0, kind="multimodal_text"))
    )
    spoken["current_node"] = "v-u1"
    result = read_chat_log(write_export(tmp_path, [spoken]), user_id="ann")

    assert [(r.source, r.content) for r in result.records] == [
        ("v-u1", "I start at the bakery on Monday.")
    ]
