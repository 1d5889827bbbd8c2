"""How well a path of predicates explains the words of a question.

A question names its relations with single words ("directed", "starred", "live", "sister"),
mixed with generic ones ("films", "person"). Each question word is matched against each
predicate phrase ("directed by") by embedding similarity; a word counts with its specificity
(how much better its best predicate matches than the average one), so generic words weigh
little. A path (one edge, or a two-hop chain) scores the question words it explains, each by
the best predicate on the path, minus a small cost per extra hop: a chain wins only when its
second predicate explains words the first one cannot. A question asking for siblings ("who
co-wrote with X", "films with the same director as Y") wants the chain that goes out and back
along one predicate: with such a cue, that chain beats the single edge it repeats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.embedding import Embedder
from engine.normalize import predicate_words

EXTRA_HOP_COST = 0.05
SIBLING_BONUS = 2 * EXTRA_HOP_COST
_CHAIN_CANDIDATES = 50  # predicates considered as chain starts, the best single ones
_MAX_CACHED = 50_000


class PredicateScorer:
    """Caches word and predicate-phrase vectors; scoring is then a small matrix product."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._cache: dict[str, np.ndarray[Any, Any]] = {}

    def encode_query(self, query: str, words: Sequence[str]) -> np.ndarray[Any, Any]:
        """The query's vector; its words not yet cached are encoded in the same batch."""
        missing = [w for w in dict.fromkeys(words) if w not in self._cache]
        vectors = self._embedder.encode([query, *missing])
        self._remember(missing, vectors[1:])
        query_vector: np.ndarray[Any, Any] = vectors[0]
        return query_vector

    def _remember(self, texts: list[str], vectors: np.ndarray[Any, Any]) -> None:
        if len(self._cache) + len(texts) > _MAX_CACHED:
            self._cache.clear()
        self._cache.update(zip(texts, vectors, strict=True))

    def _vectors(self, texts: list[str]) -> np.ndarray[Any, Any]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            self._remember(missing, self._embedder.encode(missing))
        return np.stack([self._cache[t] for t in texts])

    def word_match(
        self, words: Sequence[str], predicates: Sequence[str], siblings: bool = False
    ) -> WordMatch:
        """Similarities of each question word to each predicate, with word specificities;
        `siblings`: the question asks for what shares a neighbour with the anchor."""
        if not words or not predicates:
            empty = np.zeros((0, len(predicates)))
            return WordMatch([], list(predicates), empty, np.zeros(0), siblings)
        phrases = self._vectors([predicate_words(p) for p in predicates])
        sims = self._vectors(list(words)) @ phrases.T
        specificity = np.clip(sims.max(axis=1) - sims.mean(axis=1), 0.0, None)
        return WordMatch(list(words), list(predicates), sims, specificity, siblings)


class WordMatch:
    """Scores predicates and paths of predicates against the question's words."""

    def __init__(
        self,
        words: list[str],
        predicates: list[str],
        sims: np.ndarray[Any, Any],
        specificity: np.ndarray[Any, Any],
        siblings: bool = False,
    ) -> None:
        self._words = words
        self._index = {p: i for i, p in enumerate(predicates)}
        self._sims = sims
        self._weight = specificity
        self.siblings = siblings
        self._single: dict[str, float] | None = None

    def relation_words(self, min_sim: float = 0.5, min_specificity: float = 0.15) -> set[str]:
        """Words that clearly name a relation ("directed", "actors"), not a thing."""
        if not len(self._weight):
            return set()
        best = self._sims.max(axis=1)
        return {
            w
            for w, b, spec in zip(self._words, best, self._weight, strict=True)
            if b >= min_sim and spec >= min_specificity
        }

    def single(self) -> dict[str, float]:
        """Each predicate's score as a one-edge path (computed once; callers do not mutate it)."""
        if self._single is None:
            n = len(self._index)
            scores = self._weight @ self._sims if len(self._weight) else np.zeros(n)
            self._single = {p: float(scores[i]) for p, i in self._index.items()}
        return self._single

    def path(self, predicates: Sequence[str], out_and_back: bool = False) -> float:
        """`out_and_back`: a two-hop chain along one predicate, away from the anchor and back
        (anchor -> film <- other anchor-like node)."""
        bonus = SIBLING_BONUS if out_and_back and self.siblings else 0.0
        cost = EXTRA_HOP_COST * (len(predicates) - 1) - bonus
        columns = [self._index[p] for p in predicates if p in self._index]
        if not columns or not len(self._weight):
            return -cost
        explained = self._sims[:, columns].max(axis=1)
        return float(self._weight @ explained) - cost

    def chain_starts(self) -> set[str]:
        """First predicates of the two-hop chains that explain the question better than any
        single edge does ("when were the films acted by X released": acted, then released)."""
        single = self.single()
        if not len(self._weight) or not single:
            return set()
        best = max(single.values())
        top = sorted(single, key=lambda p: -single[p])[:_CHAIN_CANDIDATES]
        sims = self._sims[:, [self._index[p] for p in top]]
        pairs = np.einsum("w,wab->ab", self._weight, np.maximum(sims[:, :, None], sims[:, None]))
        chains = pairs - EXTRA_HOP_COST
        if self.siblings:
            chains[np.diag_indices(len(top))] += SIBLING_BONUS
        return {p for p, score in zip(top, chains.max(axis=1), strict=True) if score > best}
