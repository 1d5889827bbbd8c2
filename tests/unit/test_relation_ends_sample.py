"""Which facts of a relation `retrieval.kinds.RelationEnds` samples: not the first the store
returns, which may all be alike (a family's first-written children, none married yet)."""

from __future__ import annotations

from typing import Any

from engine.retrieval.kinds import RelationEnds
from engine.retrieval.tuning import RelationParams


class _Reads:
    """The store's reads a sample makes, answering in a given order."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self.pairs = pairs
        self.asked: list[str] = []

    def relation_ends(self, user_id: str, predicates: list[str], k: int) -> dict[str, Any]:
        return {p: self.pairs[:k] for p in predicates}

    def relation_types_by_end(self, user_id: str, nodes: list[str], most: int) -> dict[str, Any]:
        self.asked += nodes
        return {n: set() for n in nodes}


def _sampled(pairs: list[tuple[str, str]]) -> set[str]:
    reads = _Reads(pairs)
    RelationEnds(reads, RelationParams()).follows("u", ["CHILDREN"], ["CHILDREN"])  # type: ignore[arg-type]
    return set(reads.asked)


def test_a_relation_s_sample_is_the_same_in_any_order_the_store_returns_it() -> None:
    pairs = [(f"parent {i // 3}", f"child {i}") for i in range(150)]
    assert _sampled(pairs) == _sampled(pairs[::-1])


def test_a_relation_s_sample_is_spread_past_its_first_written_facts() -> None:
    """150 facts, each of two entities of its own: the store's first 32 are the first 40
    written (one generation, say); the sample takes later ones too."""
    pairs = [(f"parent {i}", f"child {i}") for i in range(150)]
    children = [int(n.split()[1]) for n in _sampled(pairs) if n.startswith("child ")]
    assert children and max(children) >= 40
