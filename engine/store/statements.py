"""A write batch as the named statements that apply it, shared by the adapters (result rows
become models in rows.py; the vector reads' choice of index or scan is nearest.py)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from engine import cypher
from engine.cypher import Dialect
from engine.models import CHANGE_EVENTS, UNCHANGED_DETAILS
from engine.normalize import is_type_label
from engine.store.base import (
    AnyBatch,
    EntityRow,
    GraphStore,
    MergeBatch,
    RestoreBatch,
    WriteBatch,
    Written,
)
from engine.store.fulltext import user_key

# (statement name, relationship type or label for the placeholder, or None; parameters)
NamedStatement = tuple[str, str | None, dict[str, Any]]
VectorParam = Callable[[list[float]], Any]


# load marks an entity keeps (`EntityRow.marks`): a load rerun after this many other loads
# gave the entity mentions counts them again
MARKS_KEPT = 16
VECTOR_SCALE = 100_000  # packed vectors: integers in units of 1e-5 (error <= 5e-6 a component)


def pack_vector(vector: Sequence[float]) -> str:
    """A vector as comma-separated integers in units of 1e-5, for FalkorDB's
    set_*_embeddings. Its client sends every parameter as Cypher text; measured per 1,000
    vectors of 384 dimensions, a list of floats cost ~0.6 s to format and ~0.65 s for the
    server to parse, this string ~0.13 s and ~0.22 s (benchmarks/README.md)."""
    scaled = np.rint(np.asarray(vector, dtype=np.float64) * VECTOR_SCALE).astype(np.int64)
    return ",".join(map(str, scaled.tolist()))


def batch_statements(
    user_id: str, batch: AnyBatch, vector_param: VectorParam | None = None
) -> list[NamedStatement]:
    """The ordered statements that apply `batch`; every one is an idempotent MERGE or SET
    (`new_history` excepted: events of facts the batch creates, new by construction).
    `vector_param` turns each embedding into the parameter its dialect's statement reads."""
    base = {"user_id": user_id, "now": time.time()}
    param = vector_param or (lambda v: v)
    if isinstance(batch, RestoreBatch):
        return restore_statements(base, batch, param)
    if isinstance(batch, MergeBatch):
        return merge_statements(base, batch)
    return write_statements(base, batch, param)


def write_statements(
    base: dict[str, Any], batch: WriteBatch, param: VectorParam
) -> list[NamedStatement]:
    """The statements of an add or a load, in the order `batch_statements` promises. A batch
    of messages starts with `guard_new_episodes`: stored already, they are not written twice;
    one with entities read as stored with `guard_stored_entities`: one gone, it is written
    again whole (`engine.store.whole`)."""
    out: list[NamedStatement] = []
    if batch.episodes:
        out.append(("guard_new_episodes", None, {**base, "uids": [e.uid for e in batch.episodes]}))

    def add(name: str, rows: list[Any], rel_type: str | None = None, **extra: Any) -> None:
        if rows:
            out.append((name, rel_type, {**base, "rows": rows, **extra}))

    add("guard_stored_entities", [{"uid": e.uid, "key": e.key} for e in batch.entities if e.stored])
    entities = [_entity_row(e) for e in batch.entities]
    add("merge_entities", entities, user_key=user_key(base["user_id"]), marks_kept=MARKS_KEPT)
    out += label_statements(base, [(e.uid, e.type) for e in batch.entities])
    add("set_entity_embeddings", _vector_rows(batch.entity_embeddings, param))
    add("add_entity_aliases", [asdict(a) for a in batch.aliases])
    add("rename_entities", [asdict(r) for r in batch.renames])
    facts = [asdict(f) for f in batch.facts]
    add("merge_facts", facts)
    add("set_fact_texts", [{"uid": u, "text": t} for u, t in batch.fact_texts.items()])
    add("set_fact_embeddings", _vector_rows(batch.fact_embeddings, param))
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in facts:  # the typed form records no event
        by_type[fact["predicate"]].append({**fact, "on_create": None, "on_match": None})
    for predicate in sorted(by_type):
        add("merge_fact_relationships", by_type[predicate], predicate)
    own_end = batch.invalid_at_of  # each fact ends at its own time, else the batch's
    ends = [{"uid": u, "at": own_end.get(u, batch.invalid_at)} for u in batch.invalidate]
    add("invalidate_facts", ends)
    add("set_fact_ends", [asdict(e) for e in batch.fact_ends])
    episodes = [{**asdict(e), "entity_uids": list(e.entity_uids)} for e in batch.episodes]
    add("merge_episodes", episodes)
    add("set_episode_embeddings", _vector_rows(batch.episode_embeddings, param))
    add("create_history", [asdict(h) for h in batch.history])
    add("append_history", [asdict(h) for h in batch.new_history])
    return out


def _entity_row(row: EntityRow) -> dict[str, Any]:
    """`row` as `merge_entities` reads it (the aliases it was read with are for its writer
    alone, should it write it again whole)."""
    out = asdict(row)
    out["marks"] = [asdict(m) for m in row.marks]
    del out["aliases"]
    return out


def label_statements(
    base: dict[str, Any], typed: list[tuple[str, str | None]]
) -> list[NamedStatement]:
    """One `set_entity_labels` per entity type: the type becomes a second label. A type that
    is no valid label (an old or hand-made value) stays a property only."""
    by_label: dict[str, list[dict[str, str]]] = defaultdict(list)
    for uid, etype in typed:
        if etype is not None and is_type_label(etype):
            by_label[etype].append({"uid": uid, "type": etype})
    return [
        ("set_entity_labels", label, {**base, "rows": by_label[label]})
        for label in sorted(by_label)
    ]


def merge_statements(base: dict[str, Any], batch: MergeBatch) -> list[NamedStatement]:
    """The statements of a merge, each reading what the store holds as it runs: the facts
    moved, their typed forms (per type), the facts between the two deleted, the mentions,
    names and messages given to the kept entity, the events, and the merged entity deleted if
    nothing names it any more (its result tells `written`)."""
    entities = {**base, "uid": batch.gone, "target_uid": batch.kept}
    out: list[NamedStatement] = []

    def add(name: str, rows: list[Any], rel_type: str | None = None, key: str = "rows") -> None:
        if rows:
            out.append((name, rel_type, {**base, key: rows}))

    add("move_facts", [asdict(m) for m in batch.moves])
    by_type: dict[str, dict[str, dict[str, str]]] = defaultdict(dict)
    for m in batch.moves:
        by_type[m.predicate][m.uid] = {"uid": m.uid, "subject_uid": m.subject_uid,
                                       "object_uid": m.object_uid}  # fmt: skip
    for predicate in sorted(by_type):
        add("move_fact_relationships", list(by_type[predicate].values()), predicate)
    add("delete_facts", batch.drops, key="uids")
    out.append(("move_entity_counts", None, {**entities, "marks_kept": MARKS_KEPT}))
    out.append(("move_entity_aliases", None, entities))
    out.append(("move_entity_mentions", None, entities))
    add("create_history", [asdict(h) for h in batch.history])
    add("delete_orphan_entities", [batch.gone], key="uids")
    return out


def restore_statements(
    base: dict[str, Any], batch: RestoreBatch, param: VectorParam
) -> list[NamedStatement]:
    """The statements that write exported records back exactly (an import), in this order:
    entities, their labels, their embeddings; facts, their typed
    relationships (per type), their embeddings (only where the fact holds the exported text:
    a vector goes with the sentence it embeds); episodes, their embeddings."""
    out: list[NamedStatement] = []

    def add(name: str, rows: list[Any], rel_type: str | None = None, **extra: Any) -> None:
        if rows:
            out.append((name, rel_type, {**base, "rows": rows, **extra}))

    add(
        "restore_entities",
        [{"load_marks": [], **row} for row in batch.entities],
        user_key=user_key(base["user_id"]),
        marks_kept=MARKS_KEPT,
    )
    out += label_statements(base, [(row["uid"], row["type"]) for row in batch.entities])
    add("set_entity_embeddings", _vector_rows(batch.entity_embeddings, param))
    events, unchanged = list(CHANGE_EVENTS), list(UNCHANGED_DETAILS)
    add("restore_facts", batch.facts, change_events=events, unchanged_details=unchanged)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in batch.facts:
        if row["relationship"] is not None:
            by_type[row["relationship"]["type"]].append(row)
    for rel_type in sorted(by_type):
        add("restore_fact_relationships", by_type[rel_type], rel_type)
    texts = {row["uid"]: row["text"] for row in batch.facts}
    vectors = _vector_rows(batch.fact_embeddings, param)
    add("restore_fact_embeddings", [{**row, "text": texts.get(row["uid"])} for row in vectors])
    add("restore_episodes", [{"terms": None, "terms_v": None, **row} for row in batch.episodes])
    mentions = [{"uid": row["uid"], "entity_uids": row["entity_uids"]} for row in batch.episodes]
    add("restore_episode_mentions", mentions)
    add("set_episode_embeddings", _vector_rows(batch.episode_embeddings, param))
    return out


def _vector_rows(vectors: dict[str, list[float]], param: VectorParam) -> list[dict[str, Any]]:
    return [{"uid": uid, "embedding": param(vector)} for uid, vector in vectors.items()]


def statement_texts(
    named: list[NamedStatement], dialect: Dialect
) -> list[tuple[str, dict[str, Any]]]:
    """The Cypher text of each named statement, relationship type placeholders filled."""
    out = []
    for name, rel_type, params in named:
        text = cypher.load(name, dialect)
        out.append((cypher.fill(text, rel_type) if rel_type else text, params))
    return out


def composed_batch(
    user_id: str,
    batch: AnyBatch,
    dialect: Dialect,
    vector_param: VectorParam | None = None,
) -> tuple[str, dict[str, Any], list[str]]:
    """The whole batch as one query (see `cypher.compose`), with the statement names in order."""
    named = batch_statements(user_id, batch, vector_param)
    query, params = cypher.compose(statement_texts(named, dialect))
    return query, params, [name for name, _, _ in named]


def written(batch: AnyBatch, names: list[str], row: list[Any] | None) -> Written:
    """What `batch` wrote, with each fact's mention count and the facts and entities it
    created from the composed batch's result `row` (one result per statement of `names`);
    no row: a guard said no (its messages stored already, or an entity read as stored gone)
    and nothing was written."""
    if row is None:
        return Written(stored_already=True)
    results = list(zip(names, row, strict=True))
    if isinstance(batch, RestoreBatch):
        return _restored(batch, dict(results))
    facts = [
        (uid, int(count), created)
        for name, result in results
        if name == "merge_facts"
        for uid, count, created in result
    ]
    mentions = {uid: count for uid, count, _ in facts}
    if isinstance(batch, MergeBatch):
        deleted = dict(results).get("delete_orphan_entities") or []
        return Written(predicates=frozenset(m.predicate for m in batch.moves), merged=bool(deleted))
    return Written(
        mentions,
        vanished=frozenset(f.uid for f in batch.facts if f.uid not in mentions),
        added=frozenset(uid for uid, _, created in facts if created),
        added_entities=frozenset(
            uid for name, result in results if name == "merge_entities" for uid in result
        ),
        predicates=frozenset(fact.predicate for fact in batch.facts),
        episodes=tuple(batch.episodes),
        added_history=frozenset(dict(results).get("create_history") or []),
    )


def _restored(batch: RestoreBatch, results: dict[str, Any]) -> Written:
    """What an import's batch wrote: the records its statements created (by uid)."""
    return Written(
        added=frozenset(results.get("restore_facts") or []),
        added_entities=frozenset(results.get("restore_entities") or []),
        added_episodes=frozenset(results.get("restore_episodes") or []),
        predicates=frozenset(fact["predicate"] for fact in batch.facts),
    )


def delete_fact(store: GraphStore, user_id: str, uid: str) -> bool:
    """Delete one fact of `user_id` in both its forms and its change history (a fact added
    again starts its own); False when the user has no such fact. The history goes first:
    should the fact's delete fail, running it again finishes both."""
    store.run("delete_fact_history", {"user_id": user_id, "uid": uid}, read_only=False)
    rows = store.run("delete_fact", {"user_id": user_id, "uid": uid}, read_only=False)
    return bool(rows and rows[0][0])
