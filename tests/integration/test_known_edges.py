"""The nodes a walk keeps answer its reads exactly as the store does, and hold for one write
generation of the user's graph, whichever process writes."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from engine import Memory
from engine.embedding import Embedder
from engine.retrieval.background import BACKGROUND
from engine.retrieval.known_edges import KnownEdges, KnownReads
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import GraphStore
from engine.store.reads import Reads

# ties on purpose: many far ends of the same mentions, facts of the same mentions
FACTS = (
    [("Ann", "LIKES", f"Dish {i}") for i in range(12)]
    + [("Ann", "KNOWS", f"Person {i}") for i in range(6)]
    + [(f"Person {i}", "KNOWS", "Ann") for i in range(3)]
    + [("Bob", "LIKES", f"Dish {i}") for i in range(0, 12, 2)]
    + [("Bob", "WORKS_AT", "Acme"), ("Cy", "WORKS_AT", "Acme"), ("Ann", "WORKS_AT", "Acme")]
    + [("Dish 1", "MADE_WITH", "Rice"), ("Dish 2", "MADE_WITH", "Rice")]
)


def _graph(memory: Memory) -> tuple[Reads, dict[str, str]]:
    memory.add_facts(FACTS, user_id="u")
    memory.add_facts([("Ann", "LIKES", "Dish 3"), ("Bob", "WORKS_AT", "Acme")], user_id="u")
    reads = Reads(memory.store)
    names = {name for fact in FACTS for name in (fact[0], fact[2])}
    keys = {name: name.lower() for name in names}
    found = reads.entities_by_keys("u", list(keys.values()))
    uids = {name: found[key].uid for name, key in keys.items()}
    ann_knows = [f for f in memory.get_all(user_id="u") if f.predicate == "KNOWS"][:2]
    at = {"rows": [{"uid": f.uid, "at": 1.0} for f in ann_knows], "user_id": "u"}
    memory.store.run("invalidate_facts", at, read_only=False)
    return reads, uids


def test_kept_nodes_answer_every_read_as_the_store_does(memory: Memory, store: GraphStore) -> None:
    if store.dialect != "falkordb":
        pytest.skip("the walk keeps nodes only on a store that says its generation")
    reads, uids = _graph(memory)
    known = KnownEdges(reads, node_edges=100, max_edges=10_000)
    user = known.at("u", store.generation("u"))
    assert user is not None
    known._read("u", user, list(uids.values()))
    walk = KnownReads(reads, known, "u", user)
    groups = [list(map(uids.get, g)) for g in (["Ann"], ["Ann", "Bob"], ["Acme", "Rice", "Cy"])]
    answered = 0
    for nodes, types, scan, limit, total, invalid in itertools.product(
        groups,
        [None, ["LIKES"], ["KNOWS", "WORKS_AT"], ["MADE_WITH"]],
        [2, 20, 500],
        [1, 3, 50],
        [5, 4000],
        [False, True],
    ):
        args = {"predicates": types, "scan": scan, "limit": limit, "total": total}
        args["include_invalid"] = invalid
        assert walk.neighbours("u", nodes, **args) == reads.neighbours("u", nodes, **args)
        answered += user.neighbours(nodes, types, scan, limit, total, invalid) is not None
    for nodes, size, invalid in itertools.product(groups, [1, 3, 20], [False, True]):
        probe = [["LIKES"], ["KNOWS"], ["WORKS_AT", "MADE_WITH"]]
        assert walk.probe("u", nodes, probe, size=size, include_invalid=invalid) == reads.probe(
            "u", nodes, probe, size=size, include_invalid=invalid
        )
        kinds = walk.relation_types("u", nodes, include_invalid=invalid)
        assert kinds == reads.relation_types("u", nodes, include_invalid=invalid)
    assert answered > 100  # most of them from what was kept, not the store


def test_a_write_by_another_memory_is_seen_by_the_next_walk(
    memory: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    if store.dialect != "falkordb":
        pytest.skip("the walk keeps nodes only on a store that says its generation")
    _, uids = _graph(memory)
    leg = memory.retriever.graph_leg
    for _ in range(
        ExpansionParams().kept_after
    ):  # a node met again by walks is learned, in the background
        memory.search("What does Ann like?", user_id="u", mode="expansion")
        BACKGROUND.drain()
    kept = leg.known.at("u", store.generation("u"))
    assert kept is not None and kept.nodes.get(uids["Ann"])
    other = Memory(store=store, embedder=embedder, data_dir=tmp_path / "other")
    other.add_facts([("Ann", "LIKES", "Quince tart")], user_id="u")
    found = memory.search("What does Ann like?", user_id="u", mode="expansion", limit=50)
    assert "Quince tart" in {f.fact.object for f in found.facts}
    assert leg.known.at("u", store.generation("u")) is not kept
