"""What the ingest pipeline asks of the memory it fills: `Steps`, the two halves of adding one
message, and `Extracted`, what preparing one gave."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from engine.ingest.chat_records import ChatRecord
from engine.ingest.sources import Job
from engine.models import AddResult


@dataclass(slots=True)
class Extracted:
    """What preparing one message gave: something to apply, "already stored", or an error.

    With an error, `prepared` (when set) is still applied: it keeps the message as a failed
    episode, so nothing said is lost even before the dead letter is replayed.
    """

    prepared: object | None = None
    stored: bool = False
    error: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    mode: str | None = None


class Steps(Protocol):
    """The two halves of adding one message, as the pipeline drives them."""

    max_message_chars: int  # a longer message is split into pieces that fit

    def keys(self, record: ChatRecord, user_id: str) -> tuple[str, ...]:
        """The checksums the record's episode may be stored under, the one it gets now first
        (`sources.KeyFn`); InvalidInputError if unusable."""
        ...

    def stored(self, user_id: str, checksums: list[str], texts: list[str]) -> dict[str, str | None]:
        """The checksums the user's memory holds as episodes (failed ones too), with their
        text for those of `texts` (None for the others)."""
        ...

    def failed(self, user_id: str, checksums: list[str]) -> set[str]:
        """Which of these checksums the user's memory holds as failed episodes."""
        ...

    def prepare(self, job: Job) -> Extracted:
        """Validate and extract (the slow, parallel half). Thread-safe."""
        ...

    def apply(self, prepared: object) -> AddResult:
        """Resolve and write (the ordered half)."""
        ...
