"""Field parsing shared by the chat-log readers: timestamps, ids, roles, content.

Each parser raises `InvalidInputError` with a short reason; `build_record` turns that (or a
pydantic validation error) into a `ReadError` so one bad record never stops a file. What a
record can do without (an unreadable time, a missing speaker) is a `ReadWarning` instead:
`Notes` collects them while a record is built and `noted` yields them ahead of it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import InvalidInputError
from engine.ingest.chat_records import ChatRecord, ReadError, ReadWarning, as_utc, known_role
from engine.ingest.content_parts import parts_text
from engine.times import NUMBER, UnreadableTime, full_date

Item = ChatRecord | ReadError | ReadWarning
StrPath = str | os.PathLike[str]
TS_KEYS = ("timestamp", "ts", "created_at", "create_time")
Notes = list[str]  # warnings met while building one record
#: what a message whose time cannot be read gets in a conversation (`timestamp`'s `instead`)
EARLIER = "the message takes the time of the one before it"

_SLASH_DATE = re.compile(r"\b(\d{1,2})/\d{1,2}/\d{2,4}\b")  # 12/29/2023: month first


@dataclass(frozen=True)
class SourceFile:
    """The file (or export folder) being read and the caller's options, shared by a reader's
    helpers."""

    path: Path
    shown: str  # the path as the caller gave it, for error messages
    user_id: str | None
    delimiter: str | None = None  # CSV only

    @classmethod
    def open(
        cls, path: StrPath, user_id: str | None = None, delimiter: str | None = None
    ) -> SourceFile:
        """Check that `path` is an existing file.

        Raises:
            InvalidInputError: `path` does not exist or is not a file.
        """
        file = Path(path)
        if not file.exists():
            raise InvalidInputError(f"chat log {os.fspath(path)!r} does not exist")
        if not file.is_file():
            raise InvalidInputError(f"chat log {os.fspath(path)!r} is not a file")
        return cls(file, os.fspath(path), user_id, delimiter)

    def inside(self, *parts: str) -> SourceFile:
        """A file in this one, a folder (a Slack export), shown under the folder's name."""
        shown = os.path.join(self.shown, *parts)
        return SourceFile(self.path.joinpath(*parts), shown, self.user_id)

    @property
    def name(self) -> str:
        """The file name used in `ChatRecord.source`: stable when the file moves."""
        return self.path.name

    def error(self, location: str, reason: str) -> ReadError:
        return ReadError(path=self.shown, location=location, reason=reason)

    def warning(self, location: str, reason: str) -> ReadWarning:
        return ReadWarning(path=self.shown, location=location, reason=reason)

    def load_json(self) -> Any:
        """The parsed document, or a `ReadError` located at `file`."""
        try:
            with self.path.open("rb") as handle:
                return json.load(handle)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
            return self.error("file", f"invalid JSON: {exc}")


def build_record(file: SourceFile, where: str, build: Callable[[], ChatRecord]) -> Item:
    """Run `build`; an unusable field becomes a `ReadError` at `where`."""
    try:
        return build()
    except InvalidInputError as exc:
        return file.error(where, str(exc))
    except ValidationError as exc:
        return file.error(where, "; ".join(_explain(e) for e in exc.errors()))


def noted(file: SourceFile, where: str, item: Item, notes: Notes) -> Iterator[Item]:
    """The warnings of a record that was kept, then the record (or just its error)."""
    if isinstance(item, ChatRecord):
        yield from (file.warning(where, note) for note in notes)
    yield item


def timestamp(
    value: object, notes: Notes, instead: str = "the message is kept without a time"
) -> datetime | None:
    """`parse_timestamp`, except that an unreadable value becomes a note and None: the
    message is kept without a time (and keeps its place in the file), or as `instead` says."""
    try:
        return parse_timestamp(value)
    except InvalidInputError as exc:
        notes.append(f"{exc}; {instead}")
        return None


def _explain(error: Any) -> str:
    field = ".".join(str(part) for part in error["loc"])
    return f"{field}: {error['msg'].removeprefix('Value error, ')}"


def parse_timestamp(value: object) -> datetime | None:
    """A UTC datetime from a timestamp as chat logs write it, or None.

    Epoch seconds, milliseconds, microseconds or nanoseconds (a number or numeric text, the
    unit told by its magnitude: from 1e11 on, milliseconds, i.e. dates after 1973), ISO 8601,
    and dates as people write them, read with python-dateutil: "29.12.2023, 22:42:04" (a
    dotted date is day first; a slash date is month first, "03/04/2023" is March 4),
    "1:56 pm on 8 May, 2023", "Dec 29, 2023 10:42 PM", "Mon, 08 May 2023 13:56:00 GMT".
    The text must give a full date (day, month, year); the time may be left out (midnight).
    Naive times are UTC; a zone is an offset or UTC/GMT. None and blank text mean "no
    timestamp".

    Raises:
        InvalidInputError: the value is not a timestamp (or names a zone other than UTC).

    >>> parse_timestamp("29.12.2023, 22:42:04")
    datetime.datetime(2023, 12, 29, 22, 42, 4, tzinfo=datetime.timezone.utc)
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_epoch(value)
    if isinstance(value, str):
        text = value.strip()
        if NUMBER.fullmatch(text):
            return _from_epoch(float(text))
        try:
            return as_utc(datetime.fromisoformat(text))
        except ValueError:
            return _from_text(text)
    raise InvalidInputError(f"unparseable timestamp {value!r}")


def _from_text(text: str) -> datetime:
    slash = _SLASH_DATE.search(text)
    if slash is not None and int(slash[1]) > 12:
        # dateutil would silently read this one day first and its neighbours month first
        raise InvalidInputError(
            f"unparseable timestamp {text!r}: a slash date is month first (03/04/2023 is "
            "March 4); write the day first with dots (31.12.2023) or use ISO 8601"
        )
    try:
        return full_date(text)
    except UnreadableTime as exc:
        reason = ": no full date (day month year)" if exc.partial else f": {exc.zone}"
        detail = reason if exc.partial or exc.zone else ""
        raise InvalidInputError(f"unparseable timestamp {text!r}{detail}") from exc


# Epoch numbers told apart by magnitude: 1e11 s is the year 5138, while 1e11 ms is 1973.
_EPOCH_UNITS = ((1e17, 1e9), (1e14, 1e6), (1e11, 1e3))  # (at least, per second): ns, us, ms


def _from_epoch(number: float) -> datetime:
    value = float(number)
    per_second = next((unit for least, unit in _EPOCH_UNITS if abs(value) >= least), 1.0)
    try:
        return datetime.fromtimestamp(value / per_second, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise InvalidInputError(f"timestamp {number!r} is out of range") from exc


def offset(start: datetime | None, seconds: int) -> datetime | None:
    """`start` moved on by `seconds`: keeps turns that share one time in a stable order."""
    return start + timedelta(seconds=seconds) if start is not None else None


def first(obj: dict[str, Any], *keys: str) -> Any:
    """The value of the first of `keys` present and not null in `obj`."""
    return next((obj[key] for key in keys if obj.get(key) is not None), None)


def text_id(value: object, what: str) -> str | None:
    """An id field as text: strings and integers are accepted, empty means absent."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")


def speaker(value: object, notes: Notes) -> str | None:
    """A speaker's name (`text_id`); one of another type becomes a note and None: the message
    is kept, its self-references then going to the user's own entity."""
    try:
        name = text_id(value, "speaker")
    except InvalidInputError as exc:
        notes.append(f"{exc}; the message is kept without a speaker")
        return None
    return name if name and name.strip() else None


def role(value: object) -> str:
    """A known role, lower-cased (`known_role`)."""
    if value is None:
        raise InvalidInputError("role is missing")
    if not isinstance(value, str):
        raise InvalidInputError(f"role must be a string, got {type(value).__name__}")
    return known_role(value)


def message_content(value: object, notes: Notes) -> str:
    """`content`, or the text of OpenAI content parts (`parts_text`), the parts left out a
    note."""
    if isinstance(value, list):
        value, left_out = parts_text(value, "content")
        if left_out:
            notes.append(left_out)
    return content(value)


def content(value: object) -> str:
    """Message text: present, a string, not blank."""
    if value is None:
        raise InvalidInputError("content is missing")
    if not isinstance(value, str):
        raise InvalidInputError(f"content must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError("content is empty")
    return value
