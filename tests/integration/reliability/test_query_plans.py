"""Statements whose plan decides their cost: `delete_all` reads its user's nodes through the
user_id indexes, never every node of the store (a store of many users paid for all of them);
the twin check reaches the edge between two nodes it found, not every edge of one of them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

from engine import cypher
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads

_graphs = itertools.count()


@pytest.fixture
def store(falkordb_server: EmbeddedServer) -> Iterator[FalkorDBStore]:
    store = FalkorDBStore.embedded(falkordb_server, f"query_plans{next(_graphs)}")
    store.setup(4)
    yield store
    store.close()


def test_a_users_delete_reads_only_that_users_nodes(store: FalkorDBStore) -> None:
    graph = store._graph
    plan = graph.explain(cypher.load("delete_user_nodes", "falkordb"), {"user_id": "u1"})

    steps = str(plan)
    assert "All Node Scan" not in steps
    assert steps.count("Node By Index Scan") == 6


def test_a_users_delete_removes_every_kind_and_nothing_else(store: FalkorDBStore) -> None:
    graph = store._graph
    graph.query(
        "UNWIND ['u1', 'u2'] AS u CREATE (:Entity {user_id: u, uid: u}), (:Fact {user_id: u}),"
        " (:Episode {user_id: u}), (:History {user_id: u}), (:MessageIndex {user_id: u}),"
        " (:RelationVectors {user_id: u})"
    )

    deleted = store.delete_user("u1")

    left = graph.query("MATCH (n) RETURN n.user_id, count(*)").result_set
    assert deleted == 6
    assert left == [["u2", 6]]


def test_the_twin_check_expands_into_the_edge_between_two_found_ends(
    store: FalkorDBStore,
) -> None:
    """Matched in one pattern, FalkorDB found the object and walked every edge it has to reach
    the subject (a chat speaker: thousands, for each sampled fact)."""
    plan = store._graph.explain(
        cypher.load("find_reversed_facts", "falkordb"),
        {"user_id": "u1", "pairs": [["KNOWS", "a", "b"]]},
    )

    steps = str(plan)
    assert "Expand Into" in steps and "Conditional Traverse" not in steps
    assert steps.count("Node By Index Scan") == 2


def test_a_users_counts_read_only_that_users_nodes(store: FalkorDBStore) -> None:
    """`stats(user_id)` (each CLI read's check that the user holds memories, a bound MCP
    connection's list_users) filtered a scan of every user's entities, facts and episodes."""
    asked: list[str] = []
    run = store.run

    def recording(name: str, *args: object, **kwargs: object) -> object:
        asked.append(name)
        return run(name, *args, **kwargs)  # type: ignore[arg-type]

    store.run = recording  # type: ignore[method-assign]
    counts = Reads(store).counts("u1")
    [name] = asked

    plan = str(store._graph.explain(cypher.load(name, "falkordb"), {"user_id": "u1"}))
    assert "Label Scan" not in plan and "All Node Scan" not in plan
    assert plan.count("Node By Index Scan") == 3
    assert counts == {"users": 0, "entities": 0, "facts": 0, "valid_facts": 0, "episodes": 0}


def test_the_facts_between_two_ends_are_read_by_uid_not_joined_against_every_fact(
    store: FalkorDBStore,
) -> None:
    """An offline add reads the facts between each new fact's ends (`facts_between`): the
    :Fact of each relationship found, matched with `uid: r.uid` in the same part, was a hash
    join against every :Fact of the user (a 50,000-fact user: 0.1 s a pair, and a 100-message
    add timed out)."""
    plan = str(
        store._graph.explain(
            cypher.load("list_facts_between", "falkordb"), {"user_id": "u1", "ends": [["a", "b"]]}
        )
    )

    assert "Hash Join" not in plan and "Label Scan" not in plan
    assert plan.count("Node By Index Scan") == 3


def test_an_export_page_reads_only_its_facts_whole(store: FalkorDBStore) -> None:
    """The page's uids are chosen before its facts' edges are read: traversed for every fact
    of the user and then sorted, a 128k-fact user's page took 1.8 s (0.2 s now)."""
    plan = str(
        store._graph.explain(
            cypher.load("list_user_facts", "falkordb"), {"user_id": "u1", "after": "", "limit": 5}
        )
    )
    below_limit = plan[plan.index("Limit") :]
    assert "Traverse" in plan and "Traverse" not in below_limit
    assert "Node By Index Scan | (f:Fact)" in below_limit
