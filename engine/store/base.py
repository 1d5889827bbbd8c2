"""The storage port: what the engine needs from a graph database, and nothing more.

An adapter runs the named statements of `cypher/` (`run`, `nearest`) and writes batches
(`write`); everything that reads in domain terms (`engine.store.reads.Reads`) is built over
these few methods, the same for every adapter.

Contract for every adapter:
- every statement and batch is scoped to one `user_id`; nothing of another user is returned;
- `write` applies a whole batch as one unit (one transaction where the database has them);
- similarities are in [0, 1], higher is closer, whatever the database's own convention;
- driver errors surface as `engine.errors.StoreError` subclasses;
- `setup` is explicit and idempotent; constructors do no schema work.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from engine.cypher import Dialect

RankBy = Literal["salience", "frequency", "recency"]
Rows = list[list[Any]]
Dimension = int | Callable[[], int]  # a vector index's dimension, or what tells it


def dimension_of(dimension: Dimension) -> int:
    return dimension if isinstance(dimension, int) else dimension()


@dataclass(frozen=True, slots=True)
class EntityRow:
    """An entity to write. `on_create`: the change event the write records if it creates the
    entity (not if another writer stored it since it was read), if any. `stored`: the writer
    read it as stored (`aliases`: the other names it was read with) and gives no vector for
    it; deleted since, the write writes nothing (`Written.stored_already`) and the writer
    writes it again whole (`engine.store.whole`)."""

    uid: str
    key: str
    name: str
    type: str | None
    ts: float
    mentions: int = 1
    # a load's marks: the row's mentions split by the names that gave them, each part with
    # a digest of the file's lines naming that name; an entity that holds a part's mark
    # (`load_marks`) counted its mentions already, and the part adds none (a rerun of the
    # load). With marks, the row adds the mentions of its parts, not `mentions`.
    marks: tuple[LoadMark, ...] = ()
    on_create: HistoryRow | None = None
    stored: bool = False
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LoadMark:
    """Part of a load's `EntityRow`: the `mentions` a file's lines naming one name add, and
    `mark`, the digest of those lines (`engine.load.plan`)."""

    mark: str
    mentions: int


@dataclass(frozen=True, slots=True)
class FactRow:
    """A fact to write. `on_create` / `on_match`: the change event the write records when it
    creates the fact / finds it stored already (by another writer, maybe since it was read),
    if any. `stored`: the writer read the fact as stored and gives no vector for it; deleted
    since, the write does not create it (it would have no vector) but names it in
    `Written.vanished`, as a fact naming an entity gone by then."""

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
    on_create: HistoryRow | None = None
    on_match: HistoryRow | None = None
    stored: bool = False
    # how precisely valid_at is known ("week", "month", "year"); None: to the day
    valid_unit: str | None = None


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
class FactEndsRow:
    """A fact's `valid_at` / `invalid_at` set by hand; `set_valid` / `set_invalid` say which
    (None then clears it: an invalidated fact made current again). A `valid_at` set takes
    `valid_unit` with it (None: known to the day)."""

    uid: str
    set_valid: bool = False
    valid_at: float | None = None
    set_invalid: bool = False
    invalid_at: float | None = None
    valid_unit: str | None = None


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
    # no time was known for it (a chat-log record without one): `ts` is then only the time it
    # was stored, its place in the order, never shown as when it was said
    undated: bool = False
    terms: str | None = None  # the episode leg's index terms, stored so a load only reads them
    terms_v: int | None = None  # the version of `terms` (engine.retrieval.lexical.TERMS_VERSION)


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
    undated: bool = False  # as `EpisodeRow.undated`


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
    fact_ends: list[FactEndsRow] = field(default_factory=list)  # set by hand (update, merge)
    invalidate: list[str] = field(default_factory=list)
    invalid_at: float | None = None
    invalid_at_of: dict[str, float] = field(default_factory=dict)  # uid -> its own end
    episodes: list[EpisodeRow] = field(default_factory=list)
    episode_embeddings: dict[str, list[float]] = field(default_factory=dict)
    history: list[HistoryRow] = field(default_factory=list)
    # events of facts this batch creates (a bulk load): written without a lookup
    new_history: list[HistoryRow] = field(default_factory=list)

    def is_empty(self) -> bool:
        return not (
            self.entities
            or self.aliases
            or self.renames
            or self.facts
            or self.fact_texts
            or self.fact_ends
            or self.invalidate
            or self.episodes
            or self.history
            or self.new_history
        )


@dataclass(frozen=True, slots=True)
class FactMoveRow:
    """A fact a merge moves: the fact `old` becomes (or joins) the fact `uid` between
    `subject_uid` and `object_uid` (`cypher/move_facts.cypher`); `event`, its MERGE event."""

    old: str
    uid: str
    subject_uid: str
    object_uid: str
    predicate: str
    event: HistoryRow


@dataclass(slots=True)
class MergeBatch:
    """One entity (`gone`) made part of another (`kept`), applied together from what the store
    holds when it runs, not what was read before (a writer changing either meanwhile loses
    nothing): the facts `moves` names moved with their values then, `drops` (facts between
    the two) deleted, `gone`'s mentions, names (as aliases) and messages then given to
    `kept`, `history` written; and `gone` deleted if nothing names it any more
    (`Written.merged`). A fact naming `gone` that `moves` does not name stays."""

    kept: str
    gone: str
    moves: list[FactMoveRow] = field(default_factory=list)
    drops: list[str] = field(default_factory=list)
    history: list[HistoryRow] = field(default_factory=list)

    def is_empty(self) -> bool:
        return False  # its entities' mentions, names and messages move whatever it names


@dataclass(slots=True)
class RestoreBatch:
    """Exported nodes written back exactly as they were (an import), applied together.

    Each row holds every property its `cypher/restore_*.cypher` statement sets (an entity's
    `type`, a fact's `relationship` with its `type`, an episode's `entity_uids`); the
    embeddings travel apart, by uid, as unit-length lists.
    """

    entities: list[dict[str, Any]] = field(default_factory=list)
    entity_embeddings: dict[str, list[float]] = field(default_factory=dict)
    facts: list[dict[str, Any]] = field(default_factory=list)
    fact_embeddings: dict[str, list[float]] = field(default_factory=dict)
    episodes: list[dict[str, Any]] = field(default_factory=list)
    episode_embeddings: dict[str, list[float]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (self.entities or self.facts or self.episodes)


AnyBatch = WriteBatch | RestoreBatch | MergeBatch  # what `GraphStore.write` applies


@dataclass(frozen=True, slots=True)
class Written:
    """What one `GraphStore.write` wrote, for the add's report (`added`, `added_entities`)
    and the caches that follow the store (the retriever's predicate list and message index)."""

    mentions: dict[str, int] = field(default_factory=dict)  # of each fact, after the write
    added: frozenset[str] = frozenset()  # the facts this write created
    added_entities: frozenset[str] = frozenset()  # the entities this write created
    added_episodes: frozenset[str] = frozenset()  # the episodes an import's write created
    added_history: frozenset[str] = frozenset()  # the change events this write created
    predicates: frozenset[str] = frozenset()  # of the facts written
    episodes: tuple[EpisodeRow, ...] = ()  # the messages a `WriteBatch` wrote
    # a guard said no and nothing of the batch was written: its messages were stored (as
    # good episodes) by another writer since they were looked up
    # (`cypher/guard_new_episodes.cypher`), or an entity written as `EntityRow.stored` is
    # gone (`cypher/guard_stored_entities.cypher`; `engine.store.whole` tells which)
    stored_already: bool = False
    # facts of the batch not written: written as `FactRow.stored` but gone (deleted since
    # they were read), or naming an entity gone; the writer writes them again, whole
    # (`engine.store.whole`)
    vanished: frozenset[str] = frozenset()
    merged: bool = False  # a `MergeBatch`'s merged entity was deleted: nothing names it


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One typed fact relationship read from the node `near` (see `Reads.neighbours`)."""

    near: str
    uid: str
    predicate: str
    outgoing: bool  # the relationship points from `near` to `far`
    far: str
    far_name: str
    far_mentions: int
    mentions: int  # of the fact
    degree: int  # relationships of the types asked for read at `near` (at most the scan)


@dataclass(frozen=True, slots=True)
class VectorRead:
    """The named statements of one vector-indexed label, all scoped to `$user_id`:
    `count` counts the user's nodes up to `$cap`; `index` asks the shared vector index for
    `$k` neighbours and keeps the user's best `$limit` that pass the filters; `scan` compares
    the query with each of the user's nodes and keeps the best `$limit` (exact)."""

    count: str
    index: str
    scan: str


@runtime_checkable
class GraphStore(Protocol):
    """A graph database holding every user's memory graph.

    Example:
        >>> store = FalkorDBStore.embedded(EmbeddedServer(data_dir))  # doctest: +SKIP
        >>> store.setup(dimension=384)  # doctest: +SKIP
        >>> Reads(store).predicates("alice")  # doctest: +SKIP
        {'LIKES': (3, 3), 'LIVES_IN': (1, 0)}
    """

    dialect: Dialect

    def setup(self, dimension: Dimension) -> None:
        """Declare the constraints and indexes (`dimension`: of the vector indexes, or what
        tells it; asked only when a vector index is declared, so opening a store that has
        them does not wait for the model)."""
        ...

    def run(
        self,
        name: str,
        params: dict[str, Any],
        *,
        read_only: bool = True,
        rel_types: list[str] | None = None,
        rel_type_groups: list[list[str]] | None = None,
    ) -> Rows:
        """Rows of the named statement `name` from `cypher/` (the dialect's variant where
        there is one), its relationship type placeholder filled with `rel_types` if given (or
        its block repeated for each of `rel_type_groups`).
        `read_only=False` for a statement that writes."""
        ...

    def nearest(self, read: VectorRead, params: dict[str, Any], k: int) -> Rows:
        """Rows of the asking user's (`params["user_id"]`) k nodes nearest to
        `params["embedding"]` of one vector-indexed label, by the statements of `read`."""
        ...

    def write(self, user_id: str, batch: AnyBatch) -> Written:
        """Apply `batch`; return what it wrote, each fact's mention count after the write
        among it. A batch of messages of which one is stored already as a good episode
        writes nothing (`Written.stored_already`): two writers that both found a message new
        do not both count what it says. Nor does a batch naming an entity it writes as
        `EntityRow.stored` that the user no longer holds (it would be made without a vector)."""
        ...

    def generation(self, user_id: str) -> str | None:
        """An opaque token that changes after every write that may have changed the user's
        graph, by any process sharing the store: read it before reading the graph, and what
        was read still holds while it stays the same. Cheap (one round trip at most). None:
        this store cannot say (keep nothing read from it)."""
        ...

    def delete_user(self, user_id: str) -> int:
        """Delete every node of `user_id`; return how many."""
        ...

    def reset(self) -> None:
        """Delete every user's nodes."""
        ...

    def warming(self) -> list[str]:
        """Labels whose vector index is still being built (their vector reads scan the
        user's nodes meanwhile: exact, slower for a large user); empty once every index
        serves."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class BulkWrites(Protocol):
    """A store that can set its indexes aside for a bulk load's writes and build them after
    (`warming()` names them meanwhile); a store without it writes a load as any write."""

    def bulk_writing(self, adding: int) -> AbstractContextManager[None]:
        """Around the writes of `adding` nodes."""
        ...


def bulk_writing(store: GraphStore, adding: int) -> AbstractContextManager[None]:
    """`store.bulk_writing(adding)` where the store offers it (`BulkWrites`)."""
    return store.bulk_writing(adding) if isinstance(store, BulkWrites) else nullcontext()
