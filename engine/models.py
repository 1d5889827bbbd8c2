"""The domain models graphmem returns and accepts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.normalize import entity_key
from engine.prompt_block import (
    Piece,
    check_budget,
    estimate_tokens,
    fact_piece,
    nothing_about,
    pack,
    path_piece,
    said_day,
)
from engine.times import FactUnit, GivenValidAt, time_unit

Leg = Literal["expansion", "semantic", "path", "episodes", "facts", "reply"]


def to_epoch(value: datetime | float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.timestamp()
    return float(value)


def from_epoch(value: Any) -> datetime | None:
    if value is None:
        return None
    return datetime.fromtimestamp(float(value), tz=UTC)


class FactInput(BaseModel):
    """A pre-extracted fact: `(subject, predicate, object)` plus optional details."""

    model_config = ConfigDict(extra="forbid")

    subject: str
    predicate: str
    object: str
    text: str | None = None
    subject_type: str | None = None
    object_type: str | None = None
    valid_at: GivenValidAt = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)


class Entity(BaseModel):
    uid: str
    user_id: str
    key: str
    name: str
    type: str | None = None
    aliases: list[str] = Field(default_factory=list)
    mentions: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> Entity:
        name = props["name"]
        own = entity_key(name)  # a name the entity is shown by is no other name of it
        return cls(
            uid=props["uid"],
            user_id=props["user_id"],
            key=props["key"],
            name=name,
            type=props.get("type"),
            aliases=[a for a in props.get("aliases") or [] if entity_key(a) != own],
            mentions=int(props.get("mentions") or 0),
            first_seen=from_epoch(props.get("first_seen")),
            last_seen=from_epoch(props.get("last_seen")),
        )


class Fact(BaseModel):
    uid: str
    user_id: str
    subject: str
    predicate: str
    object: str
    subject_uid: str
    object_uid: str
    text: str
    valid_at: datetime | None = None
    valid_unit: FactUnit = None  # how precisely valid_at is known ("last year": a year)
    invalid_at: datetime | None = None
    mentions: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    updated_at: datetime | None = None  # its text or times last changed by hand (`update`)
    episodes: list[str] = Field(default_factory=list)
    confidence: float = 1.0

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.subject, self.predicate, self.object)

    @property
    def is_valid(self) -> bool:
        return self.invalid_at is None

    @classmethod
    def from_props(
        cls, props: dict[str, Any], subject: dict[str, Any], obj: dict[str, Any]
    ) -> Fact:
        return cls(
            uid=props["uid"],
            user_id=props["user_id"],
            subject=subject["name"],
            predicate=props["predicate"],
            object=obj["name"],
            subject_uid=subject["uid"],
            object_uid=obj["uid"],
            text=props["text"],
            valid_at=from_epoch(props.get("valid_at")),
            valid_unit=time_unit(props.get("valid_unit")),
            invalid_at=from_epoch(props.get("invalid_at")),
            mentions=int(props.get("mentions") or 0),
            first_seen=from_epoch(props.get("first_seen")),
            last_seen=from_epoch(props.get("last_seen")),
            updated_at=from_epoch(props.get("updated_at")),
            episodes=list(props.get("episodes") or []),
            confidence=float(props.get("confidence", 1.0)),
        )


class Episode(BaseModel):
    uid: str
    user_id: str
    session_id: str | None = None
    role: str
    speaker: str | None = None
    content: str
    # when it was said; None for a message read without a time (an undated chat-log record)
    ts: datetime | None
    source: str | None = None
    checksum: str
    status: str = "ok"
    error: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_props(cls, props: dict[str, Any]) -> Episode:
        return cls(
            uid=props["uid"],
            user_id=props["user_id"],
            session_id=props.get("session_id"),
            role=props["role"],
            speaker=props.get("speaker"),
            content=props["content"],
            ts=None if props.get("undated") else from_epoch(props.get("ts")),
            source=props.get("source"),
            checksum=props["checksum"],
            status=props.get("status") or "ok",
            error=props.get("error"),
            metadata=json.loads(props["metadata"]) if props.get("metadata") else {},
        )


class Snippet(BaseModel):
    """A message as a search returns it: who said what, when, in which session."""

    uid: str
    speaker: str | None = None
    role: str
    ts: datetime | None  # None: said at an unknown time (see `Episode.ts`)
    session_id: str | None = None
    source: str | None = None  # where it came from: a file and line, a LoCoMo turn id
    text: str

    def line(self) -> str:
        who = self.speaker or self.role
        text = " ".join(self.text.split())  # one line, however the message was laid out
        return f"[{said_day(self.ts)}] {who}: {text}"


class LegRank(BaseModel):
    """A hit's place in one leg: its rank there (from 1) and the leg's own score (the
    expansion's path score, the semantic leg's cosine, the episode leg's words and meaning)."""

    rank: int
    score: float


class Explanation(BaseModel):
    """How a hit was found and ranked (`Memory.search(..., explain=True)`)."""

    legs: dict[str, LegRank] = Field(default_factory=dict)  # each leg that found it
    # facts: the reciprocal-rank fusion of the legs, before the boosts
    fused: float | None = None
    # facts: how well the expansion's best path explains the query, in [0, 1]: the weight of
    # the expansion's vote in the fusion
    confidence: float | None = None
    anchor: str | None = None  # facts the expansion reached: the entity it started from
    relations: list[str] = Field(default_factory=list)  # ... and the relation path it took
    paths: int | None = None  # ... and how many paths reached it
    boost: float | None = None  # facts: the factor of mentions, recency, an unwalked anchor
    # facts: the factor from their messages the episode leg found; messages: what the fact
    # legs added for the facts they back
    provenance: float | None = None


class ScoredFact(BaseModel):
    fact: Fact
    score: float
    hop: int | None = None
    legs: list[Leg] = Field(default_factory=list)
    sources: list[Snippet] = Field(default_factory=list)  # the messages it came from
    # cosine of the query and the fact's sentence: known when the semantic leg read it, and
    # read for every hit when the search has a `min_similarity` or `explain`
    similarity: float | None = None
    explanation: Explanation | None = None  # with `explain=True`


class ScoredEpisode(BaseModel):
    """A message found by the episode leg ("episodes") or behind found facts ("facts")."""

    episode: Snippet
    score: float
    legs: list[Leg] = Field(default_factory=list)
    # leg "reply": the uid of the found message asking the question this one follows (and
    # likely answers), shown right after it (engine/retrieval/replies.py)
    reply_to: str | None = None
    # cosine of the query and the message: as `ScoredFact.similarity`
    similarity: float | None = None
    explanation: Explanation | None = None  # with `explain=True`


class ScoredEntity(BaseModel):
    entity: Entity
    score: float


class Path(BaseModel):
    """Facts joining two anchors, in walking order."""

    entities: list[str]
    facts: list[Fact]


class Premise(BaseModel):
    """The query names one speaker; the facts nearest what it asks are another's
    (`engine.retrieval.premise`)."""

    named: str  # the speaker the question names
    matches: str  # the other speaker, whose facts are nearer what it asks

    def note(self) -> str:
        about = f"about {self.matches}, not {self.named}"
        return f"Note: the memories nearest this question are {about}."


class SearchResult(BaseModel):
    query: str
    user_id: str
    facts: list[ScoredFact] = Field(default_factory=list)
    episodes: list[ScoredEpisode] = Field(default_factory=list)
    entities: list[ScoredEntity] = Field(default_factory=list)
    paths: list[Path] = Field(default_factory=list)
    anchors: list[str] = Field(default_factory=list)
    candidates: int = 0
    timings_ms: dict[str, float] = Field(default_factory=dict)
    # vector indexes still being built after a reopen: their legs scanned the user's nodes
    warming: list[str] = Field(default_factory=list)
    # names the query asks about that nothing stored holds, all of them (`context()` names
    # the first few): its hits are about others
    unknown_names: list[str] = Field(default_factory=list)
    premise: Premise | None = None  # another speaker's facts are nearer what it asks
    # the budget `search(max_tokens=)` retrieved for: `context()`'s default
    max_tokens: int | None = None

    def context(self, max_tokens: int | None = None) -> str:
        """A block for a prompt of at most `max_tokens` (default: the search's `max_tokens`,
        else 512): facts, connections and messages taken in turn by rank, a fact left out
        when its message is in, an entity's facts on one line, dated where known
        (`engine.prompt_block`). Tokens are estimated as words * 4/3. When the query names
        someone nothing stored holds (`unknown_names`), the block opens by saying so; a budget
        too small for that line holds no hit either, only "Nothing stored mentions Bob." when
        that fits. When the memories nearest the question are about another speaker than the
        one it names (`premise`), the block opens with that note.
        """
        budget = check_budget(max_tokens if max_tokens is not None else self.max_tokens or 512)
        found = bool(self.facts or self.episodes or self.paths)
        head = nothing_about(self.unknown_names, found) if self.unknown_names else ""
        if not head and self.premise is not None:
            head = self.premise.note()
        if head and estimate_tokens(head) > budget:
            # without the line that says they are about others, the hits read as the answer
            return pack([], budget, nothing_about(self.unknown_names, False))
        names = ", ".join(se.entity.name for se in self.entities)
        return pack(self._pieces(), budget, head, f"Relevant entities: {names}" if names else "")

    def _pieces(self) -> Iterator[Piece]:
        for rank, scored in enumerate(self.episodes, start=1):
            said = scored.episode
            day = said_day(said.ts)
            yield Piece(rank, "message", said.line(), day, frozenset({said.uid}))
        for rank, hit in enumerate(self.facts, start=1):
            f = hit.fact
            yield fact_piece(rank, f.uid, f.text, f.subject, fact_day(hit), f.episodes)
        for rank, path in enumerate(self.paths, start=1):
            yield path_piece(rank, [(f.uid, f.text) for f in path.facts])


def fact_day(hit: ScoredFact) -> str:
    """When a found fact became true, as precisely as it is known (`said_day`), else the day
    of the first message it came from; UNDATED when neither is known."""
    if hit.fact.valid_at is not None:
        return said_day(hit.fact.valid_at, hit.fact.valid_unit)
    return said_day(hit.sources[0].ts if hit.sources else None)


class AddResult(BaseModel):
    """What one write did. For `Memory.add`: `episode_uids` are the episodes written by this
    call (`episodes_skipped` were already stored or repeated in the call); `errors` lists
    messages left out, facts or invalidations dropped, and the extraction failure if any
    (also in `extraction_error`: the episodes are then kept with status "failed")."""

    user_id: str
    facts_added: int = 0
    facts_updated: int = 0
    facts_invalidated: int = 0
    entities_added: int = 0
    entities_merged: int = 0
    fact_uids: list[str] = Field(default_factory=list)
    invalidated_uids: list[str] = Field(default_factory=list)
    entity_uids: list[str] = Field(default_factory=list)
    episode_uids: list[str] = Field(default_factory=list)
    episodes_skipped: int = 0
    errors: list[str] = Field(default_factory=list)
    extraction_error: str | None = None
    extractor: str | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_latency_ms: float = 0.0
    latency_ms: float = 0.0


# The detail of the UPDATE an add writes for a known fact said again (invalidated: made valid).
SAID_AGAIN = "said again"
REVALIDATED = "revalidated: said again"
# A fact's change events: those written when its text or valid_at may change. ADD (an add),
# UPDATE (by hand: `Memory.update`, mem0's update) and MERGE (`merge_entities` moves or joins
# it), except the UPDATEs of a fact said again (`UNCHANGED_DETAILS`: mentions and sources
# only). An INVALIDATE only ends a fact; DELETE is never written for one.
CHANGE_EVENTS = ("ADD", "UPDATE", "MERGE")
UNCHANGED_DETAILS = (SAID_AGAIN, REVALIDATED)


class HistoryEvent(BaseModel):
    uid: str
    target_uid: str
    user_id: str
    event: Literal["ADD", "UPDATE", "INVALIDATE", "DELETE", "MERGE"]
    ts: datetime
    episode_uid: str | None = None
    detail: str | None = None


class Stats(BaseModel):
    users: int
    entities: int
    facts: int
    valid_facts: int
    episodes: int
    warming: list[str] = Field(default_factory=list)  # vector indexes still being built
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


class UserSummary(BaseModel):
    """One user of a store and the size of their memory (`Memory.users`)."""

    user_id: str
    entities: int = 0
    facts: int = 0
    valid_facts: int = 0
    episodes: int = 0


class Deleted(BaseModel):
    """What a delete removed, by uid: facts, messages (episodes) and entities."""

    facts: list[str] = Field(default_factory=list)
    episodes: list[str] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
