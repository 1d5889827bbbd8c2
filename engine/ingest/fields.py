"""Field parsing shared by the chat-log readers: timestamps, ids, roles, content.

Each parser raises `InvalidInputError` with a short reason; `build_record` turns that (or a
pydantic validation error) into a `ReadError` so one bad record never stops a file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import InvalidInputError
from engine.ingest.records import ROLES, ChatRecord, ReadError, as_utc

Item = ChatRecord | ReadError
StrPath = str | os.PathLike[str]
TS_KEYS = ("timestamp", "ts", "created_at")

_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


@dataclass(frozen=True)
class SourceFile:
    """The file being read and the caller's options, shared by a reader's helpers."""

    path: Path
    shown: str  # the path as the caller gave it, for error messages
    user_id: str | None

    @classmethod
    def open(cls, path: StrPath, user_id: str | None = None) -> SourceFile:
        """Check that `path` is an existing file.

        Raises:
            InvalidInputError: `path` does not exist or is not a file.
        """
        file = Path(path)
        if not file.exists():
            raise InvalidInputError(f"chat log {os.fspath(path)!r} does not exist")
        if not file.is_file():
            raise InvalidInputError(f"chat log {os.fspath(path)!r} is not a file")
        return cls(file, os.fspath(path), user_id)

    @property
    def name(self) -> str:
        """The file name used in `ChatRecord.source`: stable when the file moves."""
        return self.path.name

    def error(self, location: str, reason: str) -> ReadError:
        return ReadError(path=self.shown, location=location, reason=reason)

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


def _explain(error: Any) -> str:
    field = ".".join(str(part) for part in error["loc"])
    return f"{field}: {error['msg'].removeprefix('Value error, ')}"


def parse_timestamp(value: object) -> datetime | None:
    """A UTC datetime from ISO 8601 text, epoch seconds (number or numeric text), or None.

    Naive datetimes are UTC. None and blank text mean "no timestamp".

    Raises:
        InvalidInputError: the value is not a timestamp.

    >>> parse_timestamp("2023-05-08T13:56:00")
    datetime.datetime(2023, 5, 8, 13, 56, tzinfo=datetime.timezone.utc)
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_epoch(value)
    if isinstance(value, str):
        text = value.strip()
        if _NUMBER.fullmatch(text):
            return _from_epoch(float(text))
        try:
            return as_utc(datetime.fromisoformat(text))
        except ValueError:
            pass
    raise InvalidInputError(f"unparseable timestamp {value!r}")


def _from_epoch(seconds: float) -> datetime:
    try:
        return datetime.fromtimestamp(float(seconds), UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise InvalidInputError(f"timestamp {seconds!r} is out of range") from exc


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


def role(value: object) -> str:
    """A known role, lower-cased."""
    if value is None:
        raise InvalidInputError("role is missing")
    if not isinstance(value, str):
        raise InvalidInputError(f"role must be a string, got {type(value).__name__}")
    name = value.strip().lower()
    if name not in ROLES:
        raise InvalidInputError(f"unknown role {value!r}")
    return name


def content(value: object) -> str:
    """Message text: present, a string, not blank."""
    if value is None:
        raise InvalidInputError("content is missing")
    if not isinstance(value, str):
        raise InvalidInputError(f"content must be a string, got {type(value).__name__}")
    if not value.strip():
        raise InvalidInputError("content is empty")
    return value
