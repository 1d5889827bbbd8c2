"""One user's whole memory graph as a versioned document: the lossless export format.

Times are kept as the epoch seconds the store holds (not datetimes), read exactly: FalkorDB
writes a float into a reply with 15 significant digits (a time to the microsecond has 16), so
the export's reads give each time as whole seconds and parts of 2**-52 s
(`engine.store.rows.exact_time`), and an export -> import round trip restores every time bit
for bit. Other floats come as the store gives them: from FalkorDB a confidence to 15
significant digits, a vector's float32 values likewise; written back, they read the same again.
The document is validated when it is read: the relationship types are upper snake case in any
script (`normalize.is_relation_type`), every fact and episode points at an entity of the
document, and no text holds NUL (neither database round-trips it through a parameter) or a
lone surrogate (UTF-8 cannot carry it): refused, as `add` and `add_facts` refuse them, not
cleaned.

Example:
    >>> doc = GraphSnapshot(user_id="alice", exported_at=0.0)
    >>> GraphSnapshot.model_validate_json(doc.model_dump_json()) == doc
    True
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidationInfo,
    field_validator,
    model_validator,
)

from engine.errors import InvalidInputError
from engine.models import CHANGE_EVENTS, UNCHANGED_DETAILS
from engine.normalize import check_storable, is_relation_type
from engine.store.rows import exact_time
from engine.times import StoredUnit

SNAPSHOT_FORMAT: Literal["graphmem-graph"] = "graphmem-graph"
SNAPSHOT_VERSION: Literal[1] = 1


def _packed(vector: Sequence[float]) -> Sequence[float]:
    """The values in one array of doubles: 8 bytes each, where a list of floats takes 32 (a
    30,000-fact export's vectors took 1.2 GB as lists), every value kept as read."""
    return array("d", vector)


# A record's vector: read as a list, kept packed, written as a list again.
Embedding = Annotated[Sequence[float], AfterValidator(_packed), PlainSerializer(list)]


# epoch seconds, as read (`exact_time`) or as a document holds them
Time = Annotated[float, BeforeValidator(exact_time)]
MaybeTime = Annotated[float | None, BeforeValidator(exact_time)]


def _storable(value: Any, field: str) -> Any:
    """`value` (a text or a list of them) when every text is storable, as `add` and
    `add_facts` require (`check_storable`: no NUL, no lone surrogate), named `field`."""
    texts = value if isinstance(value, list) else [value]
    try:
        for text in texts:
            if isinstance(text, str):
                check_storable(text, field)
    except InvalidInputError as exc:
        raise ValueError(str(exc)) from None
    return value


def _rel_type(value: str) -> str:
    if not is_relation_type(value):
        raise ValueError(f"{value!r} is not an UPPER_SNAKE_CASE relationship type")
    return value


RelType = Annotated[str, AfterValidator(_rel_type)]
# How often a record was met: a count, far below where a store's 64-bit counter adding the
# next mention would wrap (10**30 was stored as the largest, then wrapped to the smallest)
Mentions = Annotated[int, Field(ge=0, le=10**15)]


# a load mark as the store keeps it (hex digits), and at most how many an entity holds
LoadMarkText = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$")]
MAX_LOAD_MARKS = 64


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=True)

    @field_validator("*")
    @classmethod
    def _check_text(cls, value: Any, info: ValidationInfo) -> Any:
        return _storable(value, info.field_name or "text")


class EntityRecord(_Record):
    """An `:Entity` node with every property graphmem writes."""

    uid: str
    key: str
    name: str
    type: str | None = None
    aliases: list[str] = Field(default_factory=list)
    alias_keys: list[str] = Field(default_factory=list)
    mentions: Mentions = 0
    first_seen: MaybeTime = None
    last_seen: MaybeTime = None
    created_at: MaybeTime = None
    updated_at: MaybeTime = None
    embedding: Embedding | None = None
    # the marks of the loads that counted its mentions (engine/load/plan.py), so a load run
    # again after an import counts none twice; an export older than them has none
    load_marks: list[LoadMarkText] = Field(default_factory=list, max_length=MAX_LOAD_MARKS)


class RelationshipRecord(_Record):
    """The typed relationship form of a fact: `(subject)-[:TYPE {uid, ...}]->(object)`."""

    type: RelType
    valid_at: MaybeTime = None
    invalid_at: MaybeTime = None
    mentions: Mentions = 0
    last_seen: MaybeTime = None


class FactRecord(_Record):
    """A `:Fact` node with its SUBJECT and OBJECT, and its typed relationship when present."""

    uid: str
    subject_uid: str
    object_uid: str
    predicate: RelType
    text: str
    valid_at: MaybeTime = None
    # how precisely valid_at is known; None (and an export older than units): to the day
    valid_unit: StoredUnit = None
    invalid_at: MaybeTime = None
    mentions: Mentions = 0
    first_seen: MaybeTime = None
    last_seen: MaybeTime = None
    episodes: list[str] = Field(default_factory=list)
    confidence: float = 1.0
    created_at: MaybeTime = None
    updated_at: MaybeTime = None  # its text or times last changed by hand
    embedding: Embedding | None = None
    relationship: RelationshipRecord | None = None


class EpisodeRecord(_Record):
    """An `:Episode` node (a raw message) with the entities it MENTIONS."""

    uid: str
    session_id: str | None = None
    role: str
    speaker: str | None = None
    content: str
    ts: Time
    source: str | None = None
    checksum: str
    status: str | None = None
    error: str | None = None
    metadata: str | None = None  # JSON text, as stored
    created_at: MaybeTime = None
    undated: bool | None = None  # true: no time known, `ts` only orders it (see `Episode.ts`)
    entity_uids: list[str] = Field(default_factory=list)  # a set: kept sorted

    @field_validator("entity_uids")
    @classmethod
    def _sorted(cls, value: list[str]) -> list[str]:
        return sorted(set(value))


class HistoryRecord(_Record):
    """A `:History` change event."""

    uid: str
    target_uid: str
    event: str
    ts: Time
    episode_uid: str | None = None
    detail: str | None = None


def last_changes(history: list[HistoryRecord]) -> dict[str, float]:
    """The time of each target's latest change event (`engine.models.CHANGE_EVENTS`): an
    import keeps a held fact's text and valid_at when the store changed it later."""
    out: dict[str, float] = {}
    for h in history:
        if h.event in CHANGE_EVENTS and (h.detail or "") not in UNCHANGED_DETAILS:
            out[h.target_uid] = max(h.ts, out.get(h.target_uid, h.ts))
    return out


class GraphSnapshot(_Record):
    """Everything one user's memory holds. `format` and `version` say how to read it."""

    format: Literal["graphmem-graph"] = SNAPSHOT_FORMAT
    version: Literal[1] = SNAPSHOT_VERSION
    user_id: str
    exported_at: float
    entities: list[EntityRecord] = Field(default_factory=list)
    facts: list[FactRecord] = Field(default_factory=list)
    episodes: list[EpisodeRecord] = Field(default_factory=list)
    history: list[HistoryRecord] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> Self:
        uids = {e.uid for e in self.entities}
        keys = [e.key for e in self.entities]
        if len(uids) != len(self.entities) or len(set(keys)) != len(keys):
            raise ValueError("two entities share a uid or a key")
        for fact in self.facts:
            if not {fact.subject_uid, fact.object_uid} <= uids:
                raise ValueError(f"fact {fact.uid!r} names an entity missing from the document")
            if fact.relationship is not None and fact.relationship.type != fact.predicate:
                raise ValueError(
                    f"fact {fact.uid!r} is {fact.predicate} but its relationship is "
                    f"{fact.relationship.type}"
                )
        for episode in self.episodes:
            if not set(episode.entity_uids) <= uids:
                raise ValueError(f"episode {episode.uid!r} mentions a missing entity")
        return self
