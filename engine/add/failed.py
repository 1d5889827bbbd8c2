"""Dead letters outside `ingest`: the messages of an `add` whose extraction failed.

Their episodes are kept as "failed" (and retried when the same message is added again); the
dead letter is the operator's list of them, replayed by `ingest(retry_failed=True)`
(`graphmem ingest --retry-failed`), in the same file `ingest` writes its own to. Each letter
is filed under the checksum its episode is stored under, the key a replay looks the message
up by (`engine.ingest.pipeline`, `Job.as_stored`): the replay finds the failed episode and
extracts it in place (`AddRequest.retry`), whatever its uid.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from engine.add.prepare import PreparedAdd
from engine.errors import InvalidInputError
from engine.ingest.chat_records import ChatRecord
from engine.ingest.deadletters import DeadLetter, DeadLetters

WHERE = "add"  # the dead letter's `path`: what the message came through


def keep_failed(path: Path, prepared: PreparedAdd, reason: str) -> list[str]:
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
                    source=row.source or f"{WHERE}:{row.uid}",  # where it came from
                )
            except ValidationError as exc:
                problems.append(f"no dead letter for episode {row.uid}: {exc}")
                continue
            letter = DeadLetter(
                record=record,
                user_id=prepared.user_id,
                checksum=row.checksum,  # what the episode is stored under, not the record's
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
