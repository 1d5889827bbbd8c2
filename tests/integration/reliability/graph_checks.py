"""Raw checks on the stored graph (tests only): every fact whole in both its forms, one
entity node per key. They read the FalkorDB graph directly, below the engine."""

from __future__ import annotations

from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore

# a :Fact node without its SUBJECT, its OBJECT or its typed relationship of the same uid
HALF_FACTS = """
MATCH (f:Fact {user_id: $user_id})
OPTIONAL MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (s)-[r]->(o) WHERE r.uid = f.uid AND type(r) = f.predicate
WITH f, count(DISTINCT s) AS subjects, count(DISTINCT o) AS objects, count(r) AS rels
WHERE subjects <> 1 OR objects <> 1 OR rels <> 1
RETURN f.uid
"""
# a typed relationship whose :Fact node is missing
ORPHAN_RELATIONSHIPS = """
MATCH (:Entity {user_id: $user_id})-[r]->(:Entity)
WHERE r.uid IS NOT NULL
OPTIONAL MATCH (f:Fact {uid: r.uid})
WITH r, f WHERE f IS NULL
RETURN r.uid
"""
DUPLICATE_KEYS = """
MATCH (e:Entity {user_id: $user_id})
WITH e.key AS key, count(e) AS n WHERE n > 1
RETURN key, n
"""
USER_NODES = "MATCH (n) WHERE n.user_id = $user_id RETURN labels(n)[0], count(n)"


def _rows(store: GraphStore, query: str, user_id: str) -> list[list[object]]:
    assert isinstance(store, FalkorDBStore)
    return list(store._graph.ro_query(query, {"user_id": user_id}).result_set)


def half_written(store: GraphStore, user_id: str) -> list[object]:
    """Fact uids present in one form only (must be empty)."""
    broken = _rows(store, HALF_FACTS, user_id) + _rows(store, ORPHAN_RELATIONSHIPS, user_id)
    return [row[0] for row in broken]


def duplicate_keys(store: GraphStore, user_id: str) -> list[list[object]]:
    """(key, count) for keys held by more than one entity node (must be empty)."""
    return _rows(store, DUPLICATE_KEYS, user_id)


def nodes_of(store: GraphStore, user_id: str) -> dict[str, int]:
    """Every node carrying `user_id`, counted by label (Entity, Fact, Episode, History)."""
    return {str(label): int(str(n)) for label, n in _rows(store, USER_NODES, user_id)}
