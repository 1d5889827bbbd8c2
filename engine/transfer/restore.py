"""Import: a JSON export written back into a store, for its user or another one.

The import goes through `GraphStore.write` like every other write: each chunk of records is
one batch of idempotent MERGE/SET statements (`cypher/restore_*.cypher`), so rerunning an
import, or resuming one that broke off, changes nothing more. Records come back with their
values as exported, but never take a live record back in time: the larger mentions, the later
last_seen, the earlier first_seen, an invalidation, aliases, a fact's sources and a message's
successful extraction already stored stay, and a fact the store changed after the file did
(its ADD, UPDATE and MERGE events compared: `engine.models.CHANGE_EVENTS`) keeps its text,
valid_at, confidence and vector. What the user no longer holds comes back as exported. Every uid is
derived again for the target user the way the engine derives it (`rekey`), even for the
file's own user: a file never chooses the uids it writes, so the copy is indistinguishable
from one the target built, and an export of a user imported into the same store lands on the
same nodes. For another user, each message's checksum is first made as that user's own add
makes it (`engine.transfer.checksums`: a checksum covers its user). A message the target
already holds (the same checksum: `held_episodes`) is written onto the held episode, one to
one, even one `add` gave a random uid (a message without a time), so no message is stored
twice.

Example:
    >>> report = import_snapshot(store, parse_snapshot(Path("alice.json")), "bob")  # doctest: +SKIP
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

from engine.embedding import Embedder, as_param
from engine.normalize import check_user_id, entity_key, stable_uid
from engine.retrieval.lexical import episode_text
from engine.store.base import GraphStore, bulk_writing
from engine.store.reads import Reads
from engine.transfer.checksums import for_target
from engine.transfer.document import parse_snapshot
from engine.transfer.export import PAGE, batch_records, read_all, snapshot_batches
from engine.transfer.held import Created
from engine.transfer.import_limits import ImportLimits, checked
from engine.transfer.own import own_entity
from engine.transfer.progress import ImportProgressFn, Phase, encode_counted
from engine.transfer.report import ImportReport
from engine.transfer.snapshot import (
    EntityRecord,
    EpisodeRecord,
    FactRecord,
    GraphSnapshot,
    HistoryRecord,
)
from engine.uids import entity_uid

__all__ = [
    "ImportReport",
    "episode_uids",
    "held_episodes",
    "import_snapshot",
    "parse_snapshot",
    "rekey",
]

# As Memory.self_uid: the user's own entity is keyed by the user, not by a name.
_SELF = "\x00self"


# -- uids ---------------------------------------------------------------------------------


def _entity_uid(entity: EntityRecord, old_user: str, new_user: str) -> str:
    """The file's own user's entity is the target's own; for another user, so is an entity
    named as the target user id, as `add_facts` derives it (`engine.transfer.own`)."""
    if entity.uid == stable_uid(old_user, _SELF):
        return stable_uid(new_user, _SELF)
    return (
        entity_uid(new_user, entity.key)
        if old_user != new_user
        else stable_uid(new_user, entity.key)
    )


def _fact_uid(
    fact: FactRecord, old_user: str, new_user: str, ends: tuple[str, str], names: set[str]
) -> str:
    """stable_uid(user, subject, predicate, object), or with the value for the user's own
    name (`engine.add.changes.fact_row`: one fact per name, from the self entity to itself)."""
    old = (old_user, fact.subject_uid, fact.predicate, fact.object_uid)
    new = (new_user, ends[0], fact.predicate, ends[1])
    if fact.uid == stable_uid(*old):
        return stable_uid(*new)
    if fact.subject_uid == fact.object_uid:
        for value in names:
            if fact.uid == stable_uid(*old, value):
                return stable_uid(*new, value)
    # made some other way: derived from it, so it cannot be chosen and stays apart
    return stable_uid(*new, fact.uid)


def _event_uid(h: HistoryRecord, user: str, target: str, episode: str | None) -> str:
    """As `engine.add.resolve.history_row` derives it, or as facts added by `add_facts` got
    it in earlier versions (`stable_uid(target, event, ts)`)."""
    at = repr(h.ts)
    if h.uid == stable_uid(h.target_uid, h.event, h.episode_uid or "", h.detail or "", at):
        return stable_uid(target, h.event, episode or "", h.detail or "", at)
    if h.uid == stable_uid(h.target_uid, h.event, at):
        return stable_uid(target, h.event, at)
    return stable_uid(user, h.uid)


def episode_uids(
    episodes: Sequence[EpisodeRecord], user_id: str, held: Mapping[str, Sequence[str]]
) -> dict[str, str]:
    """Old uid -> new uid of each message. The file's messages of one checksum, in time order,
    are derived as stable_uid(user_id, checksum), then with their rank ("1", "2", ...): two
    identical messages without a time stay two. `held` (checksum -> the uids the target holds
    under it, in time order) takes precedence: a derived uid the target holds stays, the other
    messages take the other held uids in order, one each, and only the rest keep theirs."""
    groups: dict[str, list[EpisodeRecord]] = {}
    for p in sorted(episodes, key=lambda p: p.ts):  # stable: the file's order breaks ties
        groups.setdefault(p.checksum, []).append(p)
    out: dict[str, str] = {}
    for checksum, group in groups.items():
        derived = [_message_uid(user_id, checksum, rank) for rank in range(len(group))]
        owned = set(held.get(checksum, ()))
        free = [uid for uid in held.get(checksum, ()) if uid not in derived]
        for p, uid in zip(group, derived, strict=True):
            out[p.uid] = uid if uid in owned or not free else free.pop(0)
    return out


def _message_uid(user_id: str, checksum: str, rank: int) -> str:
    """The first message of a checksum is keyed as `add` keys one at an explicit time."""
    return stable_uid(user_id, checksum, str(rank)) if rank else stable_uid(user_id, checksum)


def held_episodes(store: GraphStore, user_id: str, checksums: list[str]) -> dict[str, list[str]]:
    """Checksum -> the uids of the user's episodes under it, in time order (uid breaks ties)."""
    found: dict[str, list[tuple[float, str]]] = {}
    for start in range(0, len(checksums), PAGE):
        params = {"user_id": user_id, "checksums": checksums[start : start + PAGE]}
        for checksum, uid, ts in store.run("find_episodes_by_checksums", params):
            found.setdefault(checksum, []).append((ts or 0.0, uid))
    return {c: [uid for _, uid in sorted(rows)] for c, rows in found.items()}


def _own_names(snapshot: GraphSnapshot) -> set[str]:
    """The keys an own-name fact's uid may carry: the self entity's key, name and aliases."""
    me = stable_uid(snapshot.user_id, _SELF)
    names: set[str] = set()
    for e in snapshot.entities:
        if e.uid == me:
            names |= {e.key, entity_key(e.name), *e.alias_keys, *map(entity_key, e.aliases)}
    return names


class _Remap:
    """Old uid -> new uid for entities and episodes; facts and history follow."""

    def __init__(
        self,
        old_user: str,
        new_user: str,
        entities: dict[str, str],
        episodes: dict[str, str],
        names: set[str],
    ) -> None:
        self.old_user, self.new_user = old_user, new_user
        self.entities, self.episodes = entities, episodes
        self.names = names
        self.targets: dict[str, str] = {**entities, **episodes}

    def fact(self, f: FactRecord) -> FactRecord:
        s = self.entities.get(f.subject_uid, f.subject_uid)
        o = self.entities.get(f.object_uid, f.object_uid)
        uid = _fact_uid(f, self.old_user, self.new_user, (s, o), self.names)
        self.targets[f.uid] = uid
        episodes = [self.episodes.get(u, u) for u in f.episodes]
        return f.model_copy(
            update={"uid": uid, "subject_uid": s, "object_uid": o, "episodes": episodes}
        )

    def episode(self, p: EpisodeRecord) -> EpisodeRecord:
        mentions = [self.entities.get(u, u) for u in p.entity_uids]
        return p.model_copy(
            update={"uid": self.episodes.get(p.uid, p.uid), "entity_uids": mentions}
        )

    def event(self, h: HistoryRecord) -> HistoryRecord:
        episode = self.episodes.get(h.episode_uid, h.episode_uid) if h.episode_uid else None
        target = self.targets.get(h.target_uid, h.target_uid)
        uid = _event_uid(h, self.new_user, target, episode)
        return h.model_copy(update={"uid": uid, "target_uid": target, "episode_uid": episode})

    def apply(self, snapshot: GraphSnapshot) -> GraphSnapshot:
        entities = [
            e.model_copy(update={"uid": self.entities.get(e.uid, e.uid)}) for e in snapshot.entities
        ]
        facts = [self.fact(f) for f in snapshot.facts]  # before events: fills the targets
        return snapshot.model_copy(
            update={
                "user_id": self.new_user,
                "entities": entities,
                "facts": facts,
                "episodes": [self.episode(p) for p in snapshot.episodes],
                "history": [self.event(h) for h in snapshot.history],
            }
        )


def rekey(
    snapshot: GraphSnapshot, user_id: str, held: Mapping[str, Sequence[str]] | None = None
) -> GraphSnapshot:
    """The same graph owned by `user_id` (the file's own user or another), every uid derived
    as the engine derives it, never taken from the file.

    Entity uid = stable_uid(user_id, key) (the user's own entity, and for another user one
    named as its id: `Memory.self_uid`); fact
    uid = stable_uid(user_id, subject_uid, predicate, object_uid) (the user's own name: plus
    the name); episode uid = stable_uid(user_id, checksum), or with its rank among the file's
    messages of that checksum, or the uid of a message the target holds (`held`, as
    `held_episodes` reads it: `episode_uids`); history event uid as the engine derives it from
    the new target. A uid made in no known way is hashed with the user.
    """
    entities = {e.uid: _entity_uid(e, snapshot.user_id, user_id) for e in snapshot.entities}
    episodes = episode_uids(snapshot.episodes, user_id, held or {})
    names = _own_names(snapshot)
    return _Remap(snapshot.user_id, user_id, entities, episodes, names).apply(snapshot)


def adopt_existing(reads: Reads, snapshot: GraphSnapshot) -> tuple[GraphSnapshot, int]:
    """Point the snapshot at the entities the target already holds under the same keys, so
    the `(user_id, key)` merge and the uids agree; return it and how many entities moved."""
    moved: dict[str, str] = {}
    for start in range(0, len(snapshot.entities), PAGE):
        part = snapshot.entities[start : start + PAGE]
        found = reads.entities_by_keys(snapshot.user_id, [e.key for e in part])
        for e in part:
            known = found.get(e.key)
            if known is not None and known.key == e.key and known.uid != e.uid:
                moved[e.uid] = known.uid
    if not moved:
        return snapshot, 0
    remap = _Remap(snapshot.user_id, snapshot.user_id, moved, {}, _own_names(snapshot))
    return remap.apply(snapshot), len(moved)


def adopt_history(store: GraphStore, snapshot: GraphSnapshot) -> GraphSnapshot:
    """Point each event at the one the target already holds with the same content (target,
    event, message, detail, time), so an import onto the events it came from adds none.

    An event's uid is hashed from its time to the clock's precision, and a file exported
    from FalkorDB before times were read exactly holds 15 significant digits: such an
    event's uid often cannot be derived again, and `rekey` then derives a new one that would
    stand beside the original."""
    held = {
        _event_key(h): h.uid
        for h in read_all(store, "list_user_history", HistoryRecord, snapshot.user_id)
    }
    if not held:
        return snapshot
    history = [
        h.model_copy(update={"uid": held.get(_event_key(h), h.uid)}) for h in snapshot.history
    ]
    return snapshot.model_copy(update={"history": history})


def _event_key(h: HistoryRecord) -> tuple[object, ...]:
    return (h.target_uid, h.event, h.episode_uid, h.detail, h.ts)


def fill_embeddings(
    snapshot: GraphSnapshot, embedder: Embedder, phase: Phase | None = None
) -> tuple[GraphSnapshot, int]:
    """Embed the entities (by name) and facts (by text) that come without a vector."""
    entities = [e for e in snapshot.entities if not e.embedding]
    facts = [f for f in snapshot.facts if not f.embedding]
    if not entities and not facts:
        return snapshot, 0
    texts = [e.name for e in entities] + [f.text for f in facts]
    uids = [e.uid for e in entities] + [f.uid for f in facts]
    encoded = encode_counted(embedder, texts, phase)
    vectors = {u: as_param(v) for u, v in zip(uids, encoded, strict=True)}
    update = {
        "entities": [
            e.model_copy(update={"embedding": vectors.get(e.uid, e.embedding)})
            for e in snapshot.entities
        ],
        "facts": [
            f.model_copy(update={"embedding": vectors.get(f.uid, f.embedding)})
            for f in snapshot.facts
        ],
    }
    return snapshot.model_copy(update=update), len(vectors)


def episode_vectors(
    snapshot: GraphSnapshot, embedder: Embedder, phase: Phase | None = None
) -> dict[str, list[float]]:
    """The episode leg's vectors of the snapshot's messages (exports carry none)."""
    texts = [episode_text(p.speaker, p.content) for p in snapshot.episodes]
    vectors = encode_counted(embedder, texts, phase)
    return {p.uid: as_param(v) for p, v in zip(snapshot.episodes, vectors, strict=True)}


def import_snapshot(
    store: GraphStore,
    snapshot: GraphSnapshot,
    user_id: str,
    embedder: Embedder | None = None,
    limits: ImportLimits | None = None,
    progress: ImportProgressFn | None = None,
) -> ImportReport:
    """Write `snapshot` into `store` for `user_id` (the user it was exported from, or
    another: the caller says which, the file never does).

    An entity the target already holds under the same key keeps its uid and takes the
    exported properties (its type only where the export has one); so does a message it holds
    under the same checksum (one to one: `episode_uids`). With an `embedder`, records without
    a vector are embedded. With `limits`, every record is checked (and cleaned) first, as
    `add_facts` checks its input.
    `progress` is told each step: texts embedded, then records written (`ImportProgress`).

    Raises:
        InvalidInputError: the user id is unusable, a record breaks the limits, or two
            records would both be the user's own entity (`engine.transfer.own`; nothing is
            written then).
        StoreError: the database failed; the chunks written before stay written.
    """
    source_user = snapshot.user_id
    target = check_user_id(user_id)
    if limits is not None:
        snapshot = checked(snapshot, limits)
    holding = functools.partial(Reads(store).episodes_by_uids, target)
    snapshot = for_target(snapshot, target, holding)  # keyed as the target's add keys
    held = held_episodes(store, target, sorted({p.checksum for p in snapshot.episodes}))
    mine = next((e.key for e in snapshot.entities if e.uid == stable_uid(source_user, _SELF)), None)
    snapshot, remapped = adopt_existing(Reads(store), rekey(snapshot, target, held))
    snapshot, made_own = own_entity(Reads(store), snapshot, source_user, mine)
    snapshot = adopt_history(store, snapshot)
    embedded = 0
    messages: dict[str, list[float]] = {}
    if embedder is not None:
        bare = sum(not e.embedding for e in snapshot.entities)
        bare += sum(not f.embedding for f in snapshot.facts)
        # a message the user holds keeps its words, and so the vector they were embedded to
        owned = {uid for uids in held.values() for uid in uids}
        fresh = [p for p in snapshot.episodes if p.uid not in owned]
        phase = Phase(progress, "vectors", bare + len(fresh))
        snapshot, embedded = fill_embeddings(snapshot, embedder, phase)
        messages = episode_vectors(snapshot.model_copy(update={"episodes": fresh}), embedder, phase)
    records = len(snapshot.entities) + len(snapshot.facts) + len(snapshot.episodes)
    written = Phase(progress, "records", records + len(snapshot.history))
    created = Created()
    with bulk_writing(store, records):
        for batch in snapshot_batches(snapshot, episode_vectors=messages):
            created.add(store.write(target, batch))
            written.advance(batch_records(batch))
    report = ImportReport(
        user_id=target,
        source_user_id=source_user,
        entities=len(snapshot.entities),
        facts=len(snapshot.facts),
        episodes=len(snapshot.episodes),
        history=len(snapshot.history),
        embedded=embedded,
        remapped=remapped,
        made_own=made_own,
    )
    return created.held_in(report)
