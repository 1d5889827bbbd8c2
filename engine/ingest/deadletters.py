"""The dead-letter file: messages that still failed after retries, one JSON object a line.

Each failure is appended (and flushed) the moment it happens, so a killed run keeps it. A
message is listed once (by checksum, the latest failure wins); `resolve` drops one that has
since been stored, and `close` rewrites the file atomically when anything was dropped.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import BaseModel, Field, ValidationError

from engine.errors import InvalidInputError
from engine.ingest.records import ChatRecord
from engine.ingest.report import Stage
from engine.private_files import open_private, private_dir


class DeadLetter(BaseModel):
    """A message that failed, with everything needed to replay it."""

    record: ChatRecord
    user_id: str = Field(description="the user it was being added for")
    checksum: str
    path: str
    location: str
    stage: Stage
    reason: str
    failed_at: datetime = Field(default_factory=lambda: datetime.now(UTC))


class DeadLetters:
    """The dead letters of one data directory. Thread-safe.

    Raises:
        InvalidInputError: the file exists but a line is not a dead letter (nothing is lost:
            the file is left as it is).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._letters = _load(path)
        self._dirty = False
        self._handle: IO[str] | None = None

    def __len__(self) -> int:
        return len(self._letters)

    def __contains__(self, checksum: object) -> bool:
        with self._lock:
            return checksum in self._letters

    def letters(self) -> list[DeadLetter]:
        with self._lock:
            return list(self._letters.values())

    def add(self, letter: DeadLetter) -> None:
        with self._lock:
            self._letters[letter.checksum] = letter
            if self._handle is None:
                if not self.path.parent.is_dir():
                    private_dir(self.path.parent)
                self._handle = open_private(self.path, "a")
            self._handle.write(letter.model_dump_json() + "\n")
            self._handle.flush()

    def resolve(self, checksum: str) -> bool:
        """Forget a dead letter whose message is now stored; True if there was one."""
        with self._lock:
            found = self._letters.pop(checksum, None) is not None
            self._dirty = self._dirty or found
            return found

    def close(self) -> None:
        """Flush; rewrite the file (atomically) when dead letters were resolved."""
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
            if self._dirty:
                _rewrite(self.path, list(self._letters.values()))
                self._dirty = False


def _load(path: Path) -> dict[str, DeadLetter]:
    letters: dict[str, DeadLetter] = {}
    if not path.is_file():
        return letters
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                letter = DeadLetter.model_validate_json(line)
            except ValidationError as exc:
                # A torn last line is what a kill -9 mid-write leaves; anything else is not ours.
                if _is_torn(line):
                    continue
                raise InvalidInputError(
                    f"dead-letter file {str(path)!r}: line {number} is not a dead letter: "
                    f"{exc.errors()[0]['msg']}"
                ) from exc
            letters[letter.checksum] = letter
    return letters


def _is_torn(line: str) -> bool:
    if line.endswith("\n"):
        return False
    try:
        json.loads(line)
    except ValueError:
        return True
    return False


def _rewrite(path: Path, letters: list[DeadLetter]) -> None:
    if not letters:
        path.unlink(missing_ok=True)
        return
    temporary = path.with_name(path.name + ".tmp")
    with open_private(temporary, "w") as handle:
        handle.writelines(letter.model_dump_json() + "\n" for letter in letters)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def keep_messages(
    path: Path,
    user_id: str,
    session_id: str | None,
    messages: list[dict[str, str]],
    reason: str,
    source: str,
    key: Callable[[ChatRecord], str],
) -> None:
    """Keep messages a caller could not store as dead letters, for `ingest(retry_failed=True)`
    (`graphmem ingest --retry-failed`) to replay; `messages` are OpenAI-format dicts within
    the message limit. Each letter is keyed by `key` (the checksum its episode is stored
    under, `engine.add.messages.record_checksum`) as the replay will key it, so a replay that
    stores the message resolves the letter."""
    letters, ts = DeadLetters(path), datetime.now(UTC)
    try:
        for index, message in enumerate(messages):
            where = f"{source}#{index}"
            record = ChatRecord(
                user_id=user_id,
                session_id=session_id,
                role=message["role"],
                content=message["content"],
                ts=ts,
                source=where,
            )
            letters.add(
                DeadLetter(
                    record=record,
                    user_id=user_id,
                    checksum=key(record),
                    path=source,
                    location=where,
                    stage="apply",
                    reason=reason,
                )
            )
    finally:
        letters.close()
