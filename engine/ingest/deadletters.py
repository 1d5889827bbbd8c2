"""The dead-letter file: messages that still failed after retries, one JSON object a line.

Each failure is appended (and flushed) the moment it happens, so a killed run keeps it. A
message is listed once (by checksum, the latest failure wins); `resolve` drops one that has
since been stored, and `close` rewrites the file atomically when anything was dropped.
Several processes share the file (an ingest, an app's `add`s): each append and each rewrite
holds `dead_letters.jsonl.lock`, and a rewrite starts from the file as it is then, dropping
only the letters this process resolved (not failed again since), so no process's letters
are lost to another's rewrite.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from engine.ingest.chat_records import ChatRecord
from engine.ingest.report import Stage
from engine.private_files import open_private, private_dir

_START = '{"record":'  # how every line `add` writes begins (model_dump_json, field order)


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

    A line that is not a dead letter is skipped and listed in `skipped`; it is left in the
    file until the file is next rewritten (when a letter is resolved).
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        #: `(line, reason)` for each line of the file that was not a dead letter
        self.skipped: list[tuple[int, str]] = []
        self._letters = _load(path, self.skipped)
        self._resolved: dict[str, datetime] = {}  # checksum -> when this process stored it

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
            self._resolved.pop(letter.checksum, None)
            if not self.path.parent.is_dir():
                private_dir(self.path.parent)
            # opened each time: another process's rewrite replaces the file
            with _file_lock(self.path), open_private(self.path, "a") as handle:
                handle.write(letter.model_dump_json() + "\n")

    def resolve(self, checksum: str) -> bool:
        """Forget a dead letter whose message is now stored; True if there was one."""
        with self._lock:
            found = self._letters.pop(checksum, None) is not None
            if found:
                self._resolved[checksum] = datetime.now(UTC)
            return found

    def close(self) -> None:
        """Rewrite the file (atomically) when dead letters were resolved: as it is now, less
        the letters resolved here that failed no later than they were resolved."""
        with self._lock:
            if not self._resolved or not self.path.parent.is_dir():
                return
            with _file_lock(self.path):
                letters = _load(self.path, [])
                resolved = self._resolved
                kept = [
                    letter
                    for checksum, letter in letters.items()
                    if checksum not in resolved or letter.failed_at > resolved[checksum]
                ]
                if len(kept) < len(letters):
                    _rewrite(self.path, kept)
            self._resolved.clear()


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    """Held by one process at a time around an append to or a rewrite of `path`."""
    with open_private(path.with_name(path.name + ".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _load(path: Path, warnings: list[tuple[int, str]]) -> dict[str, DeadLetter]:
    """The letters of the file, the latest failure of each message winning. A line that is not
    a dead letter (what a kill mid-append leaves, with the next letter appended to it) is
    skipped with a warning `(line, reason)`; a whole letter after the torn part is kept."""
    letters: dict[str, DeadLetter] = {}
    if not path.is_file():
        return letters
    with path.open(encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            letter, reason = _parse(line)
            if reason is not None:
                warnings.append((number, reason))
            if letter is not None:
                letters[letter.checksum] = letter
    return letters


def _parse(line: str) -> tuple[DeadLetter | None, str | None]:
    try:
        return DeadLetter.model_validate_json(line), None
    except ValidationError as exc:
        reason = f"not a dead letter ({exc.errors()[0]['msg']}): skipped"
    tail = line.rfind(_START, 1)
    if tail > 0:
        try:
            letter = DeadLetter.model_validate_json(line[tail:])
        except ValidationError:
            return None, reason
        return letter, f"a torn letter of {tail} characters before this one: skipped"
    return None, reason


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
