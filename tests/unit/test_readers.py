"""Chat-log readers: every format, auto-detection, bad records, checksums, the real LoCoMo file."""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import tempfile
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InvalidInputError
from engine.ingest import ChatRecord, ReadError, iter_chat_log, load_locomo_qa, read_chat_log
from engine.ingest.chat_records import ReadResult, ReadWarning, normalize_evidence
from engine.ingest.readers import parse_timestamp, resolve_format
from engine.ingest.sources import collect
from tests.chatgpt_export import export

LOCOMO = Path("/work/shared/data/locomo/locomo10.json")
needs_locomo = pytest.mark.skipif(not LOCOMO.is_file(), reason=f"{LOCOMO} is not present")


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def jsonl(tmp_path: Path, *rows: Any, name: str = "chat.jsonl") -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    return write(tmp_path, name, "\n".join(lines) + "\n")


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


# -- openai-jsonl --------------------------------------------------------------------------------


def test_jsonl_one_message_per_line(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {"role": "user", "content": "I moved to Lisbon.", "user_id": "u1", "session_id": "s1",
         "timestamp": "2024-03-01T10:00:00Z"},
        {"role": "assistant", "content": "Nice!", "user_id": "u1", "conversation_id": "c9",
         "ts": 1709287260},
        {"role": "User", "content": "Yes.", "user": 7, "created_at": "2024-03-01 10:02:00"},
    )  # fmt: skip
    result = read_chat_log(path, format="openai-jsonl")
    first, second, third = result.records
    assert result.errors == []
    assert result.format == "openai-jsonl"
    assert (first.user_id, first.session_id, first.role) == ("u1", "s1", "user")
    assert first.ts == at(2024, 3, 1, 10, 0)
    assert first.source == "chat.jsonl:1"
    assert (second.session_id, second.conversation_id) == ("c9", "c9")
    assert second.ts == at(2024, 3, 1, 10, 1)
    assert (third.role, third.user_id, third.ts) == ("user", "7", at(2024, 3, 1, 10, 2))


def test_jsonl_one_conversation_per_line(tmp_path: Path) -> None:
    conversation = {
        "user": "alice", "conversation_id": "conv-1", "timestamp": "2024-01-02T03:04:05+01:00",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "My cat is Tom.", "name": "Alice"},
            {"role": "assistant", "content": "Noted.", "timestamp": 0},
        ],
    }  # fmt: skip
    result = read_chat_log(jsonl(tmp_path, conversation))
    system, user, assistant = result.records
    assert result.errors == []
    assert {r.user_id for r in result.records} == {"alice"}
    assert {(r.session_id, r.conversation_id) for r in result.records} == {("conv-1", "conv-1")}
    assert [r.source for r in result.records] == [
        "chat.jsonl:1#1",
        "chat.jsonl:1#2",
        "chat.jsonl:1#3",
    ]
    assert system.ts == at(2024, 1, 2, 2, 4, 5)
    assert user.ts == at(2024, 1, 2, 2, 4, 6)  # one second after the previous message
    assert user.speaker == "Alice"
    assert assistant.ts == at(1970, 1, 1)  # a message's own time wins


def test_user_id_argument_overrides_the_file(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"role": "user", "content": "hi", "user_id": "u1"})
    result = read_chat_log(path, user_id="forced")
    assert [r.user_id for r in result.records] == ["forced"]


def test_jsonl_reads_invalid_utf8_and_bom_lines(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    good = json.dumps({"role": "user", "content": "ok"}).encode()
    path.write_bytes(
        b"\xef\xbb\xbf" + good + b"\n" + b'{"role": "user", "content": "\xff"}\n' + good
    )
    result = read_chat_log(path)
    assert [r.source for r in result.records] == ["chat.jsonl:1", "chat.jsonl:3"]
    assert [(e.location, e.reason) for e in result.errors] == [("line 2", "not valid UTF-8")]


# -- bad records ---------------------------------------------------------------------------------

BAD_JSONL_LINES = [
    ("{not json", "invalid JSON"),
    ('{"role": "user"}', "content is missing"),
    ('{"role": "user", "content": null}', "content is missing"),
    ('{"role": "user", "content": ["a", "b"]}', "content[0] must be an object such as"),
    ('{"role": "user", "content": [{"type": "image_url"}]}', "no text part (its parts: image_url)"),
    ('{"role": "user", "content": 3}', "content must be a string, got int"),
    ('{"role": "wizard", "content": "hi"}', "unknown role 'wizard'"),
    ('{"content": "hi"}', "role is missing"),
    ('{"role": "user", "content": "   "}', "content is empty"),
    ('{"role": "user", "content": ""}', "content is empty"),
    ('{"role": "user", "content": "hi", "user_id": {"a": 1}}', "user_id must be a string"),
    ('["role", "user"]', "expected a JSON object, got list"),
    ('{"messages": "hi"}', "messages must be a non-empty list"),
    ('{"messages": []}', "messages must be a non-empty list"),
]


@pytest.mark.parametrize(("line", "reason"), BAD_JSONL_LINES)
def test_jsonl_bad_record_is_reported_and_the_rest_reads(
    tmp_path: Path, line: str, reason: str
) -> None:
    path = jsonl(
        tmp_path, {"role": "user", "content": "one"}, line, {"role": "user", "content": "three"}
    )
    result = read_chat_log(path)
    [error] = result.errors
    assert [r.content for r in result.records] == ["one", "three"]
    assert (error.path, error.location) == (str(path), "line 2")
    assert reason in error.reason
    assert str(path) in str(error)


@pytest.mark.parametrize(
    ("stamp", "reason"),
    [
        ('"yesterday"', "unparseable timestamp 'yesterday'"),
        ("1e300", "out of range"),
        ("true", "unparseable timestamp True"),
        ('"2023-05-08 13:56 EST"', "unknown time zone 'EST'"),
        ('"8 May"', "no full date"),
    ],
)
def test_jsonl_unreadable_time_is_a_warning_and_the_message_is_kept_in_order(
    tmp_path: Path, stamp: str, reason: str
) -> None:
    path = jsonl(
        tmp_path,
        {"role": "user", "content": "one", "timestamp": "2024-03-01T10:00:00Z"},
        f'{{"role": "user", "content": "two", "timestamp": {stamp}}}',
        {"role": "user", "content": "three", "timestamp": "2024-03-01T10:02:00Z"},
    )
    result = read_chat_log(path)
    [warning] = result.warnings
    assert result.errors == []
    assert [(r.content, r.ts is None) for r in result.records] == [
        ("one", False), ("two", True), ("three", False),
    ]  # fmt: skip
    assert (warning.path, warning.location) == (str(path), "line 2")
    assert reason in warning.reason and "kept without a time" in warning.reason


def test_jsonl_conversation_with_an_unreadable_time_keeps_its_messages(tmp_path: Path) -> None:
    line = {"messages": [{"role": "user", "content": "a"}], "timestamp": "x"}
    result = read_chat_log(jsonl(tmp_path, line))
    [warning] = result.warnings
    assert [(r.content, r.ts) for r in result.records] == [("a", None)]
    assert (warning.location, result.errors) == ("line 1", [])
    assert warning.reason.startswith("unparseable timestamp 'x'")


def test_jsonl_name_of_another_type_is_a_warning(tmp_path: Path) -> None:
    result = read_chat_log(jsonl(tmp_path, {"role": "user", "content": "hi", "name": {"a": 1}}))
    [record], [warning] = result.records, result.warnings
    assert (record.content, record.speaker) == ("hi", None)
    assert (
        warning.reason
        == "speaker must be a string, got dict; the message is kept without a speaker"
    )


def test_jsonl_content_parts_are_read_for_their_text(tmp_path: Path) -> None:
    """OpenAI content parts, as `add` reads them: the text parts, a part of another type named
    in a warning."""
    parts = [
        {"type": "text", "text": "I live in Oslo."},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}},
        {"type": "text", "text": "I work in Bergen."},
    ]
    result = read_chat_log(jsonl(tmp_path, {"role": "user", "content": parts}))
    [record], [warning] = result.records, result.warnings
    assert record.content == "I live in Oslo.\nI work in Bergen."
    assert (warning.location, warning.reason) == (
        "line 1",
        "its image_url part is left out (only text is read)",
    )


def test_jsonl_bad_message_inside_a_conversation(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "a"}, "oops", {"role": "user", "content": 5}]
    result = read_chat_log(jsonl(tmp_path, {"messages": messages}))
    assert [r.content for r in result.records] == ["a"]
    assert [e.location for e in result.errors] == ["line 1 message 2", "line 1 message 3"]


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    result = read_chat_log(jsonl(tmp_path, {"role": "user", "content": "a"}, "", "   "))
    assert (len(result.records), result.errors) == (1, [])


# -- sharegpt ------------------------------------------------------------------------------------


def sharegpt_doc() -> list[dict[str, Any]]:
    return [
        {"id": "abc", "conversations": [
            {"from": "system", "value": "You help."},
            {"from": "human", "value": "Where is Porto?"},
            {"from": "gpt", "value": "In Portugal."},
        ]},
        {"id": 42, "conversations": [{"from": "human", "value": "Hi"}]},
    ]  # fmt: skip


def test_sharegpt_maps_roles_and_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "share.json", json.dumps(sharegpt_doc()))
    result = read_chat_log(path, format="sharegpt")
    assert result.errors == []
    assert [r.role for r in result.records] == ["system", "user", "assistant", "user"]
    assert [r.conversation_id for r in result.records] == ["abc", "abc", "abc", "42"]
    assert [r.session_id for r in result.records] == ["abc", "abc", "abc", "42"]
    assert result.records[2].source == "share.json:1#3"


def test_sharegpt_bad_records(tmp_path: Path) -> None:
    doc: list[Any] = sharegpt_doc()
    doc[0]["conversations"][1] = {"from": "robot", "value": "beep"}
    doc[0]["conversations"][2] = {"from": "gpt", "value": ""}
    doc += [
        "not a conversation",
        {"id": "x", "conversations": []},
        {"id": [1], "conversations": [{}]},
    ]
    result = read_chat_log(write(tmp_path, "share.json", json.dumps(doc)), format="sharegpt")
    assert [r.content for r in result.records] == ["You help.", "Hi"]
    assert [(e.location, e.reason) for e in result.errors] == [
        ("record 1 message 2", "unknown role 'robot' in 'from'"),
        ("record 1 message 3", "content is empty"),
        ("record 3", "expected an object with a non-empty 'conversations' list"),
        ("record 4", "expected an object with a non-empty 'conversations' list"),
        ("record 5", "id must be a string, got list"),
    ]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"conversations": []}', "expected a JSON list"),
        ("[{]", "invalid JSON"),
        ("", "invalid JSON"),
    ],
)
def test_invalid_json_file_gives_one_error(tmp_path: Path, text: str, reason: str) -> None:
    path = write(tmp_path, "share.json", text)
    for fmt in ("sharegpt", "locomo"):
        result = read_chat_log(path, format=fmt)
        [error] = result.errors
        assert result.records == []
        assert (error.path, error.location) == (str(path), "file")
        assert reason in error.reason


# -- csv -----------------------------------------------------------------------------------------


def test_csv_columns_timestamps_and_extra_columns(tmp_path: Path) -> None:
    text = (
        "\ufeffUser,Session,role,content,timestamp,mood\r\n"
        'u1,s1,user,"Hello, world",2024-05-01T12:00:00,happy\r\n'
        'u1,s1,assistant,"two\nlines",1714564860,\r\n'
        "u2,,user,hey,,\r\n"
    )
    result = read_chat_log(write(tmp_path, "log.csv", text))
    first, second, third = result.records
    assert result.format == "csv"
    assert result.errors == []
    assert (first.user_id, first.session_id, first.content) == ("u1", "s1", "Hello, world")
    assert first.ts == at(2024, 5, 1, 12)
    assert first.metadata == {"mood": "happy"}
    assert (second.content, second.ts, second.metadata) == ("two\nlines", at(2024, 5, 1, 12, 1), {})
    assert (third.session_id, third.ts, third.source) == (None, None, "log.csv:5")


def test_csv_bad_rows(tmp_path: Path) -> None:
    text = (
        "user_id,session_id,role,content,timestamp\n"
        "u,s,user,fine,\n"
        "u,s,robot,x,\n"
        "u,s,user,,\n"
        "u,s,user,x,not-a-time\n"
        "u,s,user,x\n"
        "u,s,user,also fine,1714564860.5\n"
    )
    result = read_chat_log(write(tmp_path, "log.csv", text), format="csv")
    assert [r.content for r in result.records] == ["fine", "x", "also fine"]
    assert [r.ts is None for r in result.records] == [True, True, False]
    assert [e.location for e in result.errors] == ["line 3", "line 4", "line 6"]
    assert [e.reason.split(" ")[0] for e in result.errors] == ["unknown", "content", "the"]
    assert [(w.location, w.reason.split(" ")[0]) for w in result.warnings] == [
        ("line 5", "unparseable")
    ]


def test_csv_without_required_columns_gives_one_error(tmp_path: Path) -> None:
    result = read_chat_log(write(tmp_path, "log.csv", "user,text\nu,hello\n"))
    [error] = result.errors
    assert (result.records, error.location) == ([], "file")
    assert "'role' and 'content'" in error.reason


def test_csv_oversized_field_is_an_error_and_reading_goes_on(tmp_path: Path) -> None:
    text = f"role,content\nuser,a\nuser,{'x' * 200_000}\nuser,d\n"
    result = read_chat_log(write(tmp_path, "log.csv", text))
    [error] = result.errors
    assert [r.content for r in result.records] == ["a", "d"]
    assert error.location == "line 3"
    assert error.reason.startswith("bad CSV: field larger than field limit")


# -- locomo (synthetic) --------------------------------------------------------------------------


def small_locomo() -> list[dict[str, Any]]:
    turns = [
        {"speaker": "Ann", "dia_id": "D2:1", "text": "I adopted a dog.", "blip_caption": "a dog"},
        {"speaker": "Bob", "dia_id": "D2:2", "text": "Congrats!", "img_url": ["http://x"]},
    ]
    return [{
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_10": [{"speaker": "Ann", "dia_id": "D10:1", "text": "Later."}],
            "session_10_date_time": "9:05 am on 1 June, 2023",
            "session_2": turns, "session_2_date_time": "12:30 pm on 8 May, 2023",
            "session_3": [{"speaker": "Bob", "dia_id": "D3:1", "text": "lost"}],
            "session_3_date_time": "sometime in May",
        },
        "qa": [{"question": "What pet?", "answer": "a dog", "evidence": ["D2:1"], "category": 4}],
    }]  # fmt: skip


def test_locomo_sessions_turns_and_times(tmp_path: Path) -> None:
    result = read_chat_log(write(tmp_path, "lc.json", json.dumps(small_locomo())), format="locomo")
    adopt, congrats, lost, later = result.records
    [warning] = result.warnings
    assert result.errors == []
    assert [r.source for r in result.records] == ["D2:1", "D2:2", "D3:1", "D10:1"]
    assert (adopt.user_id, adopt.session_id, adopt.conversation_id) == (
        "conv-x",
        "session_2",
        "conv-x",
    )
    assert (adopt.role, adopt.speaker, congrats.speaker) == ("user", "Ann", "Bob")
    assert adopt.ts == at(2023, 5, 8, 12, 30)
    assert congrats.ts == at(2023, 5, 8, 12, 30, 1)
    assert later.ts == at(2023, 6, 1, 9, 5)
    assert (lost.content, lost.ts) == ("lost", None)  # kept, undated, in file order
    assert adopt.metadata == {"blip_caption": "a dog"}
    assert (warning.location, warning.reason) == (
        "conv-x session_3",
        "session date: unparseable timestamp 'sometime in May'; the message is kept without a time",
    )


def test_locomo_user_id_argument_and_bad_turns(tmp_path: Path) -> None:
    doc = small_locomo()
    doc[0]["conversation"]["session_2"] += [
        {"speaker": "Ann", "text": "no id"},
        {"dia_id": "D2:4", "text": 1},
    ]
    doc.append({"sample_id": "conv-y"})
    result = read_chat_log(write(tmp_path, "lc.json", json.dumps(doc)), "locomo", user_id="me")
    assert {r.user_id for r in result.records} == {"me"}
    assert [e.location for e in result.errors] == [
        "conv-x session_2 turn 3", "conv-x D2:4", "record 2",
    ]  # fmt: skip


def test_locomo_bad_turns_are_kept_or_reported(tmp_path: Path) -> None:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "img_url": ["http://x"], "blip_caption": "a red kite"},
        {"speaker": "Ann", "dia_id": "D1:2", "text": "", "img_url": ["http://x"]},
        {"dia_id": "D1:3", "text": "Who am I?"},
        {"speaker": "Eve", "dia_id": "D1:4", "text": "Hi, I'm new here."},
        {"speaker": "Bob", "dia_id": "D1:5", "text": "Same words."},
        {"speaker": "Bob", "dia_id": "D1:5", "text": "Same words."},
        {"speaker": "Bob", "dia_id": "D1:6", "text": "Same words."},
        {"speaker": "Ann", "dia_id": "D1:7", "text": "我喜欢徒步旅行, and I love Lisbon."},
        {"speaker": ["Ann"], "dia_id": "D1:8", "text": "A list for a name."},
    ]
    doc = [{
        "sample_id": "conv-z",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1": turns, "session_1_date_time": "29.12.2023, 22:42:04",
        },
    }]  # fmt: skip
    result = read_chat_log(write(tmp_path, "lc.json", json.dumps(doc)), format="locomo")
    kept = [(r.source, r.speaker, r.content) for r in result.records]
    assert kept == [
        ("D1:1", "Ann", "[image: a red kite]"),
        ("D1:3", None, "Who am I?"),
        ("D1:4", "Eve", "Hi, I'm new here."),
        ("D1:5", "Bob", "Same words."),
        ("D1:6", "Bob", "Same words."),  # the same words under another dia_id: a turn of its own
        ("D1:7", "Ann", "我喜欢徒步旅行, and I love Lisbon."),
        ("D1:8", None, "A list for a name."),
    ]
    assert result.records[0].ts == at(2023, 12, 29, 22, 42, 4)
    assert [(e.location, e.reason) for e in result.errors] == [("conv-z D1:2", "content is empty")]
    notes = [(w.location, w.reason) for w in result.warnings]
    assert notes == [
        ("conv-z D1:1", "no text: kept as its image caption"),
        ("conv-z D1:3", "no speaker: its self-references go to the user's own entity"),
        ("conv-z D1:4", "speaker 'Eve' is not 'Ann' or 'Bob'; kept under that name"),
        (
            "conv-z D1:5",
            "the same turn as turn 5 of session_1 (session, role, speaker, text and dia_id): "
            "read once",
        ),
        (
            "conv-z D1:8",
            "speaker must be a string, got list; the message is kept without a speaker",
        ),
    ]
    assert all(isinstance(w, ReadWarning) and w.path.endswith("lc.json") for w in result.warnings)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1:56 pm on 8 May, 2023", at(2023, 5, 8, 13, 56)),
        ("12:09 am on 13 September, 2023", at(2023, 9, 13, 0, 9)),
        ("12:30 pm on 8 May, 2023", at(2023, 5, 8, 12, 30)),
    ],
)
def test_parse_timestamp_reads_locomo_dates(text: str, expected: datetime) -> None:
    assert parse_timestamp(text) == expected


@pytest.mark.parametrize("text", ["1:56 pm on 31 February, 2023", "1:56 pm on 8 Mayo, 2023"])
def test_parse_timestamp_rejects_broken_locomo_dates(text: str) -> None:
    with pytest.raises(InvalidInputError, match="unparseable timestamp"):
        parse_timestamp(text)


def test_normalize_evidence() -> None:
    raw: list[object] = ["D:11:26", "D30:05", "D8:6; D9:17", "D9:1 D4:4", "D", "D8:6", 3]
    assert normalize_evidence(raw) == ["D11:26", "D30:5", "D8:6", "D9:17", "D9:1", "D4:4"]


def test_load_locomo_qa_synthetic(tmp_path: Path) -> None:
    doc = small_locomo()
    doc[0]["qa"] += [
        {"question": "Q2", "answer": 2022, "evidence": ["D:2:01"], "category": 2},
        {"question": "Q3", "adversarial_answer": "a cat", "evidence": [], "category": 5},
    ]
    questions = load_locomo_qa(write(tmp_path, "lc.json", json.dumps(doc)))
    assert [(q.answer, q.evidence, q.category) for q in questions] == [
        ("a dog", ["D2:1"], 4), ("2022", ["D2:1"], 2), (None, [], 5),
    ]  # fmt: skip
    assert questions[2].adversarial_answer == "a cat"


@pytest.mark.parametrize("doc", [{"qa": []}, [{"sample_id": "s"}], [{"qa": [{"answer": "x"}]}]])
def test_load_locomo_qa_rejects_other_files(tmp_path: Path, doc: object) -> None:
    path = write(tmp_path, "lc.json", json.dumps(doc))
    with pytest.raises(InvalidInputError) as caught:
        load_locomo_qa(path)
    assert str(path) in str(caught.value)


# -- locomo (the real file) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def locomo() -> ReadResult:
    return read_chat_log(LOCOMO)


@needs_locomo
def test_real_locomo_counts(locomo: ReadResult) -> None:
    records = locomo.records
    assert (locomo.format, locomo.errors) == ("locomo", [])
    assert len({r.user_id for r in records}) == 10
    assert len({(r.user_id, r.session_id) for r in records}) == 272
    assert len(records) == 5882
    assert len({(r.user_id, r.source) for r in records}) == 5882


@needs_locomo
def test_real_locomo_keeps_dia_ids_as_source(locomo: ReadResult) -> None:
    raw = json.loads(LOCOMO.read_text(encoding="utf-8"))
    expected = {
        (sample["sample_id"], turn["dia_id"], turn["text"])
        for sample in raw
        for key, turns in sample["conversation"].items()
        if re.fullmatch(r"session_\d+", key)
        for turn in turns
    }
    assert {(r.user_id, r.source, r.content) for r in locomo.records} == expected
    first = locomo.records[0]
    assert (first.source, first.session_id, first.ts) == (
        "D1:1",
        "session_1",
        at(2023, 5, 8, 13, 56),
    )


@needs_locomo
def test_real_locomo_is_in_time_order_within_each_conversation(locomo: ReadResult) -> None:
    by_user: dict[str | None, list[ChatRecord]] = {}
    for record in locomo.records:
        by_user.setdefault(record.user_id, []).append(record)
    for records in by_user.values():
        times = [r.ts for r in records]
        assert all(a is not None and b is not None and a < b for a, b in itertools.pairwise(times))


@needs_locomo
def test_real_locomo_qa() -> None:
    questions = load_locomo_qa(LOCOMO)
    by_question = {(q.sample_id, q.question): q for q in questions}
    assert len(questions) == 1986
    assert Counter(q.category for q in questions) == {4: 841, 5: 446, 2: 321, 1: 282, 3: 96}
    assert all(re.fullmatch(r"D[1-9]\d*:[1-9]\d*", e) for q in questions for e in q.evidence)
    raw = json.loads(LOCOMO.read_text(encoding="utf-8"))
    fixed = {"D:11:26": "D11:26", "D30:05": "D30:5"}
    for sample in raw:
        for item in sample["qa"]:
            for bad, good in fixed.items():
                if bad in item["evidence"]:
                    assert good in by_question[(sample["sample_id"], item["question"])].evidence


# -- auto-detection and paths --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("a.jsonl", '{"role": "user", "content": "x"}\n', "openai-jsonl"),
        ("a.ndjson", '{"role": "user", "content": "x"}\n', "openai-jsonl"),
        ("a.txt", '{"messages": [{"role": "user", "content": "x"}]}\n', "openai-jsonl"),
        ("a.json", '{"role": "user", "content": "x"}', "openai-jsonl"),
        ("a.CSV", "role,content\nuser,x\n", "csv"),
        ("a.log", "user,role,content\nu,user,x\n", "csv"),
        ("a.json", json.dumps(sharegpt_doc(), indent=2), "sharegpt"),
        ("b.json", json.dumps(small_locomo(), indent=2), "locomo"),
    ],
)
def test_auto_detects_format(tmp_path: Path, name: str, text: str, expected: str) -> None:
    path = write(tmp_path, name, text)
    assert resolve_format(path) == expected
    assert read_chat_log(path).format == expected
    assert len(read_chat_log(path).records) >= 1


@pytest.mark.parametrize(
    ("name", "text"),
    [("a.txt", "hello there\n"), ("a.json", ""), ("a.json", "[1, 2, 3]"), ("a.json", '{"a":\n1}')],
)
def test_auto_names_the_file_when_it_cannot_tell(tmp_path: Path, name: str, text: str) -> None:
    path = write(tmp_path, name, text)
    with pytest.raises(InvalidInputError) as caught:
        read_chat_log(path)
    assert str(path) in str(caught.value)
    assert "format" in str(caught.value)


CONVERSATION = {
    "messages": [
        {"role": "user", "content": "I live in Oslo."},
        {"role": "assistant", "content": "Oslo is lovely."},
    ]
}


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_file_is_one_document_whatever_its_line_count(tmp_path: Path, indent: int) -> None:
    """A `.json` file written by `json.dump` was read as JSONL on one line and not at all
    indented ("cannot tell the chat-log format"): an OpenAI conversation, or a list of
    messages, is read alike either way (a conversation's sources as its one line's were)."""
    said = [("user", "I live in Oslo."), ("assistant", "Oslo is lovely.")]
    documents = {"conversation.json": CONVERSATION, "messages.json": CONVERSATION["messages"]}
    sources = {"conversation.json": ["1#1", "1#2"], "messages.json": ["1", "2"]}
    for name, document in documents.items():
        path = write(tmp_path, name, json.dumps(document, indent=indent))
        result = read_chat_log(path)
        assert (result.format, result.errors) == ("openai-jsonl", [])
        assert [(r.role, r.content) for r in result.records] == said
        assert [r.source for r in result.records] == [f"{name}:{at}" for at in sources[name]]
    exported = write(tmp_path, "conversations.json", json.dumps(export(), indent=indent))
    assert read_chat_log(exported).format == "chatgpt"
    said_once = {"id": 2, "type": "message", "date_unixtime": "1703971080", "from": "Ann"}
    chat = {"name": "Ann", "type": "personal_chat", "id": 1, "messages": [said_once]}
    telegram = write(tmp_path, "result.json", json.dumps(chat, indent=indent))
    assert resolve_format(telegram) == "telegram"  # its messages are no OpenAI conversation's
    channel = {"guild": {"id": "1"}, "channel": {"id": "2"}, "messages": []}
    discord = write(tmp_path, "channel.json", json.dumps(channel, indent=indent))
    assert resolve_format(discord) == "discord"


def test_a_json_document_is_parsed_once_from_detection_to_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection parsed an OpenAI-format `.json` file whole to tell its format, and the reader
    parsed it again (0.44 s of 4.8 s for 50 MB): detection hands its document over."""
    path = write(tmp_path, "chat.json", json.dumps([CONVERSATION, CONVERSATION]))
    parsed: list[int] = []
    loads = json.loads
    monkeypatch.setattr(json, "loads", lambda text: parsed.append(1) or loads(text))  # any

    records = [read_chat_log(path).records, list(iter_chat_log(path))]
    collected = collect(path, "auto", "u", lambda r, u: (r.source,))

    assert len(parsed) == 3  # once for each read, and nothing else parses JSON
    assert [len(r) for r in records] == [4, 4] and len(collected.jobs) == 4


def test_a_json_file_of_json_lines_is_read_by_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path, *CONVERSATION["messages"], name="lines.json")
    assert [r.source for r in read_chat_log(path).records] == ["lines.json:1", "lines.json:2"]


@pytest.mark.parametrize("indent", [None, 2])
def test_a_json_document_of_no_known_format_names_what_was_expected(
    tmp_path: Path, indent: int
) -> None:
    """One ChatGPT conversation, taken out of its export's list, on one line was read as a
    JSONL message (`role is missing`), indented it could not be told."""
    path = write(tmp_path, "one.json", json.dumps(export()[0], indent=indent))
    with pytest.raises(InvalidInputError) as caught:
        resolve_format(path)
    said = str(caught.value)
    assert said.startswith(f"cannot tell the chat-log format of {str(path)!r}: it holds ")
    assert "a JSON object (keys: title, create_time, update_time, mapping" in said
    assert "a list of ShareGPT conversations" in said and '{"messages": [...]}' in said


def test_missing_path_raises(tmp_path: Path) -> None:
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(InvalidInputError) as caught:
        read_chat_log(missing)
    with pytest.raises(InvalidInputError) as caught_iter:
        iter_chat_log(missing)  # raised before the first item, not on iteration
    with pytest.raises(InvalidInputError) as caught_dir:
        read_chat_log(tmp_path, format="csv")
    with pytest.raises(InvalidInputError) as caught_qa:
        load_locomo_qa(missing)
    for error in (caught, caught_iter, caught_qa):
        assert str(missing) in str(error.value)
    assert "not a file" in str(caught_dir.value)


def test_unknown_format_raises(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"role": "user", "content": "x"})
    with pytest.raises(InvalidInputError) as caught:
        read_chat_log(path, format="xml")
    assert "xml" in str(caught.value)


def test_iter_chat_log_streams_in_file_order(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path, {"role": "user", "content": "a"}, "bad", {"role": "user", "content": "c"}
    )
    items = iter_chat_log(path)
    first = next(items)
    rest = list(items)
    assert isinstance(first, ChatRecord) and first.content == "a"
    assert [type(item) for item in rest] == [ReadError, ChatRecord]


# -- timestamps, checksums, ordering ------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2024-03-01T10:00:00", at(2024, 3, 1, 10)),
        ("2024-03-01T10:00:00Z", at(2024, 3, 1, 10)),
        ("2024-03-01T12:00:00+02:00", at(2024, 3, 1, 10)),
        ("2024-03-01", at(2024, 3, 1)),
        (1709287200, at(2024, 3, 1, 10)),
        (1709287200.5, at(2024, 3, 1, 10) + timedelta(milliseconds=500)),
        (" 1709287200 ", at(2024, 3, 1, 10)),
        (datetime(2024, 3, 1, 10), at(2024, 3, 1, 10)),
        ("29.12.2023, 22:42:04", at(2023, 12, 29, 22, 42, 4)),
        ("01.02.2023 08:00", at(2023, 2, 1, 8)),  # dotted dates are day first
        ("1:56 pm on 8 May, 2023", at(2023, 5, 8, 13, 56)),
        ("Dec 29, 2023 10:42 PM", at(2023, 12, 29, 22, 42)),
        ("Mon, 08 May 2023 13:56:00 GMT", at(2023, 5, 8, 13, 56)),
        ("2023-05-08 15:56 +0200", at(2023, 5, 8, 13, 56)),
        ("8 May 2023", at(2023, 5, 8)),
        (None, None),
        ("", None),
    ],
)
def test_parse_timestamp(value: object, expected: datetime | None) -> None:
    parsed = parse_timestamp(value)
    assert parsed == expected
    assert parsed is None or parsed.tzinfo == UTC


@pytest.mark.parametrize(
    "value",
    [
        "soon", True, float("nan"), 10**30, "1e400", [2024], {},
        "8 May", "10:42 PM", "2023-05-08 13:56 EST", "31.02.2023",
    ],
)  # fmt: skip
def test_parse_timestamp_rejects(value: object) -> None:
    with pytest.raises(InvalidInputError):
        parse_timestamp(value)


def record(**changes: Any) -> ChatRecord:
    fields: dict[str, Any] = {
        "user_id": "u", "session_id": "s", "role": "user", "content": "hello",
        "ts": at(2024, 1, 1), "source": "f.jsonl:1",
    }  # fmt: skip
    return ChatRecord(**{**fields, **changes})


def test_checksum_is_stable_and_documented() -> None:
    payload = '["u","s","user","hello","2024-01-01T00:00:00+00:00","f.jsonl:1"]'
    assert record().checksum == hashlib.sha256(payload.encode()).hexdigest()
    assert record().checksum == record(speaker="x", metadata={"k": "v"}).checksum
    assert record().checksum == record(ts=datetime(2024, 1, 1)).checksum  # naive is UTC
    timed = '["u","s","user","Ann","hello","2024-01-01T00:00:00+00:00"]'
    placed = record(positional=True, speaker="Ann")
    assert placed.checksum == hashlib.sha256(timed.encode()).hexdigest()


def test_a_timed_positional_record_is_identified_without_its_position() -> None:
    placed = record(positional=True)
    assert placed.checksum == record(positional=True, source="g.jsonl:9").checksum
    assert placed.checksum != record(positional=True, speaker="Ann").checksum
    assert placed.checksum != record().checksum  # an id as source (LoCoMo's dia_id) stays
    untimed = record(positional=True, ts=None)
    assert untimed.checksum != record(positional=True, ts=None, source="f.jsonl:2").checksum


@pytest.mark.parametrize(
    "change",
    [{"content": "hello!"}, {"user_id": "v"}, {"session_id": None}, {"role": "assistant"},
     {"ts": None}, {"ts": at(2024, 1, 1, 0, 0, 1)}, {"source": "f.jsonl:2"}],
)  # fmt: skip
def test_checksum_changes_with_each_field(change: dict[str, Any]) -> None:
    assert record(**change).checksum != record().checksum


def test_checksum_same_across_reads(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path, {"role": "user", "content": "x", "timestamp": 5}, {"role": "user", "content": "y"}
    )
    first, second = read_chat_log(path), read_chat_log(path)
    sums = [r.checksum for r in first.records]
    assert sums == [r.checksum for r in second.records]
    assert len(set(sums)) == 2


def test_record_validates_itself() -> None:
    with pytest.raises(ValueError):
        record(role="wizard")
    with pytest.raises(ValueError):
        record(content=" ")


def test_in_time_order(tmp_path: Path) -> None:
    path = jsonl(
        tmp_path,
        {"role": "user", "content": "late", "ts": 300},
        {"role": "user", "content": "undated"},
        {"role": "user", "content": "early", "ts": 100},
        {"role": "user", "content": "tie", "ts": 300},
    )
    result = read_chat_log(path)
    assert [r.content for r in result.records] == ["late", "undated", "early", "tie"]
    assert [r.content for r in result.in_time_order()] == ["early", "late", "tie", "undated"]


# -- property: the JSONL reader never raises on any JSON line ------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
near_values = json_values | st.sampled_from(["u1", "2024-01-01T00:00:00Z", "", 1e12, -5])
optional_fields = {
    key: near_values
    for key in ("user_id", "user", "session_id", "conversation_id", "timestamp", "ts", "name")
}
message_like = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant", "system", "bob"]) | json_values,
        "content": st.text(max_size=20) | json_values,
    },
    optional=optional_fields,
)
lines = (
    json_values
    | message_like
    | st.fixed_dictionaries(
        {"messages": st.lists(message_like | json_values, max_size=3) | json_values},
        optional=optional_fields,
    )
)


@settings(max_examples=200, deadline=None)
@given(st.lists(lines, min_size=1, max_size=5))
def test_jsonl_reader_never_raises(rows: list[Any]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.jsonl"
        path.write_text("\n".join(json.dumps(row) for row in rows) + "\n", encoding="utf-8")
        items = list(iter_chat_log(path))
    _every_item_names_its_line_in_order(items, len(rows))
    checksums = [item.checksum for item in items if isinstance(item, ChatRecord)]
    assert all(re.fullmatch(r"[0-9a-f]{64}", c) for c in checksums)
    assert len(set(checksums)) == len(checksums)  # each record has its own source


def _line_of(item: ChatRecord | ReadError | ReadWarning) -> int | None:
    """The file line `item` comes from (None: the whole file)."""
    where = item.source if isinstance(item, ChatRecord) else item.location
    if where == "file":
        return None
    found = re.match(r"(?:any\.jsonl:|line )(\d+)", where)
    assert found, where
    return int(found[1])


def _every_item_names_its_line_in_order(items: list[Any], line_count: int) -> None:
    assert all(isinstance(item, ChatRecord | ReadError | ReadWarning) for item in items)
    lines = [line for item in items if (line := _line_of(item)) is not None]
    assert lines == sorted(lines)
    assert all(1 <= line <= line_count for line in lines)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=5))
def test_jsonl_reader_never_raises_on_bytes(rows: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "any.jsonl"
        data = b"\n".join(rows)
        path.write_bytes(data)
        items = list(iter_chat_log(path))
    _every_item_names_its_line_in_order(items, data.count(b"\n") + data.count(b"\r") + 1)
    assert not any(isinstance(item, ReadWarning) for item in items)
