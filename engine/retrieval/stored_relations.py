"""The vectors of each user's relation names, stored with the data, so that a process's first
search of a user embeds only the names no earlier search stored (embedding a chat user's ~200
relation names takes 100-250 ms on two cores; reading them back, a few).

Derived data: used only when the same model (name and dimension) embedded them; anything
else stored there is read as nothing, and the names are embedded as before.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.retrieval.derived import pack, store_later, unpack
from engine.retrieval.scorer import PredicateScorer, Vector
from engine.store.base import GraphStore


class StoredRelations:
    """Loads a user's stored relation vectors into the scorer's cache, and stores them again
    after a search that had to embed names they lacked."""

    def __init__(
        self, store: GraphStore, scorer: PredicateScorer, model: Callable[[], str]
    ) -> None:
        self.store, self.scorer, self._model = store, scorer, model
        self._lacking: set[str] = set()  # users whose stored vectors lack some of their names

    @functools.cached_property
    def model(self) -> str:
        """The model's name and dimension (asked at the first search: the model loads)."""
        return self._model()

    def load(self, user_id: str, predicates: list[str]) -> None:
        """Put the user's stored vectors in the scorer's cache, unless it holds them all
        already; note whether they lack any."""
        wanted = self.scorer.relation_texts(predicates)
        if self.scorer.cached(wanted):
            return
        rows = self.store.run("get_relation_vectors", {"user_id": user_id})
        stored: list[str] = []
        if rows and rows[0][0] == self.model and rows[0][1] is not None:
            stored, vectors = decode(str(rows[0][1])) or ([], np.zeros(0))
            if stored:
                self.scorer.remember(stored, vectors)
        if set(wanted) - set(stored):
            self._lacking.add(user_id)
        else:
            self._lacking.discard(user_id)

    def store_if_lacking(self, user_id: str, predicates: list[str]) -> None:
        """After a search: store the user's relation vectors (in the background) if what was
        stored lacked some; the search has just embedded them. Not while the store builds a
        vector index: the write would wait for the build's batch, and every read after it
        for the write (the first search after a reopen of the 128k-fact store 0.4 -> 4.2 s);
        a later search stores them."""
        if user_id not in self._lacking or self.store.warming():
            return
        self._lacking.discard(user_id)
        texts = self.scorer.relation_texts(predicates)
        if texts and self.scorer.cached(texts):
            params = {"user_id": user_id, "model": self.model}
            params["data"] = encode(texts, self.scorer.vectors(texts))
            write = functools.partial(
                self.store.run, "set_relation_vectors", params, read_only=False
            )
            store_later(write, f"the relation vectors of {user_id!r}")


def encode(texts: list[str], vectors: Vector) -> str:
    body = np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
    return pack([texts, list(vectors.shape)], body)


def decode(data: str) -> tuple[list[str], Vector] | None:
    """The names and vectors `encode` gave `data`; None when it is not what `encode` gives."""
    unpacked = unpack(data)
    if unpacked is None:
        return None
    try:
        texts, shape = unpacked[0]
        body: Any = np.frombuffer(unpacked[1], dtype=np.float32)
        vectors = body.reshape(shape).copy()
    except (ValueError, TypeError):
        return None
    if len(texts) != len(vectors) or not all(isinstance(t, str) for t in texts):
        return None
    return texts, vectors
