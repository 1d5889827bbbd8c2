"""No walk along relations that are one-offs (`graph_leg.one_offs`), and the per-user counts it
reads (`user_relations.UserRelations`)."""

from __future__ import annotations

import numpy as np

from engine.retrieval.graph_leg import one_offs
from engine.retrieval.predicates import RelationMatch
from engine.retrieval.tuning import ExpansionParams, RelationParams
from engine.retrieval.user_relations import Relations, UserRelations

RELATIONS = ["LIKES_TO_PAINT", "WENT_HIKING_IN", "IS", "WORKS_AT"]
PARAMS = ExpansionParams()


def _match() -> RelationMatch:
    """What "what does she like to paint" names: LIKES_TO_PAINT, WENT_HIKING_IN, IS, WORKS_AT."""
    sims = np.array([[0.9, 0.3, 0.2, 0.1], [0.7, 0.4, 0.3, 0.1]])
    index = {r: i for i, r in enumerate(RELATIONS)}
    return RelationMatch(
        RelationParams(), ["like", "paint"], RELATIONS, index, sims, np.array([0.5, 0.5]), None
    )


def _counted(facts: dict[str, int], total: int = 300, relations: int = 150) -> Relations:
    return Relations(0.0, sorted(facts), facts, total, total / relations)


def test_the_walk_is_skipped_when_the_best_relations_are_one_offs() -> None:
    best = _match().best_relations(PARAMS.one_off_best)
    assert best == ["LIKES_TO_PAINT", "WENT_HIKING_IN", "IS"]
    few = {r: PARAMS.one_off_facts - 1 for r in RELATIONS}
    assert one_offs(_match(), _counted(few), PARAMS)


def test_one_relation_of_the_best_held_by_many_facts_is_walked() -> None:
    facts = {r: 1 for r in RELATIONS} | {"IS": PARAMS.one_off_facts}
    assert not one_offs(_match(), _counted(facts), PARAMS)
    # a relation past the best ones does not count
    facts = {r: 1 for r in RELATIONS} | {"WORKS_AT": 500}
    assert one_offs(_match(), _counted(facts), PARAMS)


def test_a_small_graph_is_walked_whatever_its_relations() -> None:
    facts = {r: 1 for r in RELATIONS}
    assert not one_offs(_match(), _counted(facts, PARAMS.one_off_graph - 1), PARAMS)
    assert one_offs(_match(), _counted(facts, PARAMS.one_off_graph), PARAMS)


def test_a_graph_whose_relations_hold_many_facts_on_average_is_walked() -> None:
    """A knowledge base's rare relations are walked: most of its relations are not rare."""
    facts = {r: 1 for r in RELATIONS}
    many = PARAMS.one_off_graph * PARAMS.one_off_facts
    assert not one_offs(_match(), _counted(facts, many, PARAMS.one_off_graph), PARAMS)
    assert one_offs(_match(), _counted(facts, many, PARAMS.one_off_graph + 1), PARAMS)


def test_a_relation_not_counted_is_not_a_one_off() -> None:
    facts = {"WENT_HIKING_IN": 1, "IS": 1}  # LIKES_TO_PAINT written since the count
    assert not one_offs(_match(), _counted(facts), PARAMS)


class _Reads:
    def __init__(self, facts: dict[str, tuple[int, int]]) -> None:
        self.facts, self.calls = facts, 0  # predicate -> facts, of them said in a message

    def predicates(self, user_id: str) -> dict[str, tuple[int, int]]:
        self.calls += 1
        return dict(self.facts)


def test_counts_fold_twins_and_a_write_makes_its_relations_unknown() -> None:
    reads = _Reads({"PARENTS": (3, 3), "PARENTS_INVERSE": (2, 2), "LIKES": (1, 1)})
    users = UserRelations(reads, refresh_s=3600)  # type: ignore[arg-type]
    relations, read = users.of("u")
    assert read and relations.said == {"PARENTS": 5, "LIKES": 1} and relations.total == 6
    assert relations.facts_per_relation == 3.0
    assert relations.predicates == ["LIKES", "PARENTS", "PARENTS_INVERSE"]
    users.written("u", frozenset({"LIKES", "OWNS"}))
    relations, read = users.of("u")
    assert not read and reads.calls == 1
    assert relations.predicates == ["LIKES", "OWNS", "PARENTS", "PARENTS_INVERSE"]
    assert relations.said == {"PARENTS": 5}
    users.forget("u")
    relations, read = users.of("u")
    assert read and reads.calls == 2 and relations.said == {"PARENTS": 5, "LIKES": 1}


def test_counts_are_read_again_after_the_refresh() -> None:
    reads = _Reads({"LIKES": (1, 1)})
    users = UserRelations(reads, refresh_s=-1.0)  # type: ignore[arg-type]  # always stale
    users.of("u")
    reads.facts["LIKES"] = (7, 7)
    relations, read = users.of("u")
    assert read and relations.said == {"LIKES": 7}


def test_a_relation_with_a_fact_no_message_said_is_not_counted_as_said() -> None:
    reads = _Reads({"PARENTS": (3, 3), "PARENTS_INVERSE": (2, 1), "LIKES": (4, 4)})
    relations, _ = UserRelations(reads, refresh_s=3600).of("u")  # type: ignore[arg-type]
    assert relations.said == {"LIKES": 4}
    assert relations.total == 9 and relations.facts_per_relation == 4.5
