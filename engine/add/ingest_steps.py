"""The ingest pipeline's `Steps` on an `Adder`: one `ChatRecord` is one add of one message."""

from __future__ import annotations

from engine.add.adder import Adder
from engine.add.messages import record_checksums, record_message
from engine.add.prepare import AddRequest, PreparedAdd
from engine.ingest.chat_records import ChatRecord
from engine.ingest.sources import Job
from engine.ingest.steps import Extracted
from engine.models import AddResult


class AddSteps:
    """Implements `engine.ingest.steps.Steps` with the two phases of an add.

    Args:
        adder: adds to the memory the pipeline fills.
        extracting: the run extracts (not a dry run): the extractor is built now, so a
            configuration that cannot extract stops the run before any message is read,
            instead of failing every message as a dead letter.

    Raises:
        ConfigError: with `extracting`, the extractor cannot be built (OpenAI's API without
            OPENAI_API_KEY).
    """

    def __init__(self, adder: Adder, *, extracting: bool = False) -> None:
        self.adder = adder
        self.max_message_chars = adder.settings.max_message_chars
        if extracting:
            adder.extractor()

    def keys(self, record: ChatRecord, user_id: str) -> tuple[str, ...]:
        return record_checksums(record, user_id, self.adder.settings.max_message_chars)

    def stored(self, user_id: str, checksums: list[str], texts: list[str]) -> dict[str, str | None]:
        return self.adder.reads.stored_texts(user_id, checksums, texts)

    def failed(self, user_id: str, checksums: list[str]) -> set[str]:
        return self.adder.reads.failed_checksums(user_id, checksums)

    def prepare(self, job: Job) -> Extracted:
        record = job.record
        request = AddRequest(
            [record_message(record)],
            job.user_id,
            session_id=record.session_id,
            metadata=dict(record.metadata) or None,
            ts=record.ts,
            source=record.source,
            key=job.checksum,  # what it is stored under, found by the pipeline
            retry=job.retry,  # stored as failed: the write lands on that episode
        )
        prepared = self.adder.prepare(request)
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
        return self.adder.apply(prepared)
