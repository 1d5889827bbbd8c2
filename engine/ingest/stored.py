"""What a run finds stored already: each message under the checksum it is stored under.

A message may be stored under more than one checksum (`Job.keys`): the one it gets now, the
one a store written before this version gave a record placed by its time (with its file
position in it), the one its dead letter was filed under. All of a message's keys are asked
in the same read, and the message is stored when any of them is found.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.ingest.deadletters import DeadLetters
from engine.ingest.sources import Job

#: Which of these checksums a user's memory holds (`Steps.stored`, `Steps.failed`).
Question = Callable[[str, list[str]], set[str]]
_CHUNK = 500  # checksums in one read, about: a message's keys are never split


def ask(question: Question, user: str, keys: list[tuple[str, ...]]) -> set[str]:
    """The checksums among `keys` that `question` finds for `user`, in reads of about `_CHUNK`
    checksums; each tuple (one message's keys) goes whole into one read."""
    found: set[str] = set()
    batch: set[str] = set()
    for group in keys:
        batch.update(group)
        if len(batch) >= _CHUNK:
            found |= question(user, sorted(batch))
            batch = set()
    if batch:
        found |= question(user, sorted(batch))
    return found


def as_stored(question: Question, jobs: list[Job]) -> tuple[list[Job], dict[str, set[str]]]:
    """Each job under the checksum its message is stored under (`Job.as_stored`), and per user
    the checksums `question` found."""
    by_user: dict[str, list[tuple[str, ...]]] = {}
    for job in jobs:
        by_user.setdefault(job.user_id, []).append(job.keys)
    stored = {user: ask(question, user, keys) for user, keys in by_user.items()}
    return [job.as_stored(stored[job.user_id]) for job in jobs], stored


def resolve(letters: DeadLetters, job: Job) -> bool:
    """Forget the dead letter of a message now stored, filed under any of its keys; True if
    there was one."""
    return sum(letters.resolve(key) for key in job.keys) > 0  # each key's letter forgotten
