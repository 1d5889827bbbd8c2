"""The storage port: what the engine needs from a graph database, in domain terms.

Contract for every adapter:
- every read and write is scoped to one `user_id`; nothing of another user is ever returned;
- `write` applies a whole `WriteBatch` as one unit (one transaction where the database has them);
- similarities are in [0, 1], higher is closer, whatever the database's own convention;
- driver errors surface as `engine.errors.StoreError` subclasses;
- `setup` is explicit and idempotent; constructors do no schema work.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from engine.models import Entity, Episode, Fact, HistoryEvent
from engine.transfer.snapshot import EntityRecord, EpisodeRecord, FactRecord, HistoryRecord

Dialect = Literal["falkordb", "neo4j"]
RankBy = Literal["salience", "frequency", "recency"]


@dataclass(frozen=True, slots=True)
class EntityRow:
    uid: str
    key: str
    name: str
    type: str | None
    ts: float
    mentions: int = 1


@dataclass(frozen=True, slots=True)
class FactRow:
    uid: str
    subject_uid: str
    object_uid: str
    predicate: str
    text: str
    ts: float
    valid_at: float | None = None
    confidence: float = 1.0
    episode: str | None = None
    mentions: int = 1


@dataclass(frozen=True, slots=True)
class AliasRow:
    uid: str
    alias: str
    key: str


@dataclass(frozen=True, slots=True)
class RenameRow:
    """An entity's new display name; the old name becomes an alias and `key` an alias key
    (the entity's own `key` never changes, so `(user_id, key)` stays unique)."""

    uid: str
    name: str
    key: str


@dataclass(frozen=True, slots=True)
class EpisodeRow:
    uid: str
    session_id: str | None
    role: str
    content: str
    ts: float
    source: str | None
    checksum: str
    status: str = "ok"
    entity_uids: tuple[str, ...] = ()
    error: str | None = None
    metadata: str | None = None  # JSON text: graph properties cannot hold maps
    speaker: str | None = None  # who wrote it: whom "I" means in it


@dataclass(frozen=True, slots=True)
class EpisodeText:
    """What the episode leg's lexical index keeps of a message."""

    uid: str
    session_id: str | None
    speaker: str | None
    role: str
    content: str
    ts: float
    source: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryRow:
    uid: str
    target_uid: str
    event: str
    ts: float
    episode_uid: str | None = None
    detail: str | None = None


@dataclass(slots=True)
class WriteBatch:
    """Everything one add writes, applied together. Embeddings are unit-length lists."""

    entities: list[EntityRow] = field(default_factory=list)
    entity_embeddings: dict[str, list[float]] = field(default_factory=dict)
    aliases: list[AliasRow] = field(default_factory=list)
    renames: list[RenameRow] = field(default_factory=list)
    facts: list[FactRow] = field(default_factory=list)
    fact_embeddings: dict[str, list[float]] = field(default_factory=dict)
    fact_texts: dict[str, str] = field(default_factory=dict)  # uid -> new sentence
    invalidate: list[str] = field(default_factory=list)
    invalid_at: float | None = None
    episodes: list[EpisodeRow] = field(default_factory=list)
    episode_embeddings: dict[str, list[float]] = field(default_factory=dict)
    history: list[HistoryRow] = field(default_factory=list)
    # events of facts this batch creates (a bulk load): written without a lookup
    new_history: list[HistoryRow] = field(default_factory=list)
    # import: exported records written back exactly as they were (see engine.transfer.export)
    restore_entities: list[EntityRecord] = field(default_factory=list)
    restore_facts: list[FactRecord] = field(default_factory=list)
    restore_episodes: list[EpisodeRecord] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (
            self.entities
            or self.facts
            or self.fact_texts
            or self.invalidate
            or self.episodes
            or self.history
            or self.new_history
            or self.restore_entities
            or self.restore_facts
            or self.restore_episodes
        )


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One typed fact relationship read from the node `near` (see `GraphStore.neighbours`)."""

    near: str
    uid: str
    predicate: str
    outgoing: bool  # the relationship points from `near` to `far`
    far: str
    far_name: str
    far_mentions: int
    mentions: int  # of the fact
    degree: int  # relationships of the types asked for read at `near` (at most the scan)


@runtime_checkable
class GraphStore(Protocol):
    """A graph database holding every user's memory graph."""

    dialect: Dialect

    def setup(self, dimension: int) -> None: ...
    def read_named(self, name: str, params: dict[str, Any]) -> list[list[Any]]:
        """Rows of a named read statement from `cypher/` (for importers of foreign graphs)."""
        ...

    def write(self, user_id: str, batch: WriteBatch) -> dict[str, int]:
        """Apply `batch`; return each written fact's mention count after the write."""
        ...

    def entities_by_keys(self, user_id: str, keys: list[str]) -> dict[str, Entity]: ...
    def entities_by_uids(self, user_id: str, uids: list[str]) -> list[Entity]: ...
    def facts_by_uids(self, user_id: str, uids: list[str]) -> list[Fact]: ...
    def list_facts(
        self, user_id: str, *, include_invalid: bool, skip: int, limit: int
    ) -> list[Fact]: ...
    def entity_facts(
        self, user_id: str, uid: str, *, include_invalid: bool, limit: int
    ) -> list[Fact]: ...
    def fulltext_entities(
        self, user_id: str, terms: list[str], k: int
    ) -> list[tuple[Entity, float]]: ...
    def vector_entities(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[Entity, float]]: ...
    def vector_facts(
        self, user_id: str, embedding: list[float], k: int, *, include_invalid: bool
    ) -> list[tuple[Fact, float]]: ...
    def neighbours(
        self,
        user_id: str,
        nodes: list[str],
        *,
        predicates: list[str] | None,
        scan: int,
        limit: int,
        total: int,
        include_invalid: bool,
    ) -> list[Neighbour]:
        """One hop from each of `nodes` over the fact relationships of the `predicates` types
        (None: any type), read by relationship type so a hub's other edges are never touched;
        at most `scan` relationships read per node, of which the `limit` with the most
        mentioned neighbours are returned, and at most `total` read in all (the first nodes
        first: a read of many nodes costs what it returns, not what they hold)."""
        ...

    def relation_types(
        self, user_id: str, nodes: list[str], *, include_invalid: bool
    ) -> dict[str, dict[str, int]]:
        """How many fact relationships of each type each of `nodes` has (they should not be
        hubs: this reads every edge of a node)."""
        ...

    def predicates(self, user_id: str) -> list[str]: ...
    def top_entities(
        self, user_id: str, k: int, by: RankBy, now: float, half_life_s: float
    ) -> list[tuple[Entity, float]]: ...
    def history(self, user_id: str, target_uid: str) -> list[HistoryEvent]: ...
    def episodes_by_uids(self, user_id: str, uids: list[str]) -> list[Episode]: ...
    def entity_episodes(self, user_id: str, uid: str, limit: int) -> list[Episode]: ...
    def vector_episodes(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[str, float]]:
        """Uids and similarities of the user's k episodes nearest to `embedding`."""
        ...

    def episode_texts(self, user_id: str, skip: int, limit: int) -> list[EpisodeText]: ...
    def count_episodes(self, user_id: str) -> int: ...
    def existing_checksums(self, user_id: str, checksums: list[str]) -> set[str]: ...
    # export: a user's whole graph page by page, every property, in uid order
    def user_entities(self, user_id: str, skip: int, limit: int) -> list[EntityRecord]: ...
    def user_facts(self, user_id: str, skip: int, limit: int) -> list[FactRecord]: ...
    def user_episodes(self, user_id: str, skip: int, limit: int) -> list[EpisodeRecord]: ...
    def user_history(self, user_id: str, skip: int, limit: int) -> list[HistoryRecord]: ...
    def delete_fact(self, user_id: str, uid: str) -> bool: ...
    def delete_user(self, user_id: str) -> int: ...
    def reset(self) -> None: ...
    def counts(self, user_id: str | None) -> dict[str, int]: ...
    def warming(self) -> list[str]:
        """Labels whose vector index is still being built (their vector reads answer nothing
        meanwhile); empty once every index serves."""
        ...

    def close(self) -> None: ...
