"""The order a relation path explains a question's chained words in (`retrieval.order`)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.retrieval.predicates import Ends, RelationMatch
from engine.retrieval.steps import turns
from engine.retrieval.tuning import RelationParams

# "the director of X also directed which films": "director" chained to X, what it asks beyond
# the chain ("also directed which films") said by a relation after the chain's
WORDS = ["director", "also directed which films"]
WEIGHTS = np.array([0.43, 0.27])
RELATIONS = ["DIRECTED_BY", "STARRED_ACTORS"]
SIMS = np.array([[0.8, 0.2], [0.6, 0.3]])  # each word (row) to each relation


def _match() -> RelationMatch:
    of = {r: i for i, r in enumerate(RELATIONS)}
    return RelationMatch(
        RelationParams(),
        WORDS,
        RELATIONS,
        of,
        SIMS,
        WEIGHTS,
        None,
        chain=["director"],
        rest=WORDS[1],
    )


def test_out_and_back_along_one_relation_explains_the_rest_at_its_last_hop() -> None:
    """X's director, then his films: the way back explains "directed" as the way out does,
    after the chain's hop; the director alone explains both words at one hop, and loses the
    lesser (the rest)."""
    match = _match()
    director, rest = WEIGHTS * SIMS[:, 0]
    one = match.path(["DIRECTED_BY"])
    back = match.path(["DIRECTED_BY", "DIRECTED_BY"])
    assert one == pytest.approx(director + rest - min(director, rest))
    assert back == pytest.approx(director + rest - RelationParams().extra_hop_cost)
    assert back > one


def test_a_path_going_on_elsewhere_still_explains_the_rest_out_of_order() -> None:
    """Only the way back at a path's end explains the rest at either hop: a path that goes
    back and then on (out to the director, back to a film, on to its actors) explains the
    rest by the first hop, as the chain word, and loses it."""
    match = _match()
    director, rest = WEIGHTS * SIMS[:, 0]
    on = match.path(["DIRECTED_BY", "DIRECTED_BY", "STARRED_ACTORS"])
    params = RelationParams()
    cost = 2 * params.extra_hop_cost + params.unnamed_step_cost  # no word names STARRED_ACTORS
    assert on == pytest.approx(director + rest - min(director, rest) - cost)


def test_out_along_a_relation_and_back_along_its_twin_explains_the_rest_too() -> None:
    """ "The employer of X also employs whom": out along EMPLOYER, back along EMPLOYEE, its
    twin (stored the other way round), whose name the rest's words are a little further
    from: the way back is the same relation all the same."""
    words = ["employer", "also employs whom"]
    weights = np.array([0.55, 0.26])
    sims = np.array([[1.0, 0.77], [0.544, 0.541]])  # EMPLOYER, EMPLOYEE
    relations = ["EMPLOYER", "EMPLOYEE"]
    match = RelationMatch(
        RelationParams(),
        words,
        relations,
        {r: i for i, r in enumerate(relations)},
        sims,
        weights,
        None,
        chain=["employer"],
        rest=words[1],
        ends=Ends(twins={"EMPLOYER": "EMPLOYEE", "EMPLOYEE": "EMPLOYER"}),
    )
    employer, rest = weights * sims[:, 0]
    assert match.path(["EMPLOYER"]) == pytest.approx(employer + rest - min(employer, rest))
    back = match.path(["EMPLOYER", "EMPLOYEE"])
    assert back == pytest.approx(employer + rest - RelationParams().extra_hop_cost)


def test_a_path_turns_at_its_first_steps_along_one_relation_or_its_twin() -> None:
    """PARENTS (0) and CHILDREN (1) are twins, SPOUSE (2) has none: out along a relation and
    back along its twin turns, as does one with no twin twice; one with a twin named twice
    goes on (X's parents' parents)."""
    one = [0, 0, 2]
    paths = np.array([[0, 1], [1, 0], [2, 2], [0, 0], [0, 2], [2, 0]])
    assert turns(paths, one)[1].tolist() == [True, True, True, False, False, False]
    assert turns(np.array([[0], [2]]), one)[1].tolist() == [False, False]


def test_two_chained_nouns_take_a_hop_each_though_one_names_no_relation() -> None:
    """ "Who is the manager of X's club": X's club, then its manager. "manager" is far from
    every relation (0.46 to COACHED_BY, below the similarity that makes a word a relation's
    name), yet the club's relation alone, explaining both a little, loses the lesser: the
    club's coach comes before the club."""
    words, relations = ["manager", "club"], ["PLAYS_IN_CLUB", "COACHED_BY"]
    sims, weights = np.array([[0.371, 0.464], [0.764, 0.256]]), np.array([0.154, 0.422])
    match = RelationMatch(
        RelationParams(), words, relations, {r: i for i, r in enumerate(relations)}, sims,
        weights, None, chain=["club", "manager"],
    )  # fmt: skip
    assert "manager" not in match.relation_words()
    club, manager = weights[1] * sims[1, 0], weights[0] * sims[0, 1]
    one = match.path(["PLAYS_IN_CLUB"])
    two = match.path(["PLAYS_IN_CLUB", "COACHED_BY"])
    assert one == pytest.approx(club)
    assert two == pytest.approx(club + manager - RelationParams().extra_hop_cost)
    assert two > one
