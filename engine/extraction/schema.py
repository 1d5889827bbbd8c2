"""What an extractor returns: the tool-call schema the LLM fills, and the extractor port.

The `Field` descriptions are the prompt contract: the LLM sees them in the tool schema.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from engine.times import TimeUnit


class ExtractedEntity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(
        description="The entity's name as the text gives it; for the speaker "
        "use 'USER' unless their name is known."
    )
    type: str = Field(
        default="Thing",
        description="A short type, e.g. Person, Animal, Place, "
        "Organization, Activity, Food, Thing.",
    )
    aliases: list[str] = Field(default_factory=list, description="Other names used for it.")


class ExtractedFact(BaseModel):
    model_config = ConfigDict(extra="ignore")

    source: str = Field(description="Name of the subject entity.")
    predicate: str = Field(
        description="Relation in UPPER_SNAKE_CASE English, e.g. LIKES, "
        "FRIEND_OF, HAS_PET, LIVES_IN, HAS_NAME."
    )
    target: str = Field(description="Name of the object entity.")
    fact: str = Field(description="The fact as one short natural sentence.")
    valid_at: datetime | None = Field(default=None, description="When it became true, if said.")
    valid_unit: TimeUnit | None = Field(
        default=None,
        description="How precisely the messages give valid_at: 'day' (yesterday, on Monday, "
        "8 May 2023), 'week' (last week, two weeks ago), 'month' (last month, in May, June "
        "2022) or 'year' (last year, in 2022); null when valid_at is null or a day.",
    )
    # left out of the LLM's tool schema, which cannot say it; the offline extractor sets it
    said_with: SkipJsonSchema[str | None] = Field(
        default=None,
        description="Facts of one extraction that share it were said in one coordination "
        '("I live in Rome and Madrid"): all hold at once, none replaces another.',
    )

    @field_validator("valid_unit", mode="before")
    @classmethod
    def _unit_in_lower_case(cls, value: Any) -> Any:
        """A unit given as "Year" is a year (models capitalise); any other value is refused."""
        return value.strip().casefold() if isinstance(value, str) else value


class Invalidation(BaseModel):
    model_config = ConfigDict(extra="ignore")

    fact_id: str = Field(
        description="The id of a known fact that the new message contradicts or ends."
    )
    reason: str = Field(default="", description="Why it no longer holds.")


class Extraction(BaseModel):
    """Everything one message batch says: new entities, new facts, ended facts."""

    model_config = ConfigDict(extra="ignore")

    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)
    invalidations: list[Invalidation] = Field(default_factory=list)


class KnownFact(BaseModel):
    """A fact already stored, shown to the extractor so it can update or invalidate it."""

    id: str
    text: str
    source: str
    predicate: str
    target: str


class ChatMessage(BaseModel):
    """One message as the extractors read it.

    `name` is the speaker (OpenAI's `name`): who "I/me/my" means in the message; without one,
    a user message speaks for the user. `ts` is when it was written, if known: relative dates
    ("yesterday") are read against it.
    """

    role: str = "user"
    content: str
    name: str | None = None
    ts: datetime | None = None


class ExtractionOutcome(BaseModel):
    """An extractor's answer plus its accounting; `error` is set when it failed for good."""

    extraction: Extraction = Field(default_factory=Extraction)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    error: str | None = None
    mode: str = "tools"


class Extractor(Protocol):
    """Turns messages into an `Extraction`. Never raises for bad model output: it reports it."""

    name: str

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome: ...


@runtime_checkable
class KnownAfter(Protocol):
    """An `Extractor` that needs the known facts only to find those its facts contradict (same
    subject and object): they are read when its facts are written, between the entities they
    resolved to, and given to `contradicted`, instead of searched for before it as a prompt
    needs them."""

    def contradicted(
        self, outcome: ExtractionOutcome, known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome: ...
