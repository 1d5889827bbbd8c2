"""The episode leg: the user's own messages, found by their words and their meaning.

Words: BM25 over an in-process index of the user's messages (`LexicalIndex`), built from the
store on the user's first search, kept current by this process's writes (`note`) and checked
against the store's count every `refresh_s` for writes from other processes. Meaning: the
store's vector index over episode embeddings (the query vector the other legs use). A
message's score is both, plus a share of its session neighbours' (an answer follows its
question).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from engine.ranking import EpisodeParams
from engine.retrieval.lexical import LexicalIndex, stems
from engine.retrieval.query import Query
from engine.store.base import EpisodeRow, EpisodeText
from engine.store.reads import Reads

_PAGE = 5000


@dataclass(frozen=True, slots=True)
class EpisodeHit:
    uid: str
    score: float
    episode: EpisodeText


class EpisodeLeg:
    """Ranks one user's messages for a query; indexes are kept per user (LRU)."""

    def __init__(self, reads: Reads, params: EpisodeParams) -> None:
        self.reads = reads
        self.params = params
        self._indexes: OrderedDict[str, tuple[float, LexicalIndex]] = OrderedDict()
        self._lock = threading.Lock()

    def note(self, user_id: str, rows: Iterable[EpisodeRow]) -> None:
        """Called after writes: index the written messages, if the user's index is loaded."""
        with self._lock:
            cached = self._indexes.get(user_id)
            if cached is not None:
                cached[1].add([_text(row) for row in rows])

    def forget(self, user_id: str | None = None) -> None:
        """Called after deletes: drop the user's index (every index when `user_id` is None)."""
        with self._lock:
            if user_id is None:
                self._indexes.clear()
            else:
                self._indexes.pop(user_id, None)

    def index(self, user_id: str) -> LexicalIndex:
        """The user's message index, loaded or refreshed from the store when needed."""
        with self._lock:
            cached = self._indexes.get(user_id)
            now = time.monotonic()
            if cached is not None and now - cached[0] < self.params.refresh_s:
                self._indexes.move_to_end(user_id)
                return cached[1]
            if cached is None or self.reads.count_episodes(user_id) != len(cached[1]):
                cached = (now, self._load(user_id))
            else:
                cached = (now, cached[1])
            self._indexes[user_id] = cached
            self._indexes.move_to_end(user_id)
            while len(self._indexes) > self.params.max_users:
                self._indexes.popitem(last=False)
            return cached[1]

    def _load(self, user_id: str) -> LexicalIndex:
        index = LexicalIndex()
        skip = 0
        while True:
            page = self.reads.episode_texts(user_id, skip, _PAGE)
            index.add(page)
            skip += len(page)
            if len(page) < _PAGE:
                return index

    def rank(
        self,
        index: LexicalIndex,
        query: Query,
        nearest: list[tuple[str, float]],
        limit: int,
        since: float | None = None,
        until: float | None = None,
    ) -> list[EpisodeHit]:
        """The best `limit` messages: BM25 (scaled to the best match) plus `dense_weight`
        times the vector similarity (scaled from the last offered neighbour to the first),
        plus a share of the session neighbours' scores; only messages in [since, until]."""
        if not len(index):
            return []
        scores = _scaled(index.scores(stems(query.words), self.params.bm25))
        scores += self.params.dense_weight * _dense(index, nearest)
        scores = index.with_neighbours(scores, self.params.neighbour_share)
        if since is not None or until is not None:
            scores[~_in_window(index, since, until)] = 0.0
        top = _top(scores, limit)
        return [EpisodeHit(index.docs[d].uid, float(scores[d]), index.docs[d]) for d in top]


def _text(row: EpisodeRow) -> EpisodeText:
    return EpisodeText(
        row.uid, row.session_id, row.speaker, row.role, row.content, row.ts, row.source
    )


def _scaled(scores: np.ndarray) -> np.ndarray:
    best = float(scores.max()) if len(scores) else 0.0
    return scores / best if best > 0 else scores


def _dense(index: LexicalIndex, nearest: list[tuple[str, float]]) -> np.ndarray:
    out = np.zeros(len(index), dtype=np.float32)
    known = [(index.position[u], s) for u, s in nearest if u in index.position]
    if not known:
        return out
    sims = np.asarray([s for _, s in known], dtype=np.float32)
    top, floor = float(sims.max()), float(sims.min())
    out[[d for d, _ in known]] = (sims - floor) / (top - floor) if top > floor else 1.0
    return out


def _in_window(index: LexicalIndex, since: float | None, until: float | None) -> np.ndarray:
    ts = np.asarray([d.ts for d in index.docs], dtype=np.float64)
    keep = np.ones(len(ts), dtype=bool)
    if since is not None:
        keep &= ts >= since
    if until is not None:
        keep &= ts <= until
    return keep


def _top(scores: np.ndarray, limit: int) -> list[int]:
    candidates = np.flatnonzero(scores > 0)
    if len(candidates) > limit:
        candidates = candidates[np.argpartition(-scores[candidates], limit - 1)[:limit]]
    return sorted(candidates.tolist(), key=lambda d: -scores[d])
