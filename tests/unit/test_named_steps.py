"""A step no question word names (`retrieval.named`): between two paths explaining the
question alike, the one whose every step some word asks for ranks first."""

from __future__ import annotations

import numpy as np
import pytest

from engine.retrieval.named import named_relations, unnamed_steps
from engine.retrieval.predicates import RelationMatch
from engine.retrieval.steps import turns
from engine.retrieval.tuning import RelationParams

# "who acted in the films directed by the director of X": both "directed" and "director"
# name DIRECTED_BY, "acted" names STARRED_ACTORS; WRITTEN_BY is near "directed" but named by
# no word (each word's best relation, within the margin)
WORDS = ["acted", "directed", "director"]
RELATIONS = ["DIRECTED_BY", "STARRED_ACTORS", "WRITTEN_BY"]
SIMS = np.array([[0.39, 0.47, 0.30], [0.84, 0.43, 0.40], [0.80, 0.48, 0.36]])
WEIGHTS = np.array([0.19, 0.47, 0.44])


def _match() -> RelationMatch:
    return RelationMatch(
        RelationParams(),
        WORDS,
        RELATIONS,
        {r: i for i, r in enumerate(RELATIONS)},
        SIMS,
        WEIGHTS,
        None,
    )


def test_a_word_names_the_relations_near_its_best() -> None:
    assert named_relations(SIMS, 0.1).tolist() == [True, True, False]
    assert named_relations(SIMS, 0.5).tolist() == [True, True, True]
    assert named_relations(np.zeros((0, 3)), 0.1).tolist() == [False, False, False]


def test_a_step_back_along_the_one_before_needs_no_word() -> None:
    named = np.array([True, False, False])
    paths = np.array([[0, 0, 1], [0, 2, 1], [1, 1, 1], [2, 0, 0]])
    # the twins' ids: relation 2 is relation 1's twin, so 1 then 2 goes back
    assert unnamed_steps(paths, turns(paths, [0, 1, 2])[0], named).tolist() == [1, 2, 1, 1]
    twins = np.array([[1, 2]])
    assert unnamed_steps(twins, turns(twins, [0, 1, 1])[0], named).tolist() == [1]


def test_the_path_whose_every_step_is_asked_for_breaks_the_tie() -> None:
    """X -> its director -> the director's films -> their actors, against the same path
    through the films the director wrote: the words explain both alike ("directed" and
    "director" by the first step), the step no word names decides, by little."""
    match = _match()
    asked = match.path(["DIRECTED_BY", "DIRECTED_BY", "STARRED_ACTORS"])
    unasked = match.path(["DIRECTED_BY", "WRITTEN_BY", "STARRED_ACTORS"])
    assert asked > unasked
    assert asked - unasked == pytest.approx(RelationParams().unnamed_step_cost)
