"""Safe defaults around Neo4j: reset() deletes graphmem's nodes only, the compose file listens
on the loopback interface, no password is shared through the repository, and the docs state
the Neo4j version the Cypher needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore


def _run_raw(store: GraphStore, text: str) -> list[Any]:
    """Cypher of the test's own, to stand in for another application's data."""
    if isinstance(store, FalkorDBStore):
        return list(store._graph.query(text).result_set)
    with store._driver.session(database=store._database) as session:  # type: ignore[attr-defined]
        return [record.values() for record in session.run(text)]


def test_reset_deletes_graphmem_s_nodes_only(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    _run_raw(store, "CREATE (:Customer {name: 'keep me'})-[:ORDERED]->(:Invoice {n: 1})")
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    mem.reset()
    assert mem.get_all("alice") == []
    left = _run_raw(store, "MATCH (c:Customer)-[:ORDERED]->(i:Invoice) RETURN c.name, i.n")
    _run_raw(store, "MATCH (n) WHERE n:Customer OR n:Invoice DETACH DELETE n")
    assert left == [["keep me", 1]]
