"""The vectors of each user's relation names, stored with the data, so that a process's first
search of a user embeds only the names no earlier search stored (embedding a chat user's ~200
relation names takes 100-250 ms on two cores; reading them back, a few).

Derived data: used only when the same model (name and dimension) embedded them; anything
else stored there is read as nothing, and the names are embedded as before.
"""

from __future__ import annotations

import base64
import json
import logging
import struct
from typing import Any

import numpy as np

from engine.errors import GraphmemError, StoreUnavailableError
from engine.retrieval.background import BACKGROUND
from engine.retrieval.scorer import PredicateScorer, Vector
from engine.store.base import GraphStore

log = logging.getLogger(__name__)
_HEAD = struct.Struct("<Q")  # the length of the JSON list of names that opens the data


class StoredRelations:
    """Loads a user's stored relation vectors into the scorer's cache, and stores them again
    after a search that had to embed names they lacked."""

    def __init__(self, store: GraphStore, scorer: PredicateScorer, model: str) -> None:
        self.store, self.scorer, self.model = store, scorer, model
        self._lacking: set[str] = set()  # users whose stored vectors lack some of their names

    def load(self, user_id: str, predicates: list[str]) -> None:
        """Put the user's stored vectors in the scorer's cache, unless it holds them all
        already; note whether they lack any."""
        if self.scorer.cached(self.scorer.relation_texts(predicates)):
            return
        rows = self.store.run("get_relation_vectors", {"user_id": user_id})
        texts: list[str] = []
        if rows and rows[0][0] == self.model and rows[0][1] is not None:
            texts, vectors = decode(str(rows[0][1])) or ([], np.zeros(0))
            if texts:
                self.scorer.remember(texts, vectors)
        if set(self.scorer.relation_texts(predicates)) - set(texts):
            self._lacking.add(user_id)
        else:
            self._lacking.discard(user_id)

    def store_if_lacking(self, user_id: str, predicates: list[str]) -> None:
        """After a search: store the user's relation vectors (in the background) if what was
        stored lacked some; the search has just embedded them."""
        if user_id not in self._lacking:
            return
        self._lacking.discard(user_id)
        texts = self.scorer.relation_texts(predicates)
        if texts and self.scorer.cached(texts):
            data = encode(texts, self.scorer.vectors(texts))
            BACKGROUND.submit(self._write, user_id, data)

    def _write(self, user_id: str, data: str) -> None:
        params = {"user_id": user_id, "model": self.model, "data": data}
        try:
            self.store.run("set_relation_vectors", params, read_only=False)
        except StoreUnavailableError:
            pass  # closed or stopped first: the next process embeds them again
        except GraphmemError as exc:
            log.warning("could not store the relation vectors of %r: %s", user_id, exc)


def encode(texts: list[str], vectors: Vector) -> str:
    head = json.dumps([texts, list(vectors.shape)]).encode()
    body = np.ascontiguousarray(vectors, dtype=np.float32).tobytes()
    return base64.b64encode(_HEAD.pack(len(head)) + head + body).decode()


def decode(data: str) -> tuple[list[str], Vector] | None:
    """The names and vectors `encode` gave `data`; None when it is not what `encode` gives."""
    try:
        raw = base64.b64decode(data, validate=True)
        (size,) = _HEAD.unpack_from(raw)
        texts, shape = json.loads(raw[_HEAD.size : _HEAD.size + size])
        body: Any = np.frombuffer(raw[_HEAD.size + size :], dtype=np.float32)
        vectors = body.reshape(shape).copy()
    except (ValueError, TypeError, struct.error):
        return None
    if len(texts) != len(vectors) or not all(isinstance(t, str) for t in texts):
        return None
    return texts, vectors
