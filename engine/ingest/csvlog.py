"""The CSV chat-log reader: a header row naming the columns, then one message a row.

Columns (case-insensitive): `role` and `content` (required), `user`/`user_id`,
`session`/`session_id`, `conversation_id`, `timestamp`/`ts`, `speaker`; any other column is
kept as metadata. A row may span lines (a quoted newline); its location is the line it starts
on. A fault stays in its row: bytes that are not UTF-8, a malformed row, a row of the wrong
length are each one `ReadError`, and the rows around it still read.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.fields import Item, SourceFile
from engine.ingest.turns import Turns

COLUMNS = {
    "user": "user_id",
    "user_id": "user_id",
    "session": "session_id",
    "session_id": "session_id",
    "conversation_id": "conversation_id",
    "role": "role",
    "content": "content",
    "timestamp": "ts",
    "ts": "ts",
    "speaker": "speaker",
}


def read_csv(file: SourceFile) -> Iterator[Item]:
    """Every row of the file after the header, in file order."""
    delimiter = check_delimiter(file.delimiter)
    # surrogateescape: a byte that is not UTF-8 survives decoding, and `_undecodable` finds it
    # in its own row instead of the decoder stopping the whole file
    with file.path.open(encoding="utf-8-sig", errors="surrogateescape", newline="") as handle:
        lines = _Lines(handle)
        yield from _rows(file, csv.reader(lines, delimiter=delimiter), lines)


class _Lines:
    """The file's lines as the CSV reader takes them, remembering whether it asked past the
    last: it does so only for a row the file ends inside (a quote never closed), which it then
    gives as if complete, the rest of the file in its last field."""

    def __init__(self, lines: Iterable[str]) -> None:
        self._lines = iter(lines)
        self.ended = False

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        try:
            return next(self._lines)
        except StopIteration:
            self.ended = True
            raise


def check_delimiter(delimiter: str | None) -> str:
    """The column separator: `delimiter`, or a comma.

    Raises:
        InvalidInputError: `delimiter` is not one character (or is a quote or a line break).
    """
    sep = "," if delimiter is None else delimiter
    if len(sep) != 1 or sep in '"\r\n':
        raise InvalidInputError(f"the CSV delimiter must be one character, got {sep!r}")
    return sep


def _rows(file: SourceFile, reader: Any, lines: _Lines) -> Iterator[Item]:
    header: list[str] | None = None
    turns = Turns()
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield file.error(f"line {start}", f"bad CSV: {exc}")
            continue
        if lines.ended:
            yield file.error(
                f"line {start}",
                f"a quote opened in this row is never closed: lines {start} to "
                f"{reader.line_num}, the end of the file, are left out",
            )
            return
        if header is None:
            if _undecodable(row):
                yield file.error("file", "the CSV header is not valid UTF-8")
                return
            header = [COLUMNS.get(c.strip().lower(), c.strip()) for c in row]
            if not {"role", "content"} <= set(header):
                yield file.error("file", "the CSV header needs 'role' and 'content' columns")
                return
        elif _undecodable(row):
            yield file.error(f"line {start}", "not valid UTF-8 (the row is left out)")
        elif row:
            yield from _record(file, header, row, start, turns)


def _undecodable(row: list[str]) -> bool:
    try:
        for cell in row:
            cell.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _record(
    file: SourceFile, header: list[str], row: list[str], number: int, turns: Turns
) -> Iterator[Item]:
    where = f"line {number}"
    if len(row) != len(header):
        yield file.error(where, f"the row has {len(row)} fields, the header {len(header)}")
        return
    cells = dict(zip(header, row, strict=True))
    extra = {k: v for k, v in cells.items() if k not in COLUMNS.values() and v}
    notes: fields.Notes = []
    record = fields.build_record(
        file,
        where,
        lambda: ChatRecord(
            user_id=file.user_id or cells.get("user_id") or None,
            session_id=cells.get("session_id") or None,
            conversation_id=cells.get("conversation_id") or None,
            role=fields.role(cells["role"]),
            content=fields.content(cells["content"]),
            ts=fields.timestamp(cells.get("ts"), notes),
            speaker=cells.get("speaker") or None,
            source=f"{file.name}:{number}",
            positional=True,
            metadata=extra,
        ),
    )
    moment = record.ts if isinstance(record, ChatRecord) else None
    yield from turns.checked(file, where, record, notes, moment)
