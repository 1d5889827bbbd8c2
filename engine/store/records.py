"""Mapping shared by the adapters: batches to named statements, result rows to models."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any, Literal

from engine import cypher
from engine.models import Entity, Fact, HistoryEvent
from engine.normalize import is_type_label
from engine.store.base import Dialect, ExpandedEdge, WriteBatch

# (statement name, relationship type or label for the placeholder, or None; parameters)
NamedStatement = tuple[str, str | None, dict[str, Any]]
Rows = list[list[Any]]

# Vector indexes pick nearest neighbours over every user before the user filter applies.
MAX_VECTOR_K = 4096


def batch_statements(user_id: str, batch: WriteBatch) -> list[NamedStatement]:
    """The ordered statements that apply `batch`; every one is an idempotent MERGE or SET."""
    base = {"user_id": user_id, "now": time.time()}
    out: list[NamedStatement] = []

    def add(name: str, rows: list[Any], rel_type: str | None = None, **extra: Any) -> None:
        if rows:
            out.append((name, rel_type, {**base, "rows": rows, **extra}))

    add("merge_entities", [asdict(e) for e in batch.entities])
    out += restore_statements(base, batch, "entities")
    typed = [(e.uid, e.type) for e in batch.entities]
    out += label_statements(base, typed + [(e.uid, e.type) for e in batch.restore_entities])
    add(
        "set_entity_embeddings",
        [{"uid": u, "embedding": v} for u, v in batch.entity_embeddings.items()],
    )
    add("add_entity_aliases", [asdict(a) for a in batch.aliases])
    add("rename_entities", [asdict(r) for r in batch.renames])
    add("merge_facts", [asdict(f) for f in batch.facts])
    out += restore_statements(base, batch, "facts")
    add("set_fact_texts", [{"uid": u, "text": t} for u, t in batch.fact_texts.items()])
    add(
        "set_fact_embeddings",
        [{"uid": u, "embedding": v} for u, v in batch.fact_embeddings.items()],
    )
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in batch.facts:
        by_type[fact.predicate].append(asdict(fact))
    for predicate in sorted(by_type):
        add("merge_fact_relationships", by_type[predicate], predicate)
    if batch.invalidate:
        out.append(
            ("invalidate_facts", None, {**base, "uids": batch.invalidate, "at": batch.invalid_at})
        )
    episodes = [{**asdict(e), "entity_uids": list(e.entity_uids)} for e in batch.episodes]
    add("merge_episodes", episodes)
    add(
        "set_episode_embeddings",
        [{"uid": u, "embedding": v} for u, v in batch.episode_embeddings.items()],
    )
    out += restore_statements(base, batch, "episodes")
    add("create_history", [asdict(h) for h in batch.history])
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


def restore_statements(
    base: dict[str, Any], batch: WriteBatch, kind: Literal["entities", "facts", "episodes"]
) -> list[NamedStatement]:
    """The statements that write a batch's exported records back exactly (import).

    Embeddings travel in `entity_embeddings` / `fact_embeddings`, so they are left out here;
    a fact's typed relationship is written per relationship type.
    """
    if kind == "entities":
        rows = [r.model_dump(exclude={"embedding"}) for r in batch.restore_entities]
        return [("restore_entities", None, {**base, "rows": rows})] if rows else []
    if kind == "episodes":
        rows = [r.model_dump() for r in batch.restore_episodes]
        return [("restore_episodes", None, {**base, "rows": rows})] if rows else []
    rows = [r.model_dump(exclude={"embedding"}) for r in batch.restore_facts]
    out: list[NamedStatement] = [("restore_facts", None, {**base, "rows": rows})] if rows else []
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row["relationship"] is not None:
            by_type[row["relationship"]["type"]].append(row)
    for rel_type in sorted(by_type):
        out.append(("restore_fact_relationships", rel_type, {**base, "rows": by_type[rel_type]}))
    return out


def statement_texts(
    named: list[NamedStatement], dialect: Dialect
) -> list[tuple[str, dict[str, Any]]]:
    """The Cypher text of each named statement, relationship type placeholders filled."""
    out = []
    for name, rel_type, params in named:
        text = cypher.load(name, dialect)
        out.append((cypher.fill(text, rel_type) if rel_type else text, params))
    return out


NEIGHBOURS_PER_RESULT = 8


def overfetch(fetch: Callable[[int, int], Rows], k: int) -> Rows:
    """Rows of `fetch(n, k)`: a vector statement asked for n nearest neighbours that keeps the
    best k passing its filters. n starts at `NEIGHBOURS_PER_RESULT` * k, for two reasons: an
    HNSW index searches wider the more neighbours it is asked for (FalkorDB's default breadth
    is 10, so asking for 30 finds worse ones than asking for 240 and keeping 30), and the
    filters drop neighbours (other users' nodes, invalid facts, and on FalkorDB the vectors a
    node had before its last write, which its index keeps: FalkorDB PR #2197). While fewer
    than k survive, it asks again with 4 times as many, up to `MAX_VECTOR_K`."""
    n = min(MAX_VECTOR_K, max(64, k * NEIGHBOURS_PER_RESULT))
    while True:
        rows = fetch(n, k)
        if len(rows) >= k or n >= MAX_VECTOR_K:
            return rows[:k]
        n = min(MAX_VECTOR_K, n * 4)


def composed_batch(
    user_id: str, batch: WriteBatch, dialect: Dialect
) -> tuple[str, dict[str, Any], list[str]]:
    """The whole batch as one query (see `cypher.compose`), with the statement names in order."""
    named = batch_statements(user_id, batch)
    query, params = cypher.compose(statement_texts(named, dialect))
    return query, params, [name for name, _, _ in named]


def fact_mentions(names: list[str], row: list[Any]) -> dict[str, int]:
    """Each written fact's mention count, from the composed batch's result row."""
    return {
        uid: int(mentions)
        for name, result in zip(names, row, strict=True)
        if name == "merge_facts"
        for uid, mentions in result
    }


def entity_pairs(rows: Iterable[list[Any]]) -> list[tuple[str, Entity]]:
    return [(row[0], Entity.from_props(row[1])) for row in rows]


def fact_from_row(row: list[Any]) -> Fact:
    return Fact.from_props(row[0], row[1], row[2])


def history_from_row(props: dict[str, Any]) -> HistoryEvent:
    return HistoryEvent(
        uid=props["uid"],
        target_uid=props["target_uid"],
        user_id=props["user_id"],
        event=props["event"],
        ts=datetime.fromtimestamp(float(props["ts"]), tz=UTC),
        episode_uid=props.get("episode_uid"),
        detail=props.get("detail"),
    )


def edges_from_rows(rows: Iterable[list[Any]]) -> list[ExpandedEdge]:
    """Flatten `expand_subgraph` rows (a hop-1 edge with its hop-2 edges) into edges."""
    edges: dict[str, ExpandedEdge] = {}
    for row in rows:
        anchor, uid, predicate, outgoing, mid, mid_name, mid_mentions, mentions, hop2, degree = row
        edges.setdefault(
            uid,
            ExpandedEdge(
                anchor=anchor,
                uid=uid,
                predicate=predicate,
                hop=1,
                near=anchor,
                far=mid,
                far_name=mid_name,
                far_mentions=int(mid_mentions or 0),
                outgoing=bool(outgoing),
                mentions=int(mentions or 0),
            ),
        )
        for item in hop2 or []:
            if item is None:
                continue
            uid2, predicate2, outgoing2, far, far_name, far_mentions, mentions2 = item
            edges.setdefault(
                uid2,
                ExpandedEdge(
                    anchor=anchor,
                    uid=uid2,
                    predicate=predicate2,
                    hop=2,
                    near=mid,
                    far=far,
                    far_name=far_name,
                    far_mentions=int(far_mentions or 0),
                    outgoing=bool(outgoing2),
                    mentions=int(mentions2 or 0),
                    via=uid,
                    via_degree=int(degree or 0),
                ),
            )
    return list(edges.values())
