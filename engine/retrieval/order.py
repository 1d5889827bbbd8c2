"""The order in which a path must explain the nouns a question chains to its one name.

"The nationality of X's wife's father" chains "wife", then "father", to X
(`terms.chain_order`): a path explains them a hop each, the nearest first, and before the
question's other relation words ("who did X's son marry": the son, then whom he married).
Word scores alone are blind to order, so the wife of X's father, or X's wife alone, would
explain the same words. What a question says beyond its chain ("what does X's daughter do
for a living": `terms.chain_rest`) is one more word, said by a relation after the chain's.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

Vector = np.ndarray[Any, Any]


class ChainOrder:
    """Pairs of a question's words (as rows) that a path must explain in this order."""

    def __init__(
        self,
        words: list[str],
        chain: Sequence[str],
        named: Collection[str],
        kind: str | None,
        rest: str = "",
    ) -> None:
        """`chain`: the nouns of `words` chained to the name, nearest first; `named`: the words
        that clearly name a relation (the only ones ordered); `kind`: the asked kind's word,
        which only a path's last relation explains anyway; `rest` (one of `words`): what the
        question asks beyond the chain, which only a relation after it explains."""
        self._hops = [words.index(w) for w in chain if w in named and w != kind]
        self._rest = words.index(rest) if rest in words else None
        apart = {*chain, kind, rest}
        others = [i for i, w in enumerate(words) if w in named and w not in apart]
        hops = self._hops
        self._apart = [(a, b) for i, a in enumerate(hops) for b in hops[i + 1 :]]  # a hop each
        self._ordered = self._apart + [(a, b) for a in hops for b in others]

    def __bool__(self) -> bool:
        """The question chains a relation word to its name: paths have an order to keep."""
        return bool(self._hops)

    def lost(
        self,
        weight: Vector,
        padded: Vector,
        hops: Vector,
        steps: Vector,
        explained: Vector,
        one: Sequence[int] | None,
    ) -> Vector:
        """What each path (`padded`, of `hops` relations) loses for explaining two ordered
        words in reverse (`steps`: the hop explaining each word; `weight * explained`: what it
        gives), or two chained nouns by one hop: the lesser of the two words' evidence; and a
        chained noun explained by a step going back along the one before it (`one`: each
        relation's id, its twin's the same; None: going back is what the question asks) loses its
        own: "the band of X" names where X's MEMBER_OF leads, not the way back from there
        (BAND_MEMBER), which leads to X's bandmates."""
        lost = np.zeros(steps.shape[1])
        given = weight[:, None] * explained
        rows = np.arange(len(padded))
        if one is not None:
            relation = np.asarray(one)[padded]
            back = np.zeros(padded.shape, dtype=bool)
            back[:, 1:] = relation[:, 1:] == relation[:, :-1]
            for h in self._hops:
                lost += back[rows, steps[h]] * given[h]
        for a, b in self._ordered:
            lost += (steps[a] > steps[b]) * np.minimum(given[a], given[b])
        if self._rest is not None:  # said by a relation after the chain's
            for h in self._hops:
                lost += (steps[h] >= steps[self._rest]) * np.minimum(given[h], given[self._rest])
        if self._apart:
            column = padded[rows[:, None], steps.T].T  # the relation explaining each word
            # a relation twice on the path (out and back) may explain two nouns
            walked = np.arange(padded.shape[1])[None, None, :] < hops[:, None, None]
            once = ((padded[:, :, None] == padded[:, None, :]) & walked).sum(axis=-1) == 1
            for a, b in self._apart:
                shared = (column[a] == column[b]) & once[rows, steps[a]]
                lost += shared * np.minimum(given[a], given[b])
        return lost
