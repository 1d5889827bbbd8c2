"""The paths an outlook scores (`RelationMatch._continuations`): every tail of the best
relations after a prefix, in order, but those that repeat a relation three times in a row or
take a step the graph never met where the step before arrived."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from engine.retrieval.predicates import Ends, RelationMatch
from engine.retrieval.tuning import RelationParams

RELATIONS = ["DIRECTED_BY", "STARRED_ACTORS", "WRITTEN_BY", "RELEASE_YEAR"]
# at each end of a relation (True: its subjects), the relations met there, with their end
FOLLOWS = {
    "DIRECTED_BY": {
        True: [("STARRED_ACTORS", True), ("RELEASE_YEAR", True), ("DIRECTED_BY", True)],
        False: [("DIRECTED_BY", False), ("WRITTEN_BY", False)],
    },
    "STARRED_ACTORS": {False: [("STARRED_ACTORS", False)]},  # its subjects: not known
    "RELEASE_YEAR": {False: [("RELEASE_YEAR", False)]},
}


def _match(params: RelationParams) -> RelationMatch:
    words = ["director", "actors", "year"]
    sims = np.array([[0.9, 0.2, 0.3, 0.1], [0.2, 0.8, 0.1, 0.1], [0.1, 0.1, 0.2, 0.7]])
    return RelationMatch(
        params,
        words,
        RELATIONS,
        {r: i for i, r in enumerate(RELATIONS)},
        sims,
        np.array([0.4, 0.3, 0.3]),
        None,
        ends=Ends(follows=FOLLOWS),
    )


def _walkable(match: RelationMatch, path: list[str], end: bool | None) -> bool:
    """Each step met where the one before arrived (a step leaving its subject arrives at its
    object); a relation's end the graph says nothing of meets anything."""
    ends = {True, False} if end is None else {end}
    for a, b in itertools.pairwise(path):
        arrived = set()
        for at in ends:
            met = FOLLOWS.get(a, {}).get(at)
            arrived |= {True, False} if met is None else {not s for r, s in met if r == b}
        if not arrived:
            return False
        ends = arrived
    return True


def _expected(match: RelationMatch, prefix: list[str], depth: int, end: bool | None) -> list:
    top = [RELATIONS[i] for i in match._top()]
    later = top[: match.params.later_steps]
    tails = [[a] for a in top]
    for _ in range(depth - len(prefix) - 1):
        tails += [[*t, b] for t in tails if len(t) == len(tails[-1]) for b in later]
    walked = max(len(prefix) - 1, 0)
    return [
        [RELATIONS.index(r) for r in path]
        for path in ([*prefix, *t] for t in tails)
        if not any(x == y == z for x, y, z in zip(path, path[1:], path[2:], strict=False))
        and _walkable(match, path[walked:], end)
    ]


@pytest.mark.parametrize("later_steps", [2, 4])
@pytest.mark.parametrize("end", [None, True, False])
@pytest.mark.parametrize(
    ("prefix", "depth"),
    [
        ([], 1),
        ([], 2),
        ([], 3),
        (["DIRECTED_BY"], 3),
        (["DIRECTED_BY", "DIRECTED_BY"], 3),
        (["DIRECTED_BY", "DIRECTED_BY"], 2),  # at least one hop after a prefix
    ],
)
def test_every_walkable_tail_in_order(
    prefix: list[str], depth: int, end: bool | None, later_steps: int
) -> None:
    match = _match(RelationParams(continuations=4, later_steps=later_steps))
    assert match._continuations(tuple(prefix), depth, end) == _expected(match, prefix, depth, end)


def test_a_step_never_met_where_the_last_arrived_is_not_taken() -> None:
    match = _match(RelationParams(continuations=4))
    at_subjects = match._continuations(("DIRECTED_BY",), 2, True)
    assert {RELATIONS[p[1]] for p in at_subjects} == {
        "STARRED_ACTORS",
        "RELEASE_YEAR",
        "DIRECTED_BY",
    }
    at_objects = match._continuations(("DIRECTED_BY",), 2, False)
    assert {RELATIONS[p[1]] for p in at_objects} == {"DIRECTED_BY", "WRITTEN_BY"}
    twice = match._continuations(("DIRECTED_BY", "DIRECTED_BY"), 3, None)
    assert twice and all(RELATIONS[p[2]] != "DIRECTED_BY" for p in twice)  # not thrice in a row
