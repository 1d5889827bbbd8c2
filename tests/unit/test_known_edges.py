"""The walk's kept nodes answer a read only when every edge it would read is kept."""

from __future__ import annotations

import gc
import threading
from typing import Any, cast

from engine.retrieval.background import BACKGROUND
from engine.retrieval.known_edges import KnownEdges, KnownReads, UserEdges
from engine.store.base import Neighbour
from engine.store.reads import Reads
from engine.store.rows import KeptEdge


def _edge(uid: str, predicate: str, far_mentions: int, current: bool = True) -> KeptEdge:
    return KeptEdge(uid, predicate, True, f"far-{uid}", f"Far {uid}", far_mentions, 1, current)


def _user(nodes: dict[str, list[KeptEdge]]) -> UserEdges:
    user = UserEdges("g1")
    user.nodes = {near: tuple(edges) for near, edges in nodes.items()}
    return user


ANN = [_edge("a1", "LIKES", 9), _edge("a2", "LIKES", 5), _edge("a3", "KNOWS", 7, current=False)]
BOB = [_edge("b1", "LIKES", 3)]


def test_a_typed_read_of_kept_nodes_is_answered_best_first_with_its_degree() -> None:
    found = _user({"ann": ANN, "bob": BOB}).neighbours(
        ["bob", "ann"], ["LIKES"], scan=10, limit=1, total=100, include_invalid=False
    )
    assert found is not None
    assert [(n.near, n.uid, n.degree) for n in found] == [("bob", "b1", 1), ("ann", "a1", 2)]


def test_edges_no_longer_true_are_read_only_when_asked() -> None:
    user = _user({"ann": ANN})
    current = user.neighbours(["ann"], None, scan=10, limit=10, total=100, include_invalid=False)
    every = user.neighbours(["ann"], None, scan=10, limit=10, total=100, include_invalid=True)
    assert current is not None and every is not None
    assert [n.uid for n in current] == ["a1", "a2"]
    assert [n.uid for n in every] == ["a1", "a2", "a3"]


def test_a_read_a_cap_would_cut_goes_to_the_store() -> None:
    user = _user({"ann": ANN, "bob": BOB})
    # the store scans a node's edges in its own order up to `scan`, and all in order up to
    # `total`: which ones it keeps is not known here
    assert user.neighbours(["ann"], ["LIKES"], 1, 10, 100, False) is None
    assert user.neighbours(["ann", "bob"], ["LIKES"], 10, 10, 2, False) is None
    assert user.neighbours(["ann", "bob"], ["LIKES"], 10, 10, 3, False) is not None
    assert user.probe(["ann"], [["LIKES"]], 1, False) is None


def test_a_node_not_kept_or_named_twice_sends_the_read_to_the_store() -> None:
    user = _user({"ann": ANN})
    user.nodes["hub"] = None  # too many edges to keep
    assert user.neighbours(["ann", "bob"], None, 10, 10, 100, False) is None
    assert user.neighbours(["ann", "hub"], None, 10, 10, 100, False) is None
    assert user.neighbours(["ann", "ann"], None, 10, 10, 100, False) is None
    assert user.relation_types(["ann", "bob"], False) is None


def test_a_probe_splits_each_node_by_group() -> None:
    found = _user({"ann": ANN, "bob": BOB}).probe(["ann", "bob"], [["LIKES"], ["KNOWS"]], 3, True)
    assert found is not None
    likes, knows = found
    assert [(n.uid, n.degree) for n in likes] == [("a1", 2), ("a2", 2), ("b1", 1)]
    assert [n.uid for n in knows] == ["a3"]


def test_relation_types_count_each_nodes_current_facts_by_type() -> None:
    user = _user({"ann": ANN, "bob": BOB, "cy": [_edge("c1", "KNOWS", 1, current=False)]})
    assert user.relation_types(["ann", "bob", "cy"], False) == {
        "ann": {"LIKES": 2},
        "bob": {"LIKES": 1},
    }


class _Store:
    dialect = "falkordb"

    def __init__(self, edges: dict[str, list[KeptEdge]], facts: int = 10) -> None:
        self.edges, self.facts = edges, facts
        self.asked: list[list[str]] = []
        self.other: list[tuple[str, str]] = []  # any other statement run, and its user

    def run(self, name: str, params: dict[str, Any], **_: Any) -> list[list[Any]]:
        if name == "count_fact_vectors":
            return [[min(self.facts, params["cap"])]]
        if name != "list_node_edges":
            self.other.append((name, params["user_id"]))
            return []
        self.asked.append(params["nodes"])
        return [[near, [_line(e) for e in self.edges[near]]] for near in params["nodes"]]


def _line(e: KeptEdge) -> str:
    arrow = ">" if e.outgoing else "<"
    head = f"{int(e.current)} {len(e.uid)} {len(e.far)} {e.predicate} {arrow} "
    return f"{head}{e.far_mentions} {e.mentions} {e.uid}{e.far}{e.far_name}"


def test_nodes_are_learned_once_and_dropped_with_their_generation() -> None:
    graph = _Store({"ann": ANN, "loop": [KeptEdge("l1", "IS", True, "loop", "Loop", 1, 1, True)]})
    reads = Reads(cast(Any, graph))
    known = KnownEdges(reads, node_edges=2, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    known._read("alice", user, ["ann", "loop"])
    assert user.nodes["ann"] is None  # three edges: more than two are not kept
    assert user.nodes["loop"] is None  # joined to itself: the store's reads see it twice
    known = KnownEdges(reads, node_edges=10, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    known._read("alice", user, ["ann"])
    assert user.nodes["ann"] == (ANN[0], ANN[2], ANN[1])  # most mentioned far end first
    assert known.at("alice", "g1") is user
    assert known.at("alice", "g2") is not user  # a write since: nothing kept holds
    assert known.at("alice", None) is None


def test_kept_edges_are_left_alone_by_the_garbage_collector() -> None:
    """Named tuples are walked at every full collection: 46k kept edges made each ~57 ms
    instead of ~30. Plain tuples of strings, numbers and booleans are not walked."""
    known = KnownEdges(Reads(cast(Any, _Store({"ann": ANN}))), node_edges=10, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    known._read("alice", user, ["ann"])
    gc.collect()
    gc.collect()  # the node's tuple is let go once its edges were, at a later collection
    kept = user.nodes["ann"]
    assert kept is not None
    assert not any(gc.is_tracked(edge) for edge in kept) and not gc.is_tracked(kept)


def _alices_walk(graph: _Store) -> KnownReads:
    """The reads of a walk for alice, her node `ann` kept."""
    reads = Reads(cast(Any, graph))
    known = KnownEdges(reads, node_edges=10, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    known._read("alice", user, ["ann"])
    return KnownReads(reads, known, "alice", user)


def _likes(walk: KnownReads, user_id: str) -> list[Neighbour]:
    return walk.neighbours(
        user_id, ["ann"], predicates=["LIKES"], scan=10, limit=10, total=100,
        include_invalid=False,
    )  # fmt: skip


def test_reads_of_kept_nodes_do_not_reach_the_store() -> None:
    graph = _Store({"ann": ANN})
    walk = _alices_walk(graph)
    assert [n.uid for n in _likes(walk, "alice")] == ["a1", "a2"]
    assert graph.asked == [["ann"]]


def test_the_users_searched_longest_ago_are_dropped_past_max_edges() -> None:
    graph = _Store({"ann": ANN, "bob": BOB}, facts=1)
    known = KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=3)
    alice, bert = known.at("alice", "g"), known.at("bert", "g")
    assert alice is not None and bert is not None
    known._read("alice", alice, ["ann"])
    known._read("bert", bert, ["bob"])
    assert known.at("bert", "g") is bert
    assert known.at("alice", "g") is not alice
    known._read("bert", bert, ["ann"])  # three more do not fit beside bob's one
    assert bert.nodes == {"bob": (BOB[0],), "ann": None}


def test_the_nodes_of_a_graph_larger_than_what_is_kept_are_not_read() -> None:
    graph = _Store({"ann": ANN}, facts=51)
    known = KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    known._read("alice", user, ["ann"])
    assert user.fits is False and not user.nodes and graph.asked == []
    known.learn("alice", user, ["ann"] * 3)
    assert not user.asked  # nothing sent to be learned


def test_a_node_is_read_whole_once_reads_it_could_not_answer_met_it_again() -> None:
    graph = _Store({"ann": ANN})
    known = KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=100, after=3)
    user = known.at("alice", "g1")
    assert user is not None
    for _ in range(2):
        known.learn("alice", user, ["ann", "ann"])  # named twice in one read: met once
    assert not user.asked
    known.learn("alice", user, ["ann"])
    BACKGROUND.drain()
    assert user.asked == {"ann"} and user.nodes["ann"] is not None


def test_a_read_waiting_its_turn_is_not_sent_once_its_user_has_moved_on() -> None:
    graph = _Store({"ann": ANN})
    known = KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=100)
    user = known.at("alice", "g1")
    assert user is not None
    assert known.at("alice", "g2") is not user  # a write while the read waited
    known._read("alice", user, ["ann"])
    assert graph.asked == [] and "ann" not in user.nodes


class _SlowStore(_Store):
    """Its whole-node reads wait until `opened` is set."""

    def __init__(self, edges: dict[str, list[KeptEdge]]) -> None:
        super().__init__(edges)
        self.opened = threading.Event()

    def run(self, name: str, params: dict[str, Any], **kwargs: Any) -> list[list[Any]]:
        if name == "list_node_edges":
            self.opened.wait(timeout=10)
        return super().run(name, params, **kwargs)


def test_nodes_read_whole_never_hold_the_search_threads() -> None:
    """Learning is background work, read one node set at a time: however many wait, a
    search's own reads start at once (and a busy user's learning cannot hold another user's
    search back)."""
    graph = _SlowStore({name: BOB for name in ["n1", "n2", "n3", "n4", "n5"]})
    known = KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=100, after=1)
    user = known.at("alice", "g1")
    assert user is not None
    for name in ["n1", "n2", "n3", "n4", "n5"]:
        known.learn("alice", user, [name])
    try:
        assert BACKGROUND.submit(lambda: "read").result(timeout=2) == "read"
    finally:
        graph.opened.set()
        BACKGROUND.drain()
    assert all(user.nodes[name] is not None for name in ["n1", "n2", "n3", "n4", "n5"])


def test_kept_nodes_answer_only_their_users_reads() -> None:
    graph = _Store({"ann": ANN})
    walk = _alices_walk(graph)
    # the same node uid asked for bob (a uid bob could only have guessed) reads bob's graph
    assert _likes(walk, "bob") == [] and graph.other == [("expand_typed", "bob")]
    assert walk.probe("bob", ["ann"], [["LIKES"]], size=3, include_invalid=False) == [[]]
    assert walk.relation_types("bob", ["ann"], include_invalid=False) == {}
    assert [name for name, user in graph.other] == [
        "expand_typed",
        "probe_typed",
        "list_relation_types",
    ] and {user for _, user in graph.other} == {"bob"}


class _TypedStore(_Store):
    """Answers typed neighbour reads from its edges, each node's in the order given."""

    def __init__(self, edges: dict[str, list[KeptEdge]]) -> None:
        super().__init__(edges, facts=10_000)  # too large to keep: every read goes to it
        self.typed: list[list[str]] = []

    def run(self, name: str, params: dict[str, Any], **kwargs: Any) -> list[list[Any]]:
        if not name.startswith("expand_typed"):
            return super().run(name, params, **kwargs)
        self.typed.append(params["nodes"])
        rows, room = [], params["total"]
        for near in params["nodes"]:
            edges = [
                e
                for e in self.edges.get(near, [])
                if e.predicate in kwargs["rel_types"] and (e.current or params["include_invalid"])
            ][: min(params["scan"], room)]
            room -= len(edges)
            if edges:
                lines = [_line(e).split(" ", 1)[1] for e in edges[: params["limit"]]]
                rows.append([near, lines, len(edges)])
        return rows


def _walk_of(known: KnownEdges, generation: str = "g1") -> KnownReads:
    user = known.at("alice", generation)
    assert user is not None
    user.fits = False  # nothing read whole: the reads below all go to the store
    return KnownReads(known.reads, known, "alice", user)


def _known(graph: _Store) -> KnownEdges:
    return KnownEdges(Reads(cast(Any, graph)), node_edges=10, max_edges=100)


def _typed(walk: KnownReads, nodes: list[str], types: list[str], **caps: Any) -> list[str]:
    args = {"scan": 10, "limit": 10, "total": 100, "include_invalid": False} | caps
    return [n.uid for n in walk.neighbours("alice", nodes, predicates=types, **args)]


def test_a_node_found_without_a_relation_is_not_asked_for_it_again() -> None:
    graph = _TypedStore({"ann": ANN, "bob": BOB, "genre": []})
    known = _known(graph)
    walk = _walk_of(known)
    assert _typed(walk, ["ann", "bob", "genre"], ["KNOWS"]) == []  # a3 is no longer true
    assert _typed(walk, ["genre", "bob"], ["KNOWS"]) == []
    assert _typed(walk, ["ann", "bob", "genre"], ["LIKES"]) == ["a1", "a2", "b1"]
    assert _typed(walk, ["genre", "ann", "bob"], ["LIKES", "KNOWS"]) == ["a1", "a2", "b1"]
    assert graph.typed == [["ann", "bob", "genre"], ["ann", "bob", "genre"], ["ann", "bob"]]
    walk = _walk_of(known, "g2")  # a write since: nothing learned holds
    assert _typed(walk, ["genre"], ["KNOWS"]) == [] and graph.typed[-1] == ["genre"]


def test_nothing_is_learned_from_a_read_its_caps_cut_short_nor_of_edges_no_longer_true() -> None:
    graph = _TypedStore({"ann": ANN, "bob": BOB})
    walk = _walk_of(_known(graph))
    assert _typed(walk, ["ann", "bob"], ["LIKES"], total=2) == ["a1", "a2"]  # bob not read
    assert _typed(walk, ["ann", "bob"], ["LIKES"]) == ["a1", "a2", "b1"]
    assert _typed(walk, ["ann"], ["KNOWS"]) == []  # its one KNOWS is no longer true
    assert _typed(walk, ["ann"], ["KNOWS"], include_invalid=True) == ["a3"]
    assert len(graph.typed) == 4
