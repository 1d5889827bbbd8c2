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
        rest: str,
    ) -> None:
        """`chain`: the nouns of `words` chained to the name, nearest first; `named`: the words
        that clearly name a relation (the only ones ordered); `kind`: the asked kind's word,
        which only a path's last relation explains anyway; `rest` (one of `words`): what the
        question asks beyond the chain, which only a relation after it explains. Two chained
        nouns take a hop each whether or not they clearly name a relation: "the manager of X's
        club" is X's club, then its manager, though "manager" is far from every relation."""
        nouns = [words.index(w) for w in chain if w in words and w != kind]
        self._hops = hops = [i for i in nouns if words[i] in named]
        self._asks_kind = kind in words
        self._rest = words.index(rest) if rest in words else None
        apart = {*chain, kind, rest}
        others = [i for i, w in enumerate(words) if w in named and w not in apart]
        self._apart = _pairs(nouns)  # a hop each
        self._ordered = _pairs(hops) + [(a, b) for a in hops for b in others]

    def __bool__(self) -> bool:
        """The question chains words to its name: paths have an order to keep."""
        return bool(self._hops or self._apart)

    def before_answer(
        self, on_path: Vector, hops: Vector, explained: Vector, steps: Vector
    ) -> None:
        """With a kind asked apart from the chain, a chained noun is a step on the way to the
        answer, not the answer: only a relation before a path's last explains it ("where does
        the band of X come from": X's band, then where it comes from; not the members of a
        band from X's birthplace; "the profession of X's grandfather": not X's own).
        `on_path`: each word's similarity to each hop's relation; `explained` and `steps`
        (each word's best and which hop) are mended in place."""
        if not self._asks_kind:
            return
        before = np.arange(on_path.shape[-1])[None, :] < (hops - 1)[:, None]
        for h in self._hops:
            on_the_way = np.where(before, on_path[h], 0.0)
            explained[h] = on_the_way.max(axis=-1)
            steps[h] = on_the_way.argmax(axis=-1)

    def lost(
        self,
        weight: Vector,
        padded: Vector,
        on_path: Vector,
        steps: Vector,
        explained: Vector,
        turned: Vector,
    ) -> Vector:
        """What each path (`padded`, of one length) loses for explaining two ordered words in
        reverse (`on_path`: each word's similarity to each hop's relation; `steps`: the hop
        explaining each word; `weight * explained`: what it gives), or two chained nouns by
        one hop: the lesser of the two words' evidence. A path of two steps going out and back
        along the anchor's first relation (`turned`: each path's first two steps do) explains
        the relation's words on the way back as on the way out: there the later word counts at
        the later hop ("the director of X also directed which films": X's director, then the
        films he directed)."""
        lost = np.zeros(steps.shape[1])
        given = weight[:, None] * explained
        rows = np.arange(len(padded))
        # each word, on each path going out and back and ending there, explained on the way out
        out = (turned & (padded.shape[1] == 2)) & (on_path[..., 0] >= on_path.max(axis=-1))
        for a, b in self._ordered:  # b at a's hop or after
            lost += (steps[a] > steps[b]) * _unless_back(given, out, a, b)
        if self._rest is not None:  # said by a relation after the chain's
            for h in self._hops:
                lost += (steps[h] >= steps[self._rest]) * _unless_back(given, out, h, self._rest)
        if self._apart:
            column = padded[rows[:, None], steps.T].T  # the relation explaining each word
            # a relation twice on the path (out and back) may explain two nouns
            once = (padded[:, :, None] == padded[:, None, :]).sum(axis=-1) == 1
            for a, b in self._apart:
                shared = (column[a] == column[b]) & once[rows, steps[a]]
                lost += shared * np.minimum(given[a], given[b])
        return lost


def _unless_back(given: Vector, out: Vector, a: int, b: int) -> Vector:
    """The lesser of words `a`'s and `b`'s evidence on each path, but none on a path going out
    and back (along one relation, or along it and its twin) that explains `a` on the way out
    (`out`, per word and path): the way back is the same relation, and explains `b` as the way
    out does."""
    return np.where(out[a], 0.0, np.minimum(given[a], given[b]))


def _pairs(places: list[int]) -> list[tuple[int, int]]:
    """Each pair of `places`, the earlier first."""
    return [(a, b) for i, a in enumerate(places) for b in places[i + 1 :]]
