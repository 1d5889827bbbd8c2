"""Chat-log readers on the faults newcomers meet (issue 52): bytes that are not UTF-8 in a CSV,
repeated turns and missing speakers in every format, epoch milliseconds, ShareGPT times,
month-first slash dates, a CSV delimiter, and a directory of logs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidInputError
from engine.ingest import read_chat_log
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
