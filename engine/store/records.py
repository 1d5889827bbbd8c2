"""Mapping shared by the adapters: batches to named statements, result rows to models."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any

import numpy as np

from engine import cypher
from engine.models import Entity, Fact, HistoryEvent
from engine.normalize import is_type_label
from engine.retrieval.lexical import TERMS_VERSION, stored_terms
from engine.store.base import (
    Dialect,
    Neighbour,
    RestoreBatch,
    Rows,
    VectorRead,
    WriteBatch,
    Written,
)
from engine.store.fulltext import user_key

# (statement name, relationship type or label for the placeholder, or None; parameters)
NamedStatement = tuple[str, str | None, dict[str, Any]]
VectorParam = Callable[[list[float]], Any]
Run = Callable[[str, dict[str, Any]], Rows]  # a read-only `GraphStore.run`


VECTOR_SCALE = 100_000  # packed vectors: integers in units of 1e-5 (error <= 5e-6 a component)


def pack_vector(vector: Sequence[float]) -> str:
    """A vector as comma-separated integers in units of 1e-5, for FalkorDB's
    set_*_embeddings. Its client sends every parameter as Cypher text; measured per 1,000
    vectors of 384 dimensions, a list of floats cost ~0.6 s to format and ~0.65 s for the
    server to parse, this string ~0.13 s and ~0.22 s (benchmarks/README.md)."""
    scaled = np.rint(np.asarray(vector, dtype=np.float64) * VECTOR_SCALE).astype(np.int64)
    return ",".join(map(str, scaled.tolist()))


def batch_statements(
    user_id: str, batch: WriteBatch | RestoreBatch, vector_param: VectorParam | None = None
) -> list[NamedStatement]:
    """The ordered statements that apply `batch`; every one is an idempotent MERGE or SET
    (`new_history` excepted: events of facts the batch creates, new by construction).
    `vector_param` turns each embedding into the parameter its dialect's statement reads."""
    base = {"user_id": user_id, "now": time.time()}
    param = vector_param or (lambda v: v)
    if isinstance(batch, RestoreBatch):
        return restore_statements(base, batch, param)
    return write_statements(base, batch, param)


def write_statements(
    base: dict[str, Any], batch: WriteBatch, param: VectorParam
) -> list[NamedStatement]:
    """The statements of an add or a load, in the order `batch_statements` promises."""
    out: list[NamedStatement] = []

    def add(name: str, rows: list[Any], rel_type: str | None = None, **extra: Any) -> None:
        if rows:
            out.append((name, rel_type, {**base, "rows": rows, **extra}))

    add("merge_entities", [asdict(e) for e in batch.entities], user_key=user_key(base["user_id"]))
    out += label_statements(base, [(e.uid, e.type) for e in batch.entities])
    add("set_entity_embeddings", _vector_rows(batch.entity_embeddings, param))
    add("add_entity_aliases", [asdict(a) for a in batch.aliases])
    add("rename_entities", [asdict(r) for r in batch.renames])
    add("merge_facts", [asdict(f) for f in batch.facts])
    add("set_fact_texts", [{"uid": u, "text": t} for u, t in batch.fact_texts.items()])
    add("set_fact_embeddings", _vector_rows(batch.fact_embeddings, param))
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for fact in batch.facts:
        by_type[fact.predicate].append(asdict(fact))
    for predicate in sorted(by_type):
        add("merge_fact_relationships", by_type[predicate], predicate)
    if batch.invalidate:
        out.append(
            ("invalidate_facts", None, {**base, "uids": batch.invalidate, "at": batch.invalid_at})
        )
    add("set_fact_ends", [asdict(e) for e in batch.fact_ends])
    episodes = [
        {**asdict(e), "entity_uids": list(e.entity_uids), **_terms(e.speaker, e.content)}
        for e in batch.episodes
    ]
    add("merge_episodes", episodes)
    add("set_episode_embeddings", _vector_rows(batch.episode_embeddings, param))
    add("create_history", [asdict(h) for h in batch.history])
    add("append_history", [asdict(h) for h in batch.new_history])
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
    base: dict[str, Any], batch: RestoreBatch, param: VectorParam
) -> list[NamedStatement]:
    """The statements that write exported records back exactly (an import), in this order:
    entities, their labels, their embeddings; facts, their typed
    relationships (per type), their embeddings; episodes, their embeddings."""
    out: list[NamedStatement] = []

    def add(name: str, rows: list[Any], rel_type: str | None = None, **extra: Any) -> None:
        if rows:
            out.append((name, rel_type, {**base, "rows": rows, **extra}))

    add("restore_entities", batch.entities, user_key=user_key(base["user_id"]))
    out += label_statements(base, [(row["uid"], row["type"]) for row in batch.entities])
    add("set_entity_embeddings", _vector_rows(batch.entity_embeddings, param))
    add("restore_facts", batch.facts)
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in batch.facts:
        if row["relationship"] is not None:
            by_type[row["relationship"]["type"]].append(row)
    for rel_type in sorted(by_type):
        add("restore_fact_relationships", by_type[rel_type], rel_type)
    add("set_fact_embeddings", _vector_rows(batch.fact_embeddings, param))
    episodes = [{**row, **_terms(row.get("speaker"), row["content"])} for row in batch.episodes]
    add("restore_episodes", episodes)
    add("set_episode_embeddings", _vector_rows(batch.episode_embeddings, param))
    return out


def _terms(speaker: str | None, content: str) -> dict[str, Any]:
    """The episode leg's index terms of a message, stored with it so a load only reads them."""
    return {"terms": stored_terms(speaker, content), "terms_v": TERMS_VERSION}


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


# -- vector reads ---------------------------------------------------------------------------
# One vector index per label spans every user, and it picks nearest neighbours before the user
# filter applies: beside a user with 6,000 facts near the query, one with 3 got none of them.
# `nearest` decides, for any vector-indexed label, between that index and an exact scan of the
# user's own nodes (benchmarks/multitenant.py measured both; docs/storage.md, "Many users in
# one store").

SCAN_MAX = 5_000  # a user with at most this many nodes of a label is scanned: ~8 ms on FalkorDB
NEIGHBOURS_PER_RESULT = 8
MAX_VECTOR_K = 4096
WIDER = 4  # a short answer of the index is asked again this many times as wide


def nearest(
    count: Callable[[int], int],
    index: Callable[[int, int], Rows],
    scan: Callable[[int], Rows],
    k: int,
) -> Rows:
    """The user's k nearest nodes of one label, from `count(cap)`, `index(n, k)` and
    `scan(k)` (the statements of a `VectorRead`).

    - A user with at most `SCAN_MAX` nodes is scanned: exact, and about as cheap as the index
      (about 1.6 us a node on FalkorDB), whatever other users hold.
    - A larger user asks the shared index for n = `NEIGHBOURS_PER_RESULT` * k neighbours (an
      HNSW index searches wider the more it is asked for). When k of them are the user's and
      pass the filters, they are the user's k nearest: they lead the index's answer, where an
      HNSW search is reliable.
    - When fewer survive, the index is asked once more, `WIDER` times as wide: stale vectors
      (likely those FalkorDB keeps of a node rewritten, FalkorDB PR #2197) crowd an index
      built while a large load wrote (9 of 300 MetaQA questions' entity reads came short
      after a 40k-fact load, each then a 40 ms scan; none at 4x, none after a reopen rebuilt
      the index), and they are passed over while the user's nodes are still at the head of
      the answer, where HNSW is reliable.
    - When fewer still survive (the user's nodes are a small part of the index near the
      query, or filtered out: invalid facts), the user is scanned: slower for a large user,
      never starved. Asking the index for more is no cure: the user's nodes would come from
      the tail of its answer, where HNSW misses neighbours (measured: a user whose nodes
      ranked beyond the first few thousand got a wrong top 10).
    """
    if count(SCAN_MAX + 1) <= SCAN_MAX:
        return scan(k)
    n = min(MAX_VECTOR_K, max(64, k * NEIGHBOURS_PER_RESULT))
    rows = index(n, k)
    if len(rows) < k and n < MAX_VECTOR_K:
        rows = index(min(MAX_VECTOR_K, n * WIDER), k)
    return rows[:k] if len(rows) >= k else scan(k)


_SIZES_KEPT = 30_000  # users x labels whose sizes are kept: a service with many users stays small


class UserSizes:
    """How many nodes of each vector-indexed label a user has, as last counted: the count
    decides between scan and index (`nearest`) and was a round trip on every vector read,
    three a search. A stale size never gives a wrong answer, only a slower one (a user grown
    large is scanned; one shrunk reads the index, then is scanned). The adapter forgets a
    user's sizes when it writes for that user; another process's writes wait out `ttl_s`."""

    def __init__(self, ttl_s: float = 30.0) -> None:
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._sizes: dict[tuple[str, str, int], tuple[float, int]] = {}

    def count(self, key: tuple[str, str, int], fresh: Callable[[], int]) -> int:
        """The size under `key` (statement, user, cap), counted by `fresh` when not known."""
        with self._lock:
            known = self._sizes.get(key)
        if known is not None and time.monotonic() - known[0] < self._ttl_s:
            return known[1]
        size = fresh()
        with self._lock:
            if len(self._sizes) >= _SIZES_KEPT:
                self._sizes.clear()
            self._sizes[key] = (time.monotonic(), size)
        return size

    def forget(self, user_id: str | None = None) -> None:
        """Forget one user's sizes (None: everyone's)."""
        with self._lock:
            for key in [k for k in self._sizes if user_id is None or k[1] == user_id]:
                del self._sizes[key]


def nearest_rows(
    run: Run, read: VectorRead, params: dict[str, Any], k: int, sizes: UserSizes
) -> Rows:
    """`nearest` by the statements of `read`, each run by `run`; the user's size from `sizes`."""
    user = {"user_id": params["user_id"]}
    return nearest(
        lambda cap: sizes.count(
            (read.count, user["user_id"], cap),
            lambda: int(run(read.count, {**user, "cap": cap})[0][0]),
        ),
        lambda n, keep: run(read.index, {**params, "k": n, "limit": keep}),
        lambda keep: run(read.scan, {**params, "limit": keep}),
        k,
    )


def composed_batch(
    user_id: str,
    batch: WriteBatch | RestoreBatch,
    dialect: Dialect,
    vector_param: VectorParam | None = None,
) -> tuple[str, dict[str, Any], list[str]]:
    """The whole batch as one query (see `cypher.compose`), with the statement names in order."""
    named = batch_statements(user_id, batch, vector_param)
    query, params = cypher.compose(statement_texts(named, dialect))
    return query, params, [name for name, _, _ in named]


def written(batch: WriteBatch | RestoreBatch, names: list[str], row: list[Any]) -> Written:
    """What `batch` wrote, with each fact's mention count from the composed batch's result
    `row` (one result per statement of `names`)."""
    mentions = {
        uid: int(count)
        for name, result in zip(names, row, strict=True)
        if name == "merge_facts"
        for uid, count in result
    }
    if isinstance(batch, RestoreBatch):
        return Written(mentions, frozenset(fact["predicate"] for fact in batch.facts))
    predicates = frozenset(fact.predicate for fact in batch.facts)
    return Written(mentions, predicates, tuple(batch.episodes))


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


def neighbours_from_rows(rows: Iterable[list[Any]]) -> list[Neighbour]:
    """Flatten `expand_typed` / `expand_any` rows (a node with the edges read from it)."""
    out = []
    for near, edges, degree in rows:
        for uid, predicate, outgoing, far, far_name, far_mentions, mentions in edges:
            out.append(
                Neighbour(
                    near=near,
                    uid=uid,
                    predicate=predicate,
                    outgoing=bool(outgoing),
                    far=far,
                    far_name=far_name,
                    far_mentions=int(far_mentions or 0),
                    mentions=int(mentions or 0),
                    degree=int(degree or 0),
                )
            )
    return out
