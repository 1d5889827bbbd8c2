"""`GraphmemPropertyGraphStore` scoped to alice reads alice's nodes only, whatever a caller,
an LLM or a crafted name passes: `structured_query` is refused, and every name LlamaIndex
splices into its Cypher text (property and filter keys, relation names, depth, operators) is
checked before a statement is built. No Neo4j runs here: LlamaIndex's statements run on the
embedded FalkorDB (tests/integration/test_llama_index_graph.py's `OnEmbeddedStore`), or are
recorded.
"""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.graph_stores.types import EntityNode
from llama_index.core.vector_stores.types import (
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from engine.errors import InvalidInputError
from tests.integration.test_llama_index_graph import OnEmbeddedStore, closed_stores, graph  # noqa: F401

OR_TRUE = "name` = $property_0 OR true OR e.`name"


def test_structured_query_is_refused_and_sends_nothing(graph: Any) -> None:  # noqa: F811
    pg = OnEmbeddedStore(graph, "alice")
    with pytest.raises(InvalidInputError, match="structured_query is refused"):
        pg.structured_query("MATCH (e:__Entity__) RETURN e.name AS name")
    with pytest.raises(InvalidInputError, match="structured_query is refused"):
        pg.structured_query("MATCH (e:__Entity__ {user_id: $u}) RETURN e.name", {"u": "bob"})
    assert pg.sent == []
    assert {n.properties["name"] for n in pg.get()} == {"Alice", "John", "Tommy"}  # still reads


def test_a_property_key_cannot_drop_the_user_filter(graph: Any) -> None:  # noqa: F811
    pg = OnEmbeddedStore(graph, "alice")
    for properties in ({OR_TRUE: "x"}, {"name`": "John"}, {"": "x"}, {"a b": 1}):
        with pytest.raises(InvalidInputError, match="not a plain property name"):
            pg.get(properties=properties)
        with pytest.raises(InvalidInputError, match="not a plain property name"):
            pg.get_triplets(properties=properties)
    assert pg.sent == []
    assert pg.get(properties={"name": "Rex"}) == []  # bob's dog, asked for plainly


def test_relation_names_and_depth_are_checked_before_splicing(graph: Any) -> None:  # noqa: F811
    pg = OnEmbeddedStore(graph, "alice")
    for names in (["OWNS`]-(t) RETURN t //"], ["owns"], [""]):
        with pytest.raises(InvalidInputError, match="not a relationship type of graphmem"):
            pg.get_triplets(entity_names=["John"], relation_names=names)
    alice = EntityNode(name="x")
    refused = []
    for depth in ("1]-(o) RETURN o //", 0, 99, True):
        with pytest.raises(InvalidInputError) as info:
            pg.get_rel_map([alice], depth=depth)  # type: ignore[arg-type]
        refused.append(str(info.value))
    assert pg.sent == []
    assert refused == [
        "depth must be between 1 and 4, got '1]-(o) RETURN o //'",
        "depth must be between 1 and 4, got 0",
        "depth must be between 1 and 4, got 99",
        "depth must be between 1 and 4, got True",
    ]  # as every count is named (normalize.check_count)
    owns = pg.get_triplets(entity_names=["John"], relation_names=["OWNS"])
    assert {(s.name, r.label, t.name) for s, r, t in owns} == {("John", "OWNS", "Tommy")}


def test_filter_keys_and_operators_are_checked_before_splicing() -> None:
    pg = OnEmbeddedStore(None, "alice", record=True)
    injected = MetadataFilters(filters=[MetadataFilter(key=OR_TRUE, value="x")])
    with pytest.raises(InvalidInputError, match="not a plain property name"):
        pg.vector_query(VectorStoreQuery(query_embedding=[0.1] * 384, filters=injected))
    matching = MetadataFilters(
        filters=[MetadataFilter(key="name", value="x", operator=FilterOperator.TEXT_MATCH)]
    )
    with pytest.raises(InvalidInputError, match="filter operator 'text_match'"):
        pg.vector_query(VectorStoreQuery(query_embedding=[0.1] * 384, filters=matching))
    assert pg.sent == []
    plain = MetadataFilters(filters=[MetadataFilter(key="type", value="person")])
    pg.vector_query(VectorStoreQuery(query_embedding=[0.1] * 384, filters=plain))
    ((query, params),) = pg.sent
    assert "( e.`type` = $param_0 and e.`user_id` = $param_1)" in " ".join(query.split())
    assert params["param_1"] == "alice"
