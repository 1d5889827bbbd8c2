"""How well predicates, alone or chained over two hops, match a query's wording."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.embedding import Embedder
from engine.normalize import predicate_words


class PredicateScorer:
    """Cosine similarity of a query to predicate phrases ("directed by") and to two-hop
    chains ("starred actors, directed by"). Phrase vectors are cached: a graph has few
    distinct predicates, so after warm-up this costs a matrix product per query."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._cache: dict[str, np.ndarray[Any, Any]] = {}

    def _vectors(self, phrases: list[str]) -> np.ndarray[Any, Any]:
        missing = [p for p in dict.fromkeys(phrases) if p not in self._cache]
        if missing:
            for phrase, vector in zip(missing, self._embedder.encode(missing), strict=True):
                self._cache[phrase] = vector
        return np.stack([self._cache[p] for p in phrases])

    def single(self, query: np.ndarray[Any, Any], predicates: list[str]) -> dict[str, float]:
        if not predicates:
            return {}
        sims = self._vectors([predicate_words(p) for p in predicates]) @ query
        return {p: float(s) for p, s in zip(predicates, sims, strict=True)}

    def chains(
        self, query: np.ndarray[Any, Any], pairs: list[tuple[str, str]]
    ) -> dict[tuple[str, str], float]:
        if not pairs:
            return {}
        phrases = [f"{predicate_words(a)}, {predicate_words(b)}" for a, b in pairs]
        sims = self._vectors(phrases) @ query
        return {pair: float(s) for pair, s in zip(pairs, sims, strict=True)}
