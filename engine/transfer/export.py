"""Moving one user's memory graph between stores: export as JSON, Cypher or GraphML; import.

- **json** is the lossless format: a `GraphSnapshot` (versioned pydantic document) with every
  property, embeddings included. `engine.transfer.restore.import_snapshot` writes it back through
  `GraphStore.write` (as `RestoreBatch`es), so a graph goes from the embedded store to Neo4j
  and back with the same uids and values.
- **cypher** is a script of parameter-free statements for Neo4j Browser or cypher-shell. It
  is the import itself, written out: the same named statements from `cypher/` that an import
  sends, each `$parameter` replaced by an escaped literal (`engine.transfer.cypher_literal`).
- **graphml** is a view for graph tools (networkx, Gephi, yEd): entities are nodes, facts are
  edges keyed by their uid. Episodes and history are not in it.

Example:
    >>> text = to_json(read_snapshot(store, "alice"))            # doctest: +SKIP
    >>> print(to_cypher(read_snapshot(store, "alice")))          # doctest: +SKIP
"""

from __future__ import annotations

import io
import json
import re
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, TypeVar

import networkx as nx
from pydantic import BaseModel

from engine import cypher
from engine.cypher import Dialect
from engine.errors import InvalidInputError
from engine.retrieval.lexical import TERMS_VERSION, stored_terms
from engine.store.base import GraphStore, HistoryRow, RestoreBatch, WriteBatch
from engine.store.statements import batch_statements, pack_vector, statement_texts
from engine.transfer.cypher_literal import inline_parameters
from engine.transfer.snapshot import (
    EntityRecord,
    EpisodeRecord,
    FactRecord,
    GraphSnapshot,
    HistoryRecord,
    last_changes,
)

Format = Literal["json", "cypher", "graphml"]
EXPORT_FORMATS: tuple[Format, ...] = ("json", "cypher", "graphml")
PAGE = 1000  # rows per read while exporting
CHUNK = 200  # records per write (and per statement in the Cypher script)

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)


# -- export -------------------------------------------------------------------------------


def read_all(store: GraphStore, name: str, record: type[R], user_id: str) -> list[R]:
    """Every record the paged statement `name` lists for `user_id`, in uid order (each page
    after the last uid read: a record deleted meanwhile shifts no other out of the pages); a
    half-written fact (`torn`, list_user_facts.cypher) is left out."""
    out: list[R] = []
    after = ""
    while True:
        rows = store.run(name, {"user_id": user_id, "after": after, "limit": PAGE})
        out += [record.model_validate(row[0]) for row in rows if not row[0].get("torn")]
        if len(rows) < PAGE:
            return out
        after = rows[-1][0]["uid"]


def read_snapshot(store: GraphStore, user_id: str, now: float | None = None) -> GraphSnapshot:
    """Everything `user_id`'s memory holds, read page by page, every property."""
    return GraphSnapshot(
        user_id=user_id,
        exported_at=time.time() if now is None else now,
        entities=read_all(store, "list_user_entities", EntityRecord, user_id),
        facts=read_all(store, "list_user_facts", FactRecord, user_id),
        episodes=read_all(store, "list_user_episodes", EpisodeRecord, user_id),
        history=read_all(store, "list_user_history", HistoryRecord, user_id),
    )


def to_json(snapshot: GraphSnapshot) -> str:
    return snapshot.model_dump_json()


_HOW_TO_RUN: dict[Dialect, list[str]] = {
    "neo4j": [
        "// Run it with cypher-shell -f FILE or paste it into Neo4j Browser. It creates the",
        "// indexes it needs if missing and drops nothing; each statement is an idempotent",
    ],
    "falkordb": [
        "// Run each statement (each ends with ;) with GRAPH.QUERY on the graph, or a FalkorDB",
        "// client's graph.query. It creates no index (graphmem makes its own when it opens",
        "// the store) and drops nothing; each statement is an idempotent",
    ],
}


def to_cypher(
    snapshot: GraphSnapshot, dialect: Dialect = "neo4j", *, embeddings: bool = False
) -> str:
    """A script that rebuilds the graph: schema (Neo4j), then the import's own statements."""
    header = [
        f"// graphmem export (format {snapshot.format} v{snapshot.version}) for {dialect}: "
        f"{len(snapshot.entities)} entities, {len(snapshot.facts)} facts, "
        f"{len(snapshot.episodes)} episodes, {len(snapshot.history)} history events.",
        *_HOW_TO_RUN[dialect],
        "// merge that never lowers a count already stored: running it twice changes nothing.",
    ]
    statements = cypher_statements(snapshot, dialect, embeddings=embeddings)
    return "\n".join(header) + "\n\n" + "\n\n".join(s + ";" for s in statements) + "\n"


def cypher_statements(
    snapshot: GraphSnapshot, dialect: Dialect = "neo4j", *, embeddings: bool = False
) -> list[str]:
    """The script's statements, parameter-free, without the closing semicolons. No DROP:
    the schema statements that migrate graphmem's older schemas are left to graphmem."""
    named = []
    if dialect == "neo4j":
        dimension = _dimension(snapshot) if embeddings else None
        for name in cypher.schema_names(dialect):
            if "_drop_" in name:  # graphmem's migrations of its older schemas: not for people
                continue
            text = cypher.load(name, dialect)
            if "$dimension" not in text or dimension is not None:
                named.append((text, {"dimension": dimension}))
        named.append((cypher.load("await_indexes", dialect), {"timeout_s": 300}))
    vectors = pack_vector if dialect == "falkordb" else None  # as the adapter sends them
    for batch in snapshot_batches(snapshot, embeddings=embeddings):
        named += statement_texts(batch_statements(snapshot.user_id, batch, vectors), dialect)
    escapes = dialect == "neo4j"  # FalkorDB reads \\uXXXX as six characters
    return [
        inline_parameters(cypher.without_comments(text), params, unicode_escapes=escapes)
        for text, params in named
    ]


def _dimension(snapshot: GraphSnapshot) -> int | None:
    records: list[EntityRecord | FactRecord] = [*snapshot.entities, *snapshot.facts]
    return next((len(r.embedding) for r in records if r.embedding), None)


_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _graphml_attrs(values: Mapping[str, Any]) -> dict[str, Any]:
    """GraphML has no null and no list, and XML 1.0 cannot hold most control characters."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, list):
            value = json.dumps(value, ensure_ascii=False)
        if isinstance(value, str):
            value = _NOT_XML.sub("\ufffd", value)
        if value is not None:
            out[name] = value
    return out


def to_graphml(snapshot: GraphSnapshot) -> str:
    """Entities as nodes (id = uid), facts as edges (key = uid, label = predicate)."""
    graph = nx.MultiDiGraph(user_id=snapshot.user_id, exported_at=snapshot.exported_at)
    for e in snapshot.entities:
        props = e.model_dump(exclude={"uid", "embedding", "alias_keys", "load_marks"})
        graph.add_node(e.uid, **_graphml_attrs({"label": e.name, **props}))
    for f in snapshot.facts:
        props = f.model_dump(exclude={"uid", "embedding", "relationship", "episodes"})
        props |= {"label": f.predicate, "valid": f.invalid_at is None}
        graph.add_edge(f.subject_uid, f.object_uid, key=f.uid, **_graphml_attrs(props))
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer, encoding="utf-8")
    return buffer.getvalue().decode("utf-8")


def render(
    snapshot: GraphSnapshot, fmt: Format, *, dialect: Dialect = "neo4j", embeddings: bool = False
) -> str:
    """The snapshot in `fmt` ("json", "cypher" or "graphml")."""
    if fmt == "json":
        return to_json(snapshot)
    if fmt == "cypher":
        return to_cypher(snapshot, dialect, embeddings=embeddings)
    if fmt == "graphml":
        return to_graphml(snapshot)
    raise InvalidInputError(f"format must be one of {', '.join(EXPORT_FORMATS)}; got {fmt!r}")


# -- writing back -------------------------------------------------------------------------


def _chunks(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def snapshot_batches(
    snapshot: GraphSnapshot,
    *,
    embeddings: bool = True,
    chunk: int = CHUNK,
    episode_vectors: dict[str, list[float]] | None = None,
) -> Iterator[RestoreBatch | WriteBatch]:
    """Batches that restore `snapshot`: entities, then facts (each with `changed_at`, the
    time of its latest change event in the snapshot), episodes (with `episode_vectors`, by
    uid, when given) and history. Embeddings travel beside the rows."""
    episode_vectors = episode_vectors or {}
    changed = last_changes(snapshot.history)
    for entities in _chunks(snapshot.entities, chunk):
        vectors = {e.uid: list(e.embedding) for e in entities if e.embedding and embeddings}
        records = [e.model_dump(exclude={"embedding"}) for e in entities]
        yield RestoreBatch(entities=records, entity_embeddings=vectors)
    for facts in _chunks(snapshot.facts, chunk):
        vectors = {f.uid: list(f.embedding) for f in facts if f.embedding and embeddings}
        records = [
            {**f.model_dump(exclude={"embedding"}), "changed_at": changed.get(f.uid)} for f in facts
        ]
        yield RestoreBatch(facts=records, fact_embeddings=vectors)
    for episodes in _chunks(snapshot.episodes, chunk):
        vectors = {p.uid: episode_vectors[p.uid] for p in episodes if p.uid in episode_vectors}
        records = [{**p.model_dump(), **_terms(p.speaker, p.content)} for p in episodes]
        yield RestoreBatch(episodes=records, episode_embeddings=vectors)
    for events in _chunks(snapshot.history, chunk):
        rows = [
            HistoryRow(h.uid, h.target_uid, h.event, h.ts, h.episode_uid, h.detail) for h in events
        ]
        yield WriteBatch(history=rows)


def batch_records(batch: RestoreBatch | WriteBatch) -> int:
    """How many exported records one of `snapshot_batches` writes."""
    if isinstance(batch, WriteBatch):
        return len(batch.history)
    return len(batch.entities) + len(batch.facts) + len(batch.episodes)


def _terms(speaker: str | None, content: str) -> dict[str, Any]:
    """The episode leg's index terms of a message, stored with it so a load only reads them."""
    return {"terms": stored_terms(speaker, content), "terms_v": TERMS_VERSION}
