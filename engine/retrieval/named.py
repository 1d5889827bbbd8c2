"""Which relations a question's words name, and the steps of a path that none names: between
two paths explaining the question alike, the one whose every step some word asks for."""

from __future__ import annotations

from typing import Any

import numpy as np

Vector = np.ndarray[Any, Any]


def named_relations(sims: Vector, margin: float) -> Vector:
    """Per relation, whether some question word names it: the word's similarity to it
    (`sims`: a row per word, a column per relation) within `margin` of the word's best."""
    if not len(sims):
        return np.zeros(sims.shape[1], dtype=bool)
    named: Vector = (sims >= sims.max(axis=1, keepdims=True) - margin).any(axis=0)
    return named


def unnamed_steps(padded: Vector, back: Vector, named: Vector) -> Vector:
    """For each path (`padded`: rows of relation indexes), how many of its steps take a
    relation no question word names (`named`, per relation); a step back along the one before
    (`back`: `steps.turns`) needs no word of its own ("the films of X's director": one word,
    the step to the director and the step back to the films)."""
    count: Vector = (~back & ~named[padded]).sum(axis=1)
    return count
