"""Dialect variants stay in step: every FalkorDB variant has a Neo4j twin returning the same
columns, and every statement an adapter names resolves for Neo4j."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine import cypher
from engine.store.base import EntityRow, FactRow, WriteBatch
from engine.store.statements import batch_statements

CYPHER = Path(__file__).resolve().parents[2] / "cypher"
FALKORDB = sorted(p.name for p in (CYPHER / "falkordb").glob("*.cypher"))
NEO4J = sorted(p.name for p in (CYPHER / "neo4j").glob("*.cypher"))
# FalkorDB files with no Neo4j twin, and why.
FALKORDB_ONLY = {
    name: "FalkorDB keeps no vector index on disk: a clean close drops them (fast reopen)"
    for name in (
        "drop_entity_vector_index.cypher",
        "drop_fact_vector_index.cypher",
        "drop_episode_vector_index.cypher",
        "list_indexes.cypher",
        "count_all_nodes.cypher",
        "list_vector_dimensions.cypher",
        "set_vector_dimension.cypher",
        "get_vector_dimension.cypher",
    )
} | {
    name: "FalkorDB's name search asks its shared fulltext index for the user's key "
    "(engine/store/fulltext.py): a store written before the key gets it at setup"
    for name in (
        "list_users_without_user_key.cypher",
        "set_entity_user_keys.cypher",
        "schema_11_entity_user_key.cypher",
    )
}
FALKORDB_ONLY["expand_typed_batched.cypher"] = (
    "FalkorDB runs a subquery once per row: four or more small nodes are read in one traversal "
    "(engine/store/reads.py); Neo4j reads them with expand_typed"
)
FALKORDB_ONLY["sample_relation_ends_by_facts.cypher"] = (
    "FalkorDB walks a user's every entity once per type: sparse relations are sampled through "
    "the facts first (engine/store/reads.py); Neo4j reads them by type"
)
FALKORDB_ONLY |= dict.fromkeys(
    (
        "drop_fact_fulltext_index.cypher",
        "drop_episode_fulltext_index.cypher",
        "drop_history_user_index.cypher",
        "drop_history_target_index.cypher",
        "drop_history_uid_index.cypher",
    ),
    "FalkorDB builds every index of a snapshot before it answers: a clean close drops those "
    "no search reads, and setup declares them again (built in the background)",
)
QUERIES = [n for n in FALKORDB if not n.startswith("schema_") and n not in FALKORDB_ONLY]

# Neo4j files with no FalkorDB twin, and why.
NEO4J_ONLY = {
    "await_indexes.cypher": "Neo4j populates new indexes in the background; FalkorDB does not",
    "delete_all_nodes.cypher": "batched: a Neo4j transaction holds every change in memory",
}
_ALIAS = re.compile(r"\bAS\s+(\w+)")


def _return_columns(text: str) -> list[str]:
    return _ALIAS.findall(text[text.rindex("RETURN") :])


@pytest.mark.parametrize("name", [n for n in FALKORDB if n not in FALKORDB_ONLY])
def test_every_falkordb_variant_has_a_neo4j_twin(name: str) -> None:
    assert name in NEO4J, f"cypher/neo4j/{name} is missing"


@pytest.mark.parametrize("name", sorted(set(NEO4J) - set(FALKORDB)))
def test_neo4j_only_files_are_schema_or_documented(name: str) -> None:
    assert name.startswith("schema_") or name in NEO4J_ONLY


@pytest.mark.parametrize("name", QUERIES)
def test_twins_return_the_same_columns(name: str) -> None:
    stem = name.removesuffix(".cypher")
    falkordb, neo4j = cypher.load(stem, "falkordb"), cypher.load(stem, "neo4j")
    assert _return_columns(neo4j) == _return_columns(falkordb)


def test_neo4j_schema_is_idempotent() -> None:
    statements = cypher.schema_statements("neo4j")
    assert len(statements) >= len([n for n in FALKORDB if n.startswith("schema_")])
    drops = [s for s in statements if "DROP " in s]
    assert all("IF EXISTS" in s for s in drops)
    assert all("IF NOT EXISTS" in s for s in statements if s not in drops)


def test_every_batch_statement_resolves_for_neo4j() -> None:
    entity = EntityRow(uid="e", key="k", name="K", type=None, ts=0.0)
    fact = FactRow(uid="f", subject_uid="e", object_uid="e", predicate="P", text="t", ts=0.0)
    batch = WriteBatch(entities=[entity], facts=[fact], entity_embeddings={"e": [1.0]},
                       fact_embeddings={"f": [1.0]}, invalidate=["f"])  # fmt: skip
    for name, _, _ in batch_statements("u", batch):
        assert cypher.load(name, "neo4j")
