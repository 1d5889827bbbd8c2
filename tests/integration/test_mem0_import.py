"""Importing the graph Mem0's graph memory leaves in Neo4j: the same schema, built in the
embedded store (nodes labelled with their type, and `__Entity__` when Mem0's `base_label` is
on, with name, user_id, embedding; typed relationships)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from engine.compat.mem0_import import import_mem0_graph, mem0_facts
from engine.embedding import Embedder
from engine.errors import LimitExceededError
from engine.memory import Memory
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer

# Mem0's own writes, as its graph memory makes them (lower-case names and types, underscores)
MEM0_GRAPH = """
CREATE (a:__Entity__:person {name: 'alice123', user_id: 'alice123', embedding: vecf32($v),
                             created: 1, mentions: 3}),
       (h:__Entity__:activity {name: 'hiking', user_id: 'alice123', embedding: vecf32($v)}),
       (b:__Entity__:sport {name: 'badminton', user_id: 'alice123', embedding: vecf32($v)}),
       (j:__Entity__:person {name: 'john', user_id: 'alice123', embedding: vecf32($v)}),
       (t:__Entity__:dog {name: 'tommy', user_id: 'alice123', embedding: vecf32($v)}),
       (s:__Entity__:unknown {name: 'sci_fi_movies', user_id: 'alice123', embedding: vecf32($v)}),
       (bob:__Entity__:person {name: 'bob', user_id: 'bob', embedding: vecf32($v)}),
       (tea:__Entity__:drink {name: 'tea', user_id: 'bob', embedding: vecf32($v)}),
       (a)-[:likes {created: 1, mentions: 1}]->(h),
       (a)-[:hates_playing {created: 2, mentions: 1}]->(b),
       (a)-[:friend {created: 3, mentions: 1}]->(j),
       (j)-[:has_dog {created: 4, mentions: 1}]->(t),
       (a)-[:loves {created: 5, mentions: 2}]->(s),
       (bob)-[:likes {created: 6, mentions: 1}]->(tea)
"""
TRIPLES = {
    ("alice123", "LIKES", "hiking"),
    ("alice123", "HATES_PLAYING", "badminton"),
    ("alice123", "FRIEND", "john"),
    ("john", "HAS_DOG", "tommy"),
    ("alice123", "LOVES", "sci fi movies"),
}


@pytest.fixture(params=["base_label", "type_label_only"])
def mem0_store(
    request: pytest.FixtureRequest,
    falkordb_server: EmbeddedServer,
    embedder: Embedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[FalkorDBStore]:
    """A graph Mem0 wrote, plus graphmem's own entities of the same user in the same graph:
    with Mem0's `base_label` (`:__Entity__:person`) or without it, its default (`:person`)."""
    # a graph of its own per test: reset() deletes only graphmem's labels, not Mem0's nodes
    store = FalkorDBStore.embedded(falkordb_server, f"mem0_source_{uuid.uuid4().hex[:8]}")
    store.setup(embedder.dimension)
    vector = [0.1] * 8
    written = MEM0_GRAPH if request.param == "base_label" else MEM0_GRAPH.replace("__Entity__:", "")
    store._graph.query(written, {"v": vector})
    own = Memory(store=store, embedder=embedder, data_dir=tmp_path_factory.mktemp("own"))
    own.add_facts([("Zed", "KNOWS", "Yan")], user_id="alice123")
    yield store
    store.reset()
    store.close()


def triples(memory: Memory, user_id: str) -> set[tuple[str, str, str]]:
    return {f.triple for f in memory.get_all(user_id)}


def test_a_mem0_graph_comes_in_as_facts(mem0_store: FalkorDBStore, memory: Memory) -> None:
    result = import_mem0_graph(mem0_store, memory, "alice123")
    assert result.facts_added == 5
    assert result.errors == []
    assert triples(memory, "alice123") == TRIPLES  # neither bob's nor graphmem's own
    assert memory.entity("john", "alice123").entity.type == "Person"
    assert memory.entity("tommy", "alice123").entity.type == "Dog"
    assert memory.entity("sci fi movies", "alice123").entity.type is None  # Mem0's "unknown"
    found = memory.search("What is the name of john's dog?", "alice123", 3)
    assert found.facts[0].fact.triple == ("john", "HAS_DOG", "tommy")


def test_importing_again_adds_nothing_and_another_user_can_receive_it(
    mem0_store: FalkorDBStore, memory: Memory
) -> None:
    import_mem0_graph(mem0_store, memory, "alice123")
    again = import_mem0_graph(mem0_store, memory, "alice123")
    assert (again.facts_added, again.facts_updated) == (0, 5)
    copied = import_mem0_graph(mem0_store, memory, "alice123", into_user="alice")
    assert copied.facts_added == 5
    assert triples(memory, "alice") == TRIPLES


def test_names_can_stay_as_mem0_wrote_them(mem0_store: FalkorDBStore) -> None:
    facts = mem0_facts(mem0_store, "alice123", readable_names=False)
    assert ("alice123", "loves", "sci_fi_movies") in {
        (f.subject, f.predicate, f.object) for f in facts
    }


def test_an_unusable_relationship_is_skipped_or_stops_the_import(
    mem0_store: FalkorDBStore, memory: Memory
) -> None:
    long_name = "x" * 600
    mem0_store._graph.query(
        "MATCH (a:person {name: 'alice123'}) "
        "CREATE (a)-[:knows]->(:person {name: $n, user_id: 'alice123'})",
        {"n": long_name},
    )
    with pytest.raises(LimitExceededError):
        import_mem0_graph(mem0_store, memory, "alice123", on_error="raise")
    assert triples(memory, "alice123") == set()  # nothing written
    result = import_mem0_graph(mem0_store, memory, "alice123")
    assert result.facts_added == 5
    assert len(result.errors) == 1 and "600 characters" in result.errors[0]
