"""A read started before its turn returns what it would have read at its turn."""

from __future__ import annotations

from typing import Any, cast

from engine.retrieval.edge_reads import EdgeRead, EdgeReads
from engine.store.base import Neighbour
from engine.store.reads import Reads


class _Graph:
    """`Reads.neighbours` over a fixed set of edges per node, recording each call's total."""

    def __init__(self, degree: dict[str, int]) -> None:
        self.degree = degree
        self.totals: list[int] = []

    def neighbours(self, user_id: str, nodes: list[str], **kw: Any) -> list[Neighbour]:
        self.totals.append(kw["total"])
        found: list[Neighbour] = []
        left = kw["total"]
        for node in nodes:
            read = min(self.degree[node], kw["scan"], left)
            left -= read
            found += [
                Neighbour(node, f"{node}{i}", "KNOWS", True, f"m{i}", "m", 1, 1, read)
                for i in range(min(read, kw["limit"]))
            ]
        return found


def _reads(graph: _Graph, max_edges: int) -> EdgeReads:
    return EdgeReads(cast(Reads, graph), "u", max_edges, include_invalid=False)


def _b_started_before_a(
    graph: _Graph, max_edges: int, types: tuple[str, ...] | None, b_caps: int
) -> tuple[EdgeReads, list[Neighbour]]:
    """Node b's read sent first, a's read at its turn, then b's taken at its turn."""
    walk = _reads(graph, max_edges)
    read = EdgeRead(("b",), types, b_caps, b_caps)
    started = walk.start(read)
    walk.read(EdgeRead(("a",), types, 10, 10))
    return walk, walk.take(started, read)


def test_a_read_that_fits_its_later_room_is_not_read_again() -> None:
    graph = _Graph({"a": 5, "b": 3})
    walk, found = _b_started_before_a(graph, 20, ("KNOWS",), 10)
    assert (len(found), walk.rows, walk.count, graph.totals) == (3, 8, 2, [20, 20])


def test_a_read_past_its_later_room_is_read_again_with_it() -> None:
    graph = _Graph({"a": 5, "b": 8})
    walk, found = _b_started_before_a(graph, 10, ("KNOWS",), 10)
    assert (len(found), walk.rows, walk.count, graph.totals) == (5, 10, 2, [10, 10, 5])


def test_a_read_past_its_later_room_keeps_the_nodes_that_fit_and_reads_the_rest() -> None:
    graph = _Graph({"a": 5, "b": 3, "c": 8, "d": 4})
    walk = _reads(graph, 14)
    read = EdgeRead(("b", "c", "d"), ("KNOWS",), 5, 5)
    started = walk.start(read)  # room 14: b 3, c 5, d 4
    walk.read(EdgeRead(("a",), ("KNOWS",), 10, 10))
    found = walk.take(started, read)  # room 9: b 3, c 5, d 1
    assert graph.totals == [14, 14, 1]  # d read again in the one edge b and c leave
    alone = _Graph(graph.degree).neighbours("u", ["b", "c", "d"], scan=5, limit=5, total=9)
    assert found == alone
    assert (len(found), walk.rows, walk.count) == (9, 14, 2)


def test_a_read_of_any_type_is_kept_only_when_its_caps_fit() -> None:
    graph = _Graph({"a": 5, "b": 2})
    _b_started_before_a(graph, 12, None, 4)
    assert graph.totals == [12, 12]  # 4 edges at most in the 7 left: kept
