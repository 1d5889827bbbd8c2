"""The episode leg: the user's own messages, found by their words and their meaning.

Words: BM25 over an in-process index of the user's messages (`LexicalIndex`), loaded on the
user's first search (the index an earlier search stored, `stored_index`, in parts, with the
messages written since; else built from every message, and then stored), kept current by this
process's writes (`note`) and checked against the store's count every `refresh_s` for writes
from other processes, aside: no search waits for the count or the load it may lead to.
Meaning: the store's vector index over episode embeddings (the query vector the other legs
use). A message's score is both, plus a share of its session neighbours' (an answer follows
its question).
"""

from __future__ import annotations

import functools
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future
from dataclasses import dataclass, field

import numpy as np

from engine.retrieval.background import BACKGROUND
from engine.retrieval.derived import store_later
from engine.retrieval.lexical import TERMS_VERSION, LexicalIndex, stems
from engine.retrieval.query import Query
from engine.retrieval.stored_index import FORMAT, decode_into, finish, parts, snapshot
from engine.retrieval.tuning import (
    LOAD_BLOCK,
    LOAD_ONCE,
    LOAD_READ,
    PART_MESSAGES,
    STORE_AFTER,
    STORED_MAX_CHARS,
    EpisodeParams,
)
from engine.store.base import EpisodeRow, EpisodeText
from engine.store.message_index import MessageIndexes
from engine.store.reads import Reads
from engine.store.uids import ALL_UIDS, uid_ranges

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EpisodeHit:
    uid: str
    score: float


@dataclass(slots=True)
class Started:
    """The leg's reads: the user's message index, then the messages nearest the query."""

    index: Future[LexicalIndex]
    nearest: Future[list[tuple[str, float]]] | None = None


@dataclass(slots=True)
class Found:
    """What the leg found: the index it ranked with, the nearest messages, the ranking."""

    index: LexicalIndex | None = None
    nearest: list[tuple[str, float]] = field(default_factory=list)
    hits: list[EpisodeHit] = field(default_factory=list)


@dataclass(slots=True)
class _Slot:
    """One user's message index, and the lock held while it is loaded or checked."""

    loading: threading.Lock = field(default_factory=threading.Lock)
    index: LexicalIndex | None = None
    checked: float = -math.inf  # when the index was last loaded or checked (monotonic)
    # messages noted while a load runs, with their stored terms
    written: list[tuple[EpisodeText, str | None]] | None = None


class EpisodeLeg:
    """Ranks one user's messages for a query; indexes are kept per user (LRU).

    Loading a user's index takes that user's lock only: other users' searches go on, and
    searches of the same user wait for the one load (or, when an index is there and only
    being checked against the store, use it).
    """

    def __init__(
        self, reads: Reads, params: EpisodeParams, stored: MessageIndexes | None = None
    ) -> None:
        self.reads = reads
        self.stored = stored  # None: every load reads every message
        self.params = params
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._lock = threading.Lock()  # the slots table; never held across a database read

    def start(self, user_id: str) -> Started:
        """Submit the load (or check) of the user's message index: it needs no vector."""
        return Started(BACKGROUND.submit(self.index, user_id))

    def start_nearest(self, started: Started, user_id: str, vector: list[float]) -> None:
        """Submit the vector read of the messages nearest `vector` (none when the index is
        already known to be empty: a graph of facts alone)."""
        index = started.index
        if index.done() and index.exception() is None and not len(index.result()):
            return
        k = self.params.dense_k
        started.nearest = BACKGROUND.submit(self.reads.vector_episodes, user_id, vector, k)

    def finish(
        self, started: Started | None, query: Query, since: float | None, until: float | None
    ) -> Found:
        """The index, and when the nearest messages were read, the `pool` best messages."""
        if started is None:
            return Found()
        found = Found(started.index.result())
        if found.index is not None and started.nearest is not None:
            found.nearest = started.nearest.result()
            pool = self.params.pool
            found.hits = self.rank(found.index, query, found.nearest, pool, since, until)
        return found

    def note(self, user_id: str, rows: Iterable[EpisodeRow]) -> None:
        """Called after writes: index the written messages, if the user's index is loaded
        (or being loaded: then once the load ends)."""
        texts = [_text(row) for row in rows]
        terms = [row.terms if row.terms_v == TERMS_VERSION else None for row in rows]
        with self._lock:
            slot = self._slots.get(user_id)
            if slot is None:
                return
            if slot.written is not None:
                slot.written.extend(zip(texts, terms, strict=True))
            if slot.index is not None:
                slot.index.add(texts, terms)

    def forget(self, user_id: str | None = None) -> None:
        """Called after deletes: drop the user's index (every index when `user_id` is None)."""
        with self._lock:
            if user_id is None:
                self._slots.clear()
            else:
                self._slots.pop(user_id, None)

    def index(self, user_id: str) -> LexicalIndex:
        """The user's message index: loaded on the user's first search; once older than
        `refresh_s`, checked against the store (and loaded again when another process wrote)
        aside, while the searches go on with it."""
        slot = self._slot(user_id)
        index = slot.index
        if index is not None:
            stale = time.monotonic() - slot.checked >= self.params.refresh_s
            if stale and slot.loading.acquire(blocking=False):  # else: being checked
                BACKGROUND.aside(self._check, user_id, slot)
            return index
        with slot.loading:
            return self._refresh(user_id, slot)

    def _check(self, user_id: str, slot: _Slot) -> None:
        """`_refresh` aside, the slot's lock (taken by the search that found it stale)
        released after it; a failed check is tried again `refresh_s` later, as the relation
        counts are (`user_relations`), not at every search."""
        try:
            self._refresh(user_id, slot)
        except Exception:  # a search reports the store's trouble; this one tries again later
            log.debug("checking the message index of %s failed", user_id, exc_info=True)
            slot.checked = time.monotonic()
        finally:
            slot.loading.release()

    def _slot(self, user_id: str) -> _Slot:
        with self._lock:
            slot = self._slots.get(user_id)
            if slot is None:
                slot = self._slots[user_id] = _Slot()
            self._slots.move_to_end(user_id)
            while len(self._slots) > self.params.max_users:
                self._slots.popitem(last=False)
            return slot

    def _refresh(self, user_id: str, slot: _Slot) -> LexicalIndex:
        """Under the slot's lock: the index as it is when fresh (loaded while this search
        waited) or when the store holds the same messages (as many, at the same times: a
        message another process deleted and one it wrote are told apart), else loaded
        again."""
        index = slot.index
        if index is not None:
            if time.monotonic() - slot.checked < self.params.refresh_s:
                return index
            if self.reads.episodes_stamp(user_id) == index.stamp():
                slot.checked = time.monotonic()
                return index
        with self._lock:
            slot.written = []
        try:
            index = self._load(user_id)
        except BaseException:
            with self._lock:
                slot.written = None
            raise
        with self._lock:
            written = slot.written or []
            index.add([text for text, _ in written], [terms for _, terms in written])
            slot.index, slot.checked, slot.written = index, time.monotonic(), None
        return index

    def _load(self, user_id: str) -> LexicalIndex:
        """The stored index with the messages written since, or when there is none to use,
        every message read (`_read_all`). A load that read `STORE_AFTER` messages or more
        stores the parts they fall in, in the background, for the next process's first
        search (`PART_MESSAGES` messages each: the parts before them stay as stored)."""
        index, read = self._stored(user_id)
        kept = len(index) - read if index is not None else 0
        if index is None:
            index = self._read_all(user_id)
            read = len(index)
        if read >= STORE_AFTER and self.stored is not None:
            write = functools.partial(self._store, user_id, snapshot(index), kept)
            store_later(write, f"the message index of {user_id!r}")
        return index

    def _store(self, user_id: str, index: LexicalIndex, kept: int) -> None:
        """Store the parts of `index` from the one its message after the `kept` first falls
        in, one statement each; none longer than `STORED_MAX_CHARS` (neither it nor those
        after it are stored) or holding a message deleted meanwhile."""
        assert self.stored is not None
        for number, end, data in parts(index, PART_MESSAGES, kept):
            if len(data) > STORED_MAX_CHARS:
                return
            uids = index.uids[number * PART_MESSAGES : end]
            if not self.stored.store_part(user_id, number, uids, FORMAT, data, end == len(index)):
                return

    def _stored(self, user_id: str) -> tuple[LexicalIndex | None, int]:
        """The user's stored index (its parts in order, up to the first that cannot be
        read), when it covers only stored messages and at least half of them, completed with
        those it does not cover; and how many those were."""
        if self.stored is None or (stored := self.stored.stored(user_id)) is None:
            return None, 0
        index = LexicalIndex()
        for number, format_ in stored.parts:
            part = self.stored.part(user_id, number) if format_ == FORMAT else None
            if part is None or part[0] != FORMAT or not decode_into(index, part[1]):
                break
            time.sleep(0)  # a search waiting for the interpreter takes it now, not in 5 ms
        if not len(index):
            return None, 0
        finish(index)
        uids = stored.uids
        new = [uid for uid in uids if uid not in index.position]
        if len(uids) - len(new) != len(index) or len(new) > len(index):
            return None, 0  # a message it holds was deleted, or it is far behind
        for at in range(0, len(new), LOAD_READ):
            page = new[at : at + LOAD_READ]
            index.extend(*self.stored.texts(user_id, page, TERMS_VERSION))
        index.seal()
        return index, len(new)

    def _read_all(self, user_id: str) -> LexicalIndex:
        """Every message of the user, with the terms stored with each: in one read, or for a
        large user in short steps (`tuning.LOAD_READ`); the index computes the terms of those
        stored without them (an older store's messages; they are not written back)."""
        index = LexicalIndex()
        index.extend(*self.reads.episode_texts(user_id, TERMS_VERSION, ALL_UIDS, LOAD_ONCE + 1))
        if len(index) > LOAD_ONCE:  # a large user: all of it, a range at a time
            count, _ = self.reads.episodes_stamp(user_id)
            for uids in uid_ranges(count, LOAD_READ):
                index.extend(*self.reads.episode_texts(user_id, TERMS_VERSION, uids))
                if len(index.unsealed) >= LOAD_BLOCK:
                    index.seal()
            if len(index) < count:  # uids that are no hex digests: once more, all at once
                index.extend(*self.reads.episode_texts(user_id, TERMS_VERSION))
        index.seal()
        return index

    def read_texts(self, user_id: str, found: Found, uids: Iterable[str]) -> None:
        """Read the text of those of `uids` that `found`'s index holds without it (an index
        read from the store holds none until its messages are shown)."""
        if found.index is None or self.stored is None:
            return
        unread = found.index.unread(uids)
        if unread:
            found.index.read(self.stored.contents(user_id, unread))

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
        return [EpisodeHit(index.uids[d], float(scores[d])) for d in top]


def _text(row: EpisodeRow) -> EpisodeText:
    return EpisodeText(
        row.uid, row.session_id, row.speaker, row.role, row.content, row.ts, row.source, row.undated
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
    ts = np.asarray(index.times, dtype=np.float64)
    keep = ~np.asarray(index.undated, dtype=bool)  # an undated message is never known inside
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
