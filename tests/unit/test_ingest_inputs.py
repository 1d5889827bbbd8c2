"""Chat-log readers on the faults newcomers meet (issue 52): bytes that are not UTF-8 in a CSV,
repeated turns and missing speakers in every format, epoch milliseconds, ShareGPT times,
month-first slash dates, a CSV delimiter, and a directory of logs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest

from engine.errors import InvalidInputError
from engine.ingest import read_chat_log
from engine.ingest.pipeline import ingest
from engine.ingest.readers import parse_timestamp


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# -- B2: one byte that is not UTF-8 ------------------------------------------------------------


def test_a_cp1252_byte_in_a_csv_loses_only_its_row(tmp_path: Path) -> None:
    rows = [f"u1,s1,user,message {n}".encode() for n in range(2, 30)]
    rows[19] = "u1,s1,user,un café".encode("cp1252")  # line 21 of 29
    path = tmp_path / "chat.csv"
    path.write_bytes(b"user,session,role,content\n" + b"\n".join(rows) + b"\n")
    result = read_chat_log(path)
    [error] = result.errors
    assert (error.location, error.reason) == ("line 21", "not valid UTF-8 (the row is left out)")
    assert len(result.records) == 27
    assert result.records[-1].source == "chat.csv:29"


def test_a_bad_byte_inside_a_quoted_multiline_row_is_that_row(tmp_path: Path) -> None:
    body = b'role,content\nuser,first\nuser,"two\nlines caf\xe9"\nuser,last\n'
    path = tmp_path / "chat.csv"
    path.write_bytes(body)
    result = read_chat_log(path)
    assert [e.location for e in result.errors] == ["line 3"]
    assert [(r.content, r.source) for r in result.records] == [
        ("first", "chat.csv:2"),
        ("last", "chat.csv:5"),
    ]


# -- A4: repeated turns and missing speakers, one rule for every reader --------------------------


def test_a_repeated_turn_is_read_once_in_jsonl_csv_and_sharegpt(tmp_path: Path) -> None:
    said = {"user_id": "u", "session_id": "s", "role": "user", "name": "Ann"}
    rows = [
        said | {"content": "I have a headache.", "ts": "2024-03-04T10:00:00Z"},
        said | {"content": "I have a headache.", "ts": "2024-03-04T10:00:00Z"},  # a repeat
        said | {"content": "I have a headache.", "ts": "2024-03-08T10:00:00Z"},  # said again
        said | {"content": "Hi."},
        said | {"content": "Hi."},  # no time: said twice, never a repeat
    ]
    csv_text = "user,session,role,speaker,content,timestamp\n" + "".join(
        f"u,s,user,Ann,{r['content']},{r.get('ts', '')}\n" for r in rows
    )
    turns = [{"from": "human", "value": r["content"], "timestamp": r.get("ts")} for r in rows]
    sharegpt = tmp_path / "chat.json"
    sharegpt.write_text(json.dumps([{"id": "c1", "conversations": turns}]))
    (tmp_path / "chat.csv").write_text(csv_text)
    for path, first in [
        (jsonl(tmp_path / "chat.jsonl", rows), "line 1"),
        (tmp_path / "chat.csv", "line 2"),
        (sharegpt, "record 1 message 1"),
    ]:
        result = read_chat_log(path)
        assert len(result.records) == 4, path
        [warning] = result.warnings
        assert warning.reason.startswith(f"the same turn as {first} ("), path
        assert warning.reason.endswith("text and time): read once")


def test_a_missing_speaker_is_a_warning_where_the_file_names_speakers(tmp_path: Path) -> None:
    rows = [
        {"user_id": "u", "role": "user", "name": "Ann", "content": "I like tea."},
        {"user_id": "u", "role": "assistant", "content": "Noted."},  # no assistant is named
        {"user_id": "u", "role": "user", "content": "I like jazz."},
    ]
    result = read_chat_log(jsonl(tmp_path / "chat.jsonl", rows))
    [warning] = result.warnings
    assert len(result.records) == 3
    assert warning.location == "line 3"
    assert warning.reason.startswith("no speaker, where earlier user turns name one")
    csv_path = tmp_path / "chat.csv"
    csv_path.write_text("role,speaker,content\nuser,Ann,I like tea.\nuser,,I like jazz.\n")
    assert [w.location for w in read_chat_log(csv_path).warnings] == ["line 3"]


# -- A5: epoch milliseconds, ShareGPT times, slash dates ---------------------------------------


@pytest.mark.parametrize(
    "value",
    [1709287200, 1709287200000, "1709287200000", 1709287200000000, 1709287200000000000],
)
def test_epoch_seconds_milliseconds_microseconds_by_magnitude(value: object) -> None:
    assert parse_timestamp(value) == at(2024, 3, 1, 10)


def test_a_slash_date_is_month_first_and_a_dotted_one_day_first() -> None:
    assert parse_timestamp("03/04/2023") == at(2023, 3, 4)
    assert parse_timestamp("03.04.2023") == at(2023, 4, 3)
    with pytest.raises(InvalidInputError):
        parse_timestamp("31/12/2023")  # day first with slashes: month 31 does not exist


def test_sharegpt_times_are_read(tmp_path: Path) -> None:
    data = [
        {
            "id": "c1",
            "create_time": 1709287200.0,
            "conversations": [
                {"from": "human", "value": "Hello."},
                {"from": "gpt", "value": "Hi.", "timestamp": "2024-03-01T10:05:00Z"},
            ],
        },
        {"id": "c2", "conversations": [{"from": "human", "value": "Undated."}]},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(data))
    result = read_chat_log(path)
    assert [r.ts for r in result.records] == [at(2024, 3, 1, 10), at(2024, 3, 1, 10, 5), None]


def test_a_csv_quote_never_closed_is_an_error_not_one_message_of_the_rest(
    tmp_path: Path,
) -> None:
    """The reader took the rest of the file for the row's last field: the lines after a stray
    quote were stored as one message, without a word."""
    path = tmp_path / "chat.csv"
    path.write_text('role,content\nuser,fine\nuser,"unterminated\nuser,never\nuser,read\n')
    result = read_chat_log(path)
    assert [r.content for r in result.records] == ["fine"]
    assert [(e.location, e.reason) for e in result.errors] == [
        (
            "line 3",
            "a quote opened in this row is never closed: lines 3 to 5, the end of the file, "
            "are left out",
        )
    ]


def test_csv_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "chat.csv"
    path.write_text("role;content\nuser;Hello, world\n")
    assert [r.content for r in read_chat_log(path, delimiter=";").records] == ["Hello, world"]
    with pytest.raises(InvalidInputError, match="one character"):
        read_chat_log(path, delimiter=";;")


def test_a_user_id_every_door_refuses_is_refused_before_any_file_is_read(
    tmp_path: Path,
) -> None:
    """`Memory.ingest(..., user_id="alice\u200b")` read the whole file and listed every record
    as an error; the CLI's --user refused it at once."""
    with pytest.raises(InvalidInputError, match=r"user_id .* U\+200B ZERO WIDTH SPACE"):
        ingest(
            cast(Any, None), str(tmp_path / "no such file"), None, tmp_path, user_id="alice\u200b"
        )
