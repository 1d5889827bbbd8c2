"""What the steps of a path of relations do besides explaining words: repeat one relation
three times in a row, or go back along the twin of the step before."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

Vector = np.ndarray[Any, Any]


def no_triple(path: Sequence[int]) -> bool:
    """Out and back is one repeat; a relation three times in a row asks for nothing new."""
    return not any(path[i] == path[i + 1] == path[i + 2] for i in range(len(path) - 2))


def thrice(path: Sequence[int], step: int, one: Sequence[int]) -> bool:
    """Whether `step` after `path` (relation indexes; `one`: each one's id, the same for
    twins) makes the third of one relation in a row."""
    return len(path) > 1 and one[path[-2]] == one[path[-1]] == one[step]


def back_along_twins(padded: Vector, mutual: Sequence[int]) -> Vector:
    """For each step of each path (`padded`: rows of relation indexes), whether it goes back
    along the twin of the step before (`mutual`: each relation's id, the same for twins each
    the other's only): MEMBER_OF, then BAND_MEMBER. Such a step reads the same facts again
    under another name."""
    relation = np.asarray(mutual)[padded]
    back = np.zeros(padded.shape, dtype=bool)
    back[:, 1:] = (relation[:, 1:] == relation[:, :-1]) & (padded[:, 1:] != padded[:, :-1])
    return back


def turns(padded: Vector, one: Sequence[int]) -> tuple[Vector, Vector]:
    """For each step of each path (`padded`: rows of relation indexes), whether it goes back
    along the step before (`one`: each relation's id, the same for twins): the same relation,
    or its twin; a relation with a twin named twice goes on (X's parents' parents). The first
    step never does. And for each path, whether its second step does: the anchor's first
    relation out and back is what a sibling cue asks for ("who co-wrote films with X": X ->
    film <- co-writer); a repeat further on is not (the co-stars of X's film), nor is going on
    along the same relation (Alice's other likes). Vectorised `RelationMatch._back`."""
    ids = np.asarray(one)
    back = np.zeros(padded.shape, dtype=bool)
    before, step = padded[:, :-1], padded[:, 1:]
    alone = np.bincount(ids, minlength=len(ids))[ids[before]] == 1
    back[:, 1:] = (ids[before] == ids[step]) & ((before != step) | alone)
    first: Vector = back[:, 1] if padded.shape[1] > 1 else back[:, 0]  # a first step: no turn
    return back, first


def unless_back(values: Vector, back: Vector | None, fill: float) -> Vector:
    """`values` (per step of each path, in the last two axes) with `fill` where a step goes
    back (`back`; None: none does)."""
    return values if back is None else np.where(back, fill, values)
