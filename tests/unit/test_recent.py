"""The bounded map behind the embedder's vectors and the users' predicate lists."""

from __future__ import annotations

from engine.recent import Recent


def test_the_least_recently_used_go_first() -> None:
    kept: Recent[int] = Recent(2)
    kept.put({"a": 1, "b": 2})
    assert kept.one("a") == 1  # "a" is now the most recently used
    kept.put({"c": 3})
    assert kept.get(["a", "b", "c"]) == {"a": 1, "c": 3}
    kept.pop("a")
    assert kept.one("a") is None and kept.one("c") == 3


def test_a_size_of_zero_keeps_nothing() -> None:
    kept: Recent[int] = Recent(0)
    kept.put({"a": 1})
    assert kept.get(["a"]) == {}
