"""LlamaIndex's `Neo4jPropertyGraphStore` reading graphmem's graph in place, through
`GraphmemPropertyGraphStore` (one user, read-only).

No Neo4j server runs here, so LlamaIndex's own statements are (1) checked by Neo4j's parser
(tests/cypher_lint) and (2) run on the embedded FalkorDB: `get` verbatim; `get_triplets` and
`get_rel_map` with the two spellings FalkorDB lacks replaced by their equivalents (a scoped
subquery `CALL (e) {` as `CALL {`, whose body starts `WITH e` anyway; `LIMIT toInteger($limit)`
as `LIMIT $limit`, the parameter being an integer). `vector_query` uses Neo4j's
`vector.similarity.cosine`, which FalkorDB has not: lint only. The `neo4j`-marked test runs all
of it verbatim on Neo4j when NEO4J_URI is set.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from llama_index.core.base.llms.types import CompletionResponse
from llama_index.core.graph_stores import SimplePropertyGraphStore
from llama_index.core.graph_stores.types import EntityNode
from llama_index.core.indices.property_graph import LLMSynonymRetriever, PropertyGraphIndex
from llama_index.core.llms import MockLLM
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)

from engine.errors import ClosedError, InvalidInputError, StoreError
from engine.integrations.llama_index import import_llama_index_graph
from engine.integrations.llama_index.graph_store import GraphmemPropertyGraphStore
from engine.memory import Memory
from engine.models import FactInput
from tests.integration.test_cypher_lint import lint, problems

FACTS = [
    FactInput(subject="Alice", predicate="FRIEND_OF", object="John", subject_type="person"),
    FactInput(
        subject="John",
        predicate="OWNS",
        object="Tommy",
        text="John has a dog named Tommy",
        subject_type="person",
        object_type="animal",
    ),
]
REWRITES = [("CALL (e) {", "CALL {"), ("LIMIT toInteger($limit)", "LIMIT $limit")]


@pytest.fixture(autouse=True)
def closed_stores(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Every store a test opens is closed after it (its driver never connected)."""
    opened: list[GraphmemPropertyGraphStore] = []
    original = GraphmemPropertyGraphStore.__init__

    def tracked(self: GraphmemPropertyGraphStore, *args: Any, **kwargs: Any) -> None:
        opened.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(GraphmemPropertyGraphStore, "__init__", tracked)
    yield
    for store in opened:
        store.close()


class OnEmbeddedStore(GraphmemPropertyGraphStore):
    """The Bolt transport swapped for the embedded FalkorDB; everything above it is real."""

    def __init__(self, graph: Any, user_id: str, *, record: bool = False) -> None:
        self._falkordb, self.sent, self._record = graph, [], record
        super().__init__("neo4j", "unused", "bolt://127.0.0.1:9", user_id)

    def _reach(self, url: str, auth: tuple[str, str]) -> None:
        """No Neo4j to reach: the statements go to FalkorDB."""

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.sent.append((query, params))
        if self._record:
            return []
        for neo4j_form, falkordb_form in REWRITES:
            query = query.replace(neo4j_form, falkordb_form)
        result = self._falkordb.ro_query(query, params)
        names = [column[1] for column in result.header]
        return [dict(zip(names, row, strict=True)) for row in result.result_set]


@pytest.fixture
def graph(memory: Memory) -> Any:
    if memory.store.dialect != "falkordb":
        pytest.skip("the embedded-store half; test_on_neo4j covers Neo4j")
    memory.add_facts(FACTS, user_id="alice")
    memory.add_facts([("John", "OWNS", "Rex"), ("Bob", "FRIEND_OF", "John")], user_id="bob")
    return memory.store._graph  # type: ignore[attr-defined]


def test_the_store_opens_without_free_cypher() -> None:
    """LlamaIndex's constructor checks Neo4j's version with `structured_query`, which this
    store refuses: no GraphmemPropertyGraphStore could be built on a real Neo4j."""
    pg = OnEmbeddedStore(None, "alice", record=True)
    assert pg.user_id == "alice" and pg.supports_vector_queries
    with pytest.raises(InvalidInputError, match="structured_query is refused"):
        pg.structured_query("CALL dbms.components()")


class Unreached(GraphmemPropertyGraphStore):
    """The store with its own driver and reads, built where no Neo4j answers."""

    def _reach(self, url: str, auth: tuple[str, str]) -> None:
        """Built without a server: the driver connects at its first read."""


def test_a_closed_store_says_it_is_closed() -> None:
    """LlamaIndex's `close()` drops the driver: a read after it raised AttributeError
    ('... object has no attribute _driver')."""
    pg = Unreached("neo4j", "unused", "bolt://127.0.0.1:9", "alice")
    pg.close()
    with pytest.raises(ClosedError, match="Unreached is closed: open a new one"):
        pg.get(ids=["John"])
    with pytest.raises(ClosedError):
        pg.get_triplets()
    pg.close()  # twice is harmless


def test_get_returns_the_users_entities_only(graph: Any, memory: Memory) -> None:
    pg = OnEmbeddedStore(graph, "alice")
    nodes = pg.get()
    assert {n.properties["name"] for n in nodes} == {"Alice", "John", "Tommy"}
    john = memory.entity("John", "alice").entity
    assert [(n.id, n.properties["uid"]) for n in pg.get(ids=[john.uid])] == [("John", john.uid)]
    bobs_john = memory.entity("John", "bob").entity
    assert pg.get(ids=[bobs_john.uid]) == []
    assert all(isinstance(n, EntityNode) for n in nodes)


def test_get_by_many_names_is_one_read(graph: Any, memory: Memory) -> None:
    """`get(ids=...)` (LLMSynonymRetriever's keywords) sent one statement for the ids, then one
    more per id that was none, looking it up as a name: seven reads for six keywords."""
    pg = OnEmbeddedStore(graph, "alice")
    john, tommy = (memory.entity(n, "alice").entity for n in ("John", "Tommy"))
    nodes = pg.get(ids=["john", "TOMMY", "Alice", "Rex", "Bob", "nobody"])
    assert len(pg.sent) == 1
    assert [n.id for n in nodes] == ["John", "Tommy", "Alice"]  # bob's Rex and Bob are not
    assert {n.properties["user_id"] for n in nodes} == {"alice"}
    assert [n.id for n in pg.get(ids=[tommy.uid, "john", john.uid])] == ["Tommy", "John"]
    typed = pg.get(properties={"type": john.type}, ids=["Tommy", "John"])
    assert [n.id for n in typed] == ["John"]  # the other properties hold too
    assert pg.get(properties={"name": "John"}, ids=[tommy.uid]) == []
    bobs_john = memory.entity("John", "bob").entity
    assert pg.get(ids=[bobs_john.uid, "Rex", "Bob"]) == []
    assert len(pg.sent) == 5
    with pytest.raises(StoreError, match="returned another user's node"):
        LeakyNodes(graph, "alice").get(ids=["John"])


class LeakyNodes(OnEmbeddedStore):
    """A store whose node read answers with another user's nodes (a broken statement)."""

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        rows = super()._read(query, params)
        return [{**r, "properties": {**r["properties"], "user_id": "bob"}} for r in rows]


def test_triplets_of_many_names_take_one_node_read(graph: Any) -> None:
    """`get_triplets(entity_names=...)` looked each name up in a read of its own."""
    pg = OnEmbeddedStore(graph, "alice")
    triplets = pg.get_triplets(entity_names=["john", "Tommy", "Rex", "nobody"])
    assert len(pg.sent) == 3  # the names, the triplets, their facts
    assert {s.name for s, _, _ in triplets} | {t.name for _, _, t in triplets} >= {"John", "Tommy"}
    assert "Rex" not in {t.name for _, _, t in triplets}  # bob's dog


def test_get_triplets_by_name_stays_in_the_users_graph(graph: Any) -> None:
    pg = OnEmbeddedStore(graph, "alice")
    triplets = pg.get_triplets(entity_names=["John"])
    seen = {(s.name, r.label, t.name) for s, r, t in triplets}
    assert seen == {("Alice", "FRIEND_OF", "John"), ("John", "OWNS", "Tommy")}
    assert all(r.properties["user_id"] == "alice" for _, r, _ in triplets)
    assert pg.get_triplets(entity_names=["Rex"]) == []  # bob's dog
    everything = pg.get_triplets()
    assert {r.label for _, r, _ in everything} == {"FRIEND_OF", "OWNS"}
    seen_once = {(s.id, r.label, t.id) for s, r, t in everything}
    assert len(everything) == len(seen_once)  # each relation once: it came twice, one per end


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda pg: pg.get(ids="John"), "ids must be a list of strings, got 'John'"),
        (lambda pg: pg.get(ids=[None]), r"ids must be a list of strings, got \[None\]"),
        (lambda pg: pg.get_triplets(entity_names="John"), "entity_names must be a list"),
        (lambda pg: pg.get_triplets(relation_names="OWNS"), "relation_names must be a list"),
        (lambda pg: pg.get(properties=["name"]), "properties must be a dict"),
        (lambda pg: pg.get_rel_map(["John"]), "graph_nodes must be a list of LlamaIndex nodes"),
        (lambda pg: pg.get_rel_map(pg.get(), ignore_rels="OWNS"), "ignore_rels must be a list"),
        (lambda pg: pg.vector_query([0.1] * 384), "query must be a VectorStoreQuery, got list"),
    ],
)
def test_an_argument_of_the_wrong_shape_is_named(graph: Any, call: Any, named: str) -> None:
    """One string where LlamaIndex takes a list was read letter by letter: `get(ids="John")`
    and `get_triplets(entity_names="John")` found nothing, `relation_names="OWNS"` asked for
    relations O, W, N and S; other shapes raised AttributeError from inside LlamaIndex."""
    pg = OnEmbeddedStore(graph, "alice")
    with pytest.raises(InvalidInputError, match=named):
        call(pg)
    assert [query for query, _ in pg.sent if "vector" in query] == []


def test_relation_names_in_any_script_are_read(graph: Any, memory: Memory) -> None:
    memory.add_facts([("John", "住在", "北京"), ("John", "vive en", "Madrid")], user_id="alice")
    memory.add_facts([("John", "住在", "上海")], user_id="bob")
    pg = OnEmbeddedStore(graph, "alice")
    triplets = pg.get_triplets(entity_names=["John"], relation_names=["住在", "VIVE_EN"])
    assert {(r.label, t.name) for _, r, t in triplets} == {("住在", "北京"), ("VIVE_EN", "Madrid")}
    assert [t.name for _, _, t in pg.get_triplets(relation_names=["住在"])] == ["北京"]
    with pytest.raises(InvalidInputError, match="not a relationship type"):
        pg.get_triplets(relation_names=["住在`]->() DETACH DELETE"])


def test_get_rel_map_walks_typed_edges_of_the_users_nodes(graph: Any, memory: Memory) -> None:
    pg = OnEmbeddedStore(graph, "alice")
    alice = pg.get(properties={"name": "Alice"})
    triplets = pg.get_rel_map(alice, depth=2, limit=30)
    assert {r.label for _, r, _ in triplets} == {"FRIEND_OF", "OWNS"}
    uids = {memory.entity(n, "alice").entity.uid for n in ("Alice", "John", "Tommy")}
    assert {s.id for s, _, _ in triplets} | {t.id for _, _, t in triplets} == {
        "Alice",
        "John",
        "Tommy",
    }
    assert {n.properties["uid"] for t in triplets for n in (t[0], t[2])} == uids
    bobs = pg.get_rel_map([EntityNode(name=memory.entity("Bob", "bob").entity.uid)])
    assert bobs == []


class SynonymLLM(MockLLM):
    """LlamaIndex's mock LLM answering the synonym prompt with fixed keywords."""

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="john^TOMMY^Rex")


def test_llama_index_retrievers_see_the_users_entities_by_name(graph: Any, memory: Memory) -> None:
    """LLMSynonymRetriever asks `get(ids=<names>)`, as LlamaIndex's own graphs use names for
    ids: it found nothing. And every triplet read as '<uid> -> OWNS -> <uid>' to the LLM."""
    pg = OnEmbeddedStore(graph, "alice")
    retriever = LLMSynonymRetriever(pg, llm=SynonymLLM(), include_text=False)
    texts = {n.node.get_content() for n in retriever.retrieve("Who is John's dog?")}
    assert texts == {"Alice -> FRIEND_OF -> John", "John -> OWNS -> Tommy"}  # not bob's Rex
    index = PropertyGraphIndex.from_existing(pg, llm=SynonymLLM(), embed_kg_nodes=False)
    found = index.as_retriever(sub_retrievers=[retriever], use_async=False).retrieve(
        "Who is John's dog?"
    )
    assert {n.node.get_content() for n in found} == texts
    [john] = pg.get(ids=["John"])
    assert [n.id for n in pg.get(ids=[john.properties["uid"], "john"])] == ["John"]
    # VectorContextRetriever's get_rel_map leaves out only SOURCE: graphmem's structure too
    triplets = pg.get_rel_map([john], depth=2, ignore_rels=["SOURCE"])
    assert {(s.id, r.label, t.id) for s, r, t in triplets} == {
        ("Alice", "FRIEND_OF", "John"),
        ("John", "OWNS", "Tommy"),
    }
    assert {(r.source_id, r.target_id) for _, r, _ in triplets} == {
        ("Alice", "John"),
        ("John", "Tommy"),
    }
    assert pg.get(ids=["Rex", "Bob"]) == [] and memory.entity("Rex", "bob").entity.name == "Rex"


def test_a_fact_ended_by_hand_shows_its_end_on_the_relation(graph: Any, memory: Memory) -> None:
    """`Memory.update(invalid_at=...)` set the end on the :Fact node only: FalkorDB reads the
    fact's old (unset) ends in the second SET, so the typed relationship LlamaIndex reads lost
    its `valid_at` and never got an `invalid_at`."""
    [owns] = [f for f in memory.get_all("alice") if f.predicate == "OWNS"]
    memory.update(owns.uid, "alice", valid_at="2019-01-01", invalid_at="2021-01-01")
    pg = OnEmbeddedStore(graph, "alice")
    [(_, relation, _)] = pg.get_triplets(entity_names=["Tommy"])
    assert relation.label == "OWNS"
    assert (relation.properties["valid_at"], relation.properties["invalid_at"]) == (
        1546300800.0,
        1609459200.0,
    )


def test_relations_keep_their_facts_sentence_in_another_store(graph: Any, memory: Memory) -> None:
    """The typed relationship LlamaIndex reads has no `text`: a graph copied from this store
    into another property graph store (and from there into graphmem again) lost every fact's
    sentence, its first_seen, confidence and messages."""
    pg = OnEmbeddedStore(graph, "alice")
    triplets = pg.get_triplets(entity_names=["John"])
    walked = pg.get_rel_map(pg.get(ids=["Alice"]), depth=2)
    facts = {f.uid: f for f in memory.get_all("alice")}
    for _, relation, _ in triplets + walked:
        fact, props = facts[relation.properties["uid"]], relation.properties
        assert props["text"] == fact.text and props["user_id"] == "alice"
        assert props["episodes"] == fact.episodes and props["confidence"] == fact.confidence
        assert fact.first_seen is not None and props["first_seen"] == fact.first_seen.timestamp()
        assert props["mentions"] == fact.mentions and props["last_seen"] is not None
    assert {r.label: r.properties["text"] for _, r, _ in walked}["OWNS"] == (
        "John has a dog named Tommy"
    )
    copy = SimplePropertyGraphStore()
    copy.upsert_nodes([node for s, _, t in triplets for node in (s, t)])
    copy.upsert_relations([relation for _, relation, _ in triplets])
    import_llama_index_graph(memory, copy, "carol")
    assert {f.text for f in memory.get_all("carol")} == {f.text for f in facts.values()}
    assert not {f.text for f in memory.get_all("bob")} & {f.text for f in facts.values()}
    with pytest.raises(StoreError, match="returned another user's fact"):
        LeakyFacts(graph, "alice").get_triplets(entity_names=["John"])


class LeakyFacts(OnEmbeddedStore):
    """A store whose fact read answers with another user's facts (a broken statement)."""

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        rows = super()._read(query, params)
        return [{**r, "fact": {**r["fact"], "user_id": "bob"}} if "fact" in r else r for r in rows]


def test_get_rel_map_gives_limit_triplets_when_the_graph_holds_them(
    graph: Any, memory: Memory
) -> None:
    """LlamaIndex cuts at `limit` before it drops the ignored relations, and graphmem's
    structural edges (two per fact) took most of the limit: 15 of 30 asked with 22 there."""
    memory.add_facts([("Alice", "KNOWS", f"Person{i}") for i in range(20)], user_id="alice")
    pg = OnEmbeddedStore(graph, "alice")
    alice = pg.get(properties={"name": "Alice"})
    assert len(pg.get_rel_map(alice, depth=2, limit=20)) == 20
    assert len(pg.get_rel_map(alice, depth=2, limit=30)) == 22  # everything there is
    assert len(pg.get_rel_map(alice, depth=1, limit=10)) == 10
    with pytest.raises(InvalidInputError, match="limit must be"):
        pg.get_rel_map(alice, limit="10")


def test_nothing_llama_index_calls_can_write(graph: Any, memory: Memory) -> None:
    pg = OnEmbeddedStore(graph, "alice")
    for call in (
        lambda: pg.delete(entity_names=["John"]),
        lambda: pg.delete(ids=["x"]),
        lambda: pg.upsert_nodes([EntityNode(name="Eve")]),
        lambda: pg.upsert_relations([]),
        lambda: pg.delete_llama_nodes(node_ids=["x"]),
    ):
        with pytest.raises(InvalidInputError, match="read-only"):
            call()
    with pytest.raises(InvalidInputError, match="reads user 'alice' only"):
        pg.get(properties={"user_id": "bob"})
    with pytest.raises(InvalidInputError, match="refresh_schema"):
        GraphmemPropertyGraphStore("neo4j", "x", "bolt://127.0.0.1:9", "alice", refresh_schema=True)
    assert memory.entity("John", "bob").entity.name == "John"


def test_vector_query_always_filters_by_the_user() -> None:
    pg = OnEmbeddedStore(None, "alice", record=True)
    pg.vector_query(VectorStoreQuery(query_embedding=[0.1] * 384, similarity_top_k=5))
    query, params = pg.sent[-1]
    assert "vector.similarity.cosine" in query and "e.`user_id` = $param_0" in query
    assert params["param_0"] == "alice"
    either = MetadataFilters(
        filters=[MetadataFilter(key="name", value="a"), MetadataFilter(key="name", value="b")],
        condition=FilterCondition.OR,
    )
    with pytest.raises(InvalidInputError, match="only AND filters"):
        pg.vector_query(VectorStoreQuery(query_embedding=[0.1], filters=either))


def test_llama_index_read_queries_pass_neo4js_parser(tmp_path: Path) -> None:
    pg = OnEmbeddedStore(None, "alice", record=True)
    pg.get(ids=["u"])  # cypher/get_nodes_by_ids_or_keys.cypher, linted here too
    pg.get(properties={"name": "John"})
    pg.get_triplets()
    pg._own_ids = lambda names, ids: ["u"]  # type: ignore[method-assign]
    pg.get_triplets(entity_names=["John"], relation_names=["OWNS"])
    pg._nodes = lambda properties=None, ids=None: [EntityNode(name="u")]  # type: ignore[method-assign]
    pg.get_rel_map([EntityNode(name="u")], depth=2)
    pg.vector_query(VectorStoreQuery(query_embedding=[0.1] * 384, similarity_top_k=5))
    paths = []
    for i, query in enumerate(dict.fromkeys(query for query, _ in pg.sent)):
        paths.append(tmp_path / f"llama_index_{i}.cypher")
        paths[-1].write_text(query, encoding="utf-8")
    report = lint(paths, schema="llama_index")
    assert len(paths) == 6  # get and get_triplets (two forms each), get_rel_map, vector_query
    assert {str(p.name): problems(report[str(p)]) for p in paths} == {p.name: [] for p in paths}


@pytest.mark.neo4j
def test_on_neo4j(store: Any, memory: Memory) -> None:
    if store.dialect != "neo4j":
        pytest.skip("Neo4j only")
    memory.add_facts(FACTS, user_id="alice")
    memory.add_facts([("John", "OWNS", "Rex")], user_id="bob")
    pg = GraphmemPropertyGraphStore(
        os.environ.get("NEO4J_USER", "neo4j"), os.environ.get("NEO4J_PASSWORD", ""),
        os.environ["NEO4J_URI"], "alice", database=os.environ.get("NEO4J_DATABASE", "neo4j"),
    )  # fmt: skip
    try:
        seen = {(s.name, r.label, t.name) for s, r, t in pg.get_triplets(entity_names=["John"])}
        assert seen == {("Alice", "FRIEND_OF", "John"), ("John", "OWNS", "Tommy")}
        query = memory.embedder.encode(["John"])[0].tolist()
        nodes, _ = pg.vector_query(VectorStoreQuery(query_embedding=query, similarity_top_k=3))
        assert nodes and all(n.properties["user_id"] == "alice" for n in nodes)
        assert pg.get_rel_map(nodes[:1])
        with pytest.raises(InvalidInputError, match="structured_query is refused"):
            pg.structured_query("MATCH (n {name: 'John'}) DETACH DELETE n")
    finally:
        pg.close()
    assert memory.entity("John", "bob").entity.name == "John"
