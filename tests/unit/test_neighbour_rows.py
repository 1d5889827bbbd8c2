"""A neighbour read's groups come back in the order of the nodes read, whatever order the
store returns them in."""

from __future__ import annotations

from engine.store.rows import neighbours_from_rows, probed_neighbours


def _line(uid: str, predicate: str, far: str) -> str:
    return f"{len(uid)} {len(far)} {predicate} > 1 1 {uid}{far}{far.upper()}"


def test_expanded_groups_come_back_in_the_order_of_the_nodes() -> None:
    rows = [
        ["c", [_line("f3", "KNOWS", "z")], 1],
        ["a", [_line("f1", "KNOWS", "x"), _line("f2", "LIKES", "y")], 2],
        ["b", [], 0],
    ]
    found = neighbours_from_rows(rows, ["a", "b", "c"])
    assert [(n.near, n.uid, n.degree) for n in found] == [
        ("a", "f1", 2),
        ("a", "f2", 2),
        ("c", "f3", 1),
    ]


def test_probed_groups_come_back_in_the_order_of_the_nodes() -> None:
    rows = [
        ["b", [_line("f3", "LIKES", "z"), _line("f4", "KNOWS", "w")]],
        ["a", [_line("f1", "KNOWS", "x"), _line("f2", "LIKES", "y")]],
    ]
    knows, likes = probed_neighbours(rows, ["a", "b"], [["KNOWS"], ["LIKES"]])
    assert [(n.near, n.uid) for n in knows] == [("a", "f1"), ("b", "f4")]
    assert [(n.near, n.uid) for n in likes] == [("a", "f2"), ("b", "f3")]
