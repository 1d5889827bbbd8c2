"""`Memory.ingest`: the pipeline bound to a `Memory` through the two halves of `Memory.add`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pydantic import ValidationError

from engine.conversation import AddContext, PreparedAdd, episode_rows, parse_message, prepare
from engine.errors import InvalidInputError
from engine.ingest.pipeline import Extracted, IngestOptions, Ingestor, ProgressFn
from engine.ingest.records import ChatRecord
from engine.ingest.report import IngestReport
from engine.ingest.sources import IngestInput, Job
from engine.models import AddResult, to_epoch
from engine.normalize import stable_uid
from engine.store.base import GraphStore

if TYPE_CHECKING:
    from engine.memory import Memory

DEAD_LETTERS = "dead_letters.jsonl"


class MemorySteps:
    """The pipeline's `Steps` on a `Memory`: one `ChatRecord` is one `Memory.add` call."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def key(self, record: ChatRecord, user_id: str) -> str:
        message = parse_message(_message(record), self.memory.settings.max_message_chars)
        rows = episode_rows(
            user_id, [message], record.session_id, to_epoch(record.ts), record.source, None
        )
        return rows[0].checksum

    def stored(self, user_id: str, checksums: list[str], *, ok_only: bool) -> set[str]:
        if not ok_only:
            return self.memory.store.existing_checksums(user_id, checksums)
        return _ok_checksums(self.memory.store, user_id, checksums)

    def prepare(self, job: Job) -> Extracted:
        record = job.record
        prepared = prepare(
            _context(self.memory, replay=job.retry),
            [_message(record)],
            job.user_id,
            session_id=record.session_id,
            metadata=dict(record.metadata) or None,
            timestamp=record.ts,
            source=record.source,
        )
        outcome = prepared.outcome
        return Extracted(
            prepared=prepared,
            stored=not prepared.episodes,
            error=outcome.error,
            llm_calls=outcome.llm_calls,
            prompt_tokens=outcome.prompt_tokens,
            completion_tokens=outcome.completion_tokens,
            mode=outcome.mode,
        )

    def apply(self, prepared: object) -> AddResult:
        assert isinstance(prepared, PreparedAdd)  # what `prepare` above handed out
        return self.memory.apply_add(prepared)


def _message(record: ChatRecord) -> dict[str, str]:
    message = {"role": record.role, "content": record.content}
    if record.speaker:
        message["name"] = record.speaker
    return message


def _ok_checksums(store: GraphStore, user_id: str, checksums: list[str]) -> set[str]:
    """The checksums stored as episodes that did not fail (uid = stable_uid(user, checksum))."""
    by_uid = {stable_uid(user_id, c): c for c in checksums}
    found = store.episodes_by_uids(user_id, list(by_uid)) if by_uid else []
    return {by_uid[e.uid] for e in found if e.status != "failed"}


class _ReplayStore:
    """The store as `prepare` sees it when replaying a dead letter: an episode kept with
    status "failed" counts as not stored, so the message is extracted again (and `apply`
    then overwrites the failed episode, whose uid is the same)."""

    def __init__(self, store: GraphStore) -> None:
        self._store = store

    def existing_checksums(self, user_id: str, checksums: list[str]) -> set[str]:
        return _ok_checksums(self._store, user_id, checksums)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def _context(memory: Memory, *, replay: bool) -> AddContext:
    store = cast(GraphStore, _ReplayStore(memory.store)) if replay else memory.store
    return AddContext(store, memory.embedder, memory.retriever, memory.extractor, memory.settings)


def ingest(
    memory: Memory, inputs: IngestInput, progress: ProgressFn | None, **options: Any
) -> IngestReport:
    """Validate the options, then run the pipeline on `memory` (see `Memory.ingest`)."""
    if options.get("dead_letter_path") is None:
        options["dead_letter_path"] = Path(memory.settings.data_dir).expanduser() / DEAD_LETTERS
    try:
        valid = IngestOptions(**options)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid ingest options: {exc}") from exc
    return Ingestor(MemorySteps(memory), valid, progress).run(inputs)
