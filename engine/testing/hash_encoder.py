"""A stand-in for the embedding model: vectors from hashed words, no model to load.

`HashEmbedder` is a real `Embedder` (its caching and shared passes run as usual) whose model
is a `HashEncoder`: each word and each three-letter piece of a word adds a signed unit to one
of `dimension` slots picked by a stable hash, and the sum is scaled to unit length. Texts that
share words point the same way, so a search still finds the fact that names what the question
names; what it cannot do is find a paraphrase. It is for fast tests and for trying graphmem
without downloading a model.

    from engine.testing import HashEmbedder
    memory = Memory(store=store, embedder=HashEmbedder())
"""

from __future__ import annotations

import hashlib
import re
from functools import cached_property
from typing import Any

import numpy as np

from engine.embedding import Embedder
from engine.embedding.runtime import Encoder

Vector = np.ndarray[Any, Any]
_WORD = re.compile(r"\w+")
_PIECE = 3


def _slot(feature: str, dimension: int) -> tuple[int, float]:
    """The slot `feature` lands in, and its sign (+1 or -1), the same in every process."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return number % dimension, 1.0 if number >> 63 else -1.0


class HashEncoder:
    """The `engine.embedding.runtime.Encoder` a `HashEmbedder` runs: deterministic unit
    vectors of `dimension` floats; a text with no word gets the first unit vector."""

    batch_size = 64
    unk_token: str | None = None

    def __init__(self, dimension: int = 64) -> None:
        if dimension < 2:
            raise ValueError(f"a hash encoder needs at least 2 dimensions, got {dimension}")
        self.dimension = dimension

    def tokenize(self, text: str) -> list[str]:
        """The lowercased words of `text`."""
        return _WORD.findall(text.lower())

    def encode(self, texts: list[str], batch_size: int = 64, workers: int = 1) -> Vector:
        """One unit-length float32 row per text (`batch_size` and `workers` are ignored)."""
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            vectors[row] = self._vector(text)
        return vectors

    def _vector(self, text: str) -> Vector:
        vector = np.zeros(self.dimension, dtype=np.float32)
        for word in self.tokenize(text):
            features = [f"w:{word}"]
            padded = f"<{word}>"
            features += [f"p:{padded[i : i + _PIECE]}" for i in range(len(padded) - _PIECE + 1)]
            for feature in features:
                slot, sign = _slot(feature, self.dimension)
                vector[slot] += sign
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            vector[0] = 1.0
            return vector
        return vector / norm


class HashEmbedder(Embedder):
    """An `Embedder` whose model is a `HashEncoder` of `dimension` floats: nothing loads,
    no process starts, and the same text always gets the same vector."""

    def __init__(self, dimension: int = 64, cache_size: int = 1_000) -> None:
        super().__init__(model_name=f"hash-{dimension}", cache_size=cache_size)
        self._encoder = HashEncoder(dimension)

    @cached_property
    def model(self) -> Encoder:
        """The hash encoder (nothing to load)."""
        return self._encoder


__all__ = ["HashEmbedder", "HashEncoder"]
