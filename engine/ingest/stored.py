"""What a run finds stored already: each message under the checksum it is stored under.

A message may be stored under more than one checksum (`Job.keys`): the one it gets now, the
one a store written before this version gave a record placed by its time (with its file
position in it) or an export's message (with its text in it), the one its dead letter was filed
under. All of a message's keys are asked in the same read, and the message is stored when any
of them is found. The read gives the text stored under each checksum found: a message an
export keys by its own id may arrive with another text than it was stored with
(`kept_as_stored`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace

from engine.ingest.deadletters import DeadLetters
from engine.ingest.sources import Job
from engine.normalize import canonical_text

#: Which of these checksums a user's memory holds as failed episodes (`Steps.failed`).
Question = Callable[[str, list[str]], set[str]]
#: Which of these checksums a user's memory holds, with the text stored under those of the
#: last list (None for the others: `Steps.stored`).
TextQuestion = Callable[[str, list[str], list[str]], dict[str, str | None]]
_CHUNK = 500  # checksums in one read, about: a message's keys are never split


def ask(question: Question, user: str, keys: list[tuple[str, ...]]) -> set[str]:
    """The checksums among `keys` that `question` finds for `user` (`reads`)."""
    found: set[str] = set()
    return found.union(*(question(user, batch) for batch in reads(keys)))


def ask_texts(
    question: TextQuestion, user: str, keys: list[tuple[str, ...]], texts: set[str]
) -> dict[str, str | None]:
    """The checksums among `keys` that `question` finds for `user`, with the text stored under
    those of `texts`."""
    found: dict[str, str | None] = {}
    for batch in reads(keys):
        found |= question(user, batch, sorted(texts.intersection(batch)))
    return found


def reads(keys: list[tuple[str, ...]]) -> Iterator[list[str]]:
    """`keys` in reads of about `_CHUNK` checksums; each tuple (one message's keys) goes whole
    into one read."""
    batch: set[str] = set()
    for group in keys:
        batch.update(group)
        if len(batch) >= _CHUNK:
            yield sorted(batch)
            batch = set()
    if batch:
        yield sorted(batch)


def as_stored(
    question: TextQuestion, jobs: list[Job]
) -> tuple[list[Job], dict[str, set[str]], int]:
    """Each job under the checksum its message is stored under (`Job.as_stored`), per user the
    checksums `question` found, and how many messages were found changed (`kept_as_stored`)."""
    by_user: dict[str, list[tuple[str, ...]]] = {}
    compared: dict[str, set[str]] = {}  # the checksums whose stored text is compared
    for job in jobs:
        by_user.setdefault(job.user_id, []).append(job.keys)
        if job.record.exported_id:
            compared.setdefault(job.user_id, set()).add(job.checksum)
    texts = {
        user: ask_texts(question, user, keys, compared.get(user, set()))
        for user, keys in by_user.items()
    }
    found = [job.as_stored(texts[job.user_id].keys()) for job in jobs]
    kept = [kept_as_stored(job, texts[job.user_id]) for job in found]
    pairs = zip(kept, found, strict=True)
    changed = {(job.user_id, job.checksum) for job, was in pairs if job is not was}
    return kept, {user: set(text) for user, text in texts.items()}, len(changed)


def kept_as_stored(job: Job, stored: Mapping[str, str | None]) -> Job:
    """`job`, or, when an export keys its message by its own id and it is stored already under
    another text (edited since, a name it mentions renamed, its markup rendered anew), the job
    with the text stored. Nothing stored is rewritten: such a message is skipped, or, stored
    as failed, extracted again from the text stored; the run counts it."""
    text = stored.get(job.checksum) if job.record.exported_id else None
    if text is None or canonical_text(text) == canonical_text(job.record.content):
        return job
    return replace(job, record=job.record.model_copy(update={"content": text}))


def resolve(letters: DeadLetters, job: Job) -> bool:
    """Forget the dead letter of a message now stored, filed under any of its keys; True if
    there was one."""
    return sum(letters.resolve(key) for key in job.keys) > 0  # each key's letter forgotten
