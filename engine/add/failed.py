"""Dead letters outside `ingest`: the messages of an `add` whose extraction failed.

Their episodes are kept as "failed" (and retried when the same message is added again); the
dead letter is the operator's list of them, replayed by `ingest(retry_failed=True)`
(`graphmem ingest --retry-failed`), in the same file `ingest` writes its own to.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from engine.add.messages import record_checksum
from engine.add.prepare import PreparedAdd
from engine.errors import InvalidInputError
from engine.ingest.chat_records import ChatRecord
from engine.ingest.deadletters import DeadLetter, DeadLetters

WHERE = "add"  # the dead letter's `path`: what the message came through


def keep_failed(path: Path, prepared: PreparedAdd, reason: str, max_chars: int) -> list[str]:
    """Append a dead letter for each episode of `prepared` to the file at `path`; the
    problems met (a message no dead letter can hold, an unwritable file) come back as text,
    never raised: the failed episodes are stored already."""
    problems: list[str] = []
    try:
        letters = DeadLetters(path)
    except (InvalidInputError, OSError) as exc:
        return [f"no dead letter written: {exc}"]
    try:
        for row in prepared.episodes:
            try:
                record = ChatRecord(
                    user_id=prepared.user_id,
                    session_id=row.session_id,
                    role=row.role,
                    content=row.content,
                    ts=None if row.undated else datetime.fromtimestamp(row.ts, UTC),
                    speaker=row.speaker,
                    source=row.source or f"{WHERE}:{row.uid}",
                )
                checksum = record_checksum(record, prepared.user_id, max_chars)
            except (ValidationError, InvalidInputError) as exc:
                problems.append(f"no dead letter for episode {row.uid}: {exc}")
                continue
            letter = DeadLetter(
                record=record,
                user_id=prepared.user_id,
                checksum=checksum,
                path=WHERE,
                location=row.uid,
                stage="extract",
                reason=reason,
            )
            letters.add(letter)
    except OSError as exc:
        problems.append(f"no dead letter written: {exc}")
    finally:
        letters.close()
    return problems
