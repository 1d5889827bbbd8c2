"""The k nearest nodes of one user for a vector read: the shared index or an exact scan of
the user's own nodes, whichever answers right (see `nearest`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from engine.store.base import Rows, VectorRead

Run = Callable[[str, dict[str, Any]], Rows]  # a read-only `GraphStore.run`


# One vector index per label spans every user, and it picks nearest neighbours before the user
# filter applies: beside a user with 6,000 facts near the query, one with 3 got none of them.
# `nearest` decides, for any vector-indexed label, between that index and an exact scan of the
# user's own nodes (benchmarks/multitenant.py measured both; docs/storage.md, "Many users in
# one store").

SCAN_MAX = 5_000  # a user with at most this many nodes of a label is scanned: ~8 ms on FalkorDB
NEIGHBOURS_PER_RESULT = 8
MAX_VECTOR_K = 4096
WIDER = 4  # a short answer of the index is asked again this many times as wide


def nearest(
    count: Callable[[int], int],
    index: Callable[[int, int], Rows],
    scan: Callable[[int], Rows],
    k: int,
) -> Rows:
    """The user's k nearest nodes of one label, from `count(cap)`, `index(n, k)` and
    `scan(k)` (the statements of a `VectorRead`).

    - A user with at most `SCAN_MAX` nodes is scanned: exact, and about as cheap as the index
      (about 1.6 us a node on FalkorDB), whatever other users hold.
    - A larger user asks the shared index for n = `NEIGHBOURS_PER_RESULT` * k neighbours (an
      HNSW index searches wider the more it is asked for). When k of them are the user's and
      pass the filters, they are the user's k nearest: they lead the index's answer, where an
      HNSW search is reliable.
    - When fewer survive, the index is asked once more, `WIDER` times as wide: stale vectors
      (likely those FalkorDB keeps of a node rewritten, FalkorDB PR #2197) crowd an index
      built while a large load wrote (9 of 300 MetaQA questions' entity reads came short
      after a 40k-fact load, each then a 40 ms scan; none at 4x, none after a reopen rebuilt
      the index), and they are passed over while the user's nodes are still at the head of
      the answer, where HNSW is reliable.
    - When fewer still survive (the user's nodes are a small part of the index near the
      query, or filtered out: invalid facts), the user is scanned: slower for a large user,
      never starved. Asking the index for more is no cure: the user's nodes would come from
      the tail of its answer, where HNSW misses neighbours (measured: a user whose nodes
      ranked beyond the first few thousand got a wrong top 10).
    """
    if count(SCAN_MAX + 1) <= SCAN_MAX:
        return scan(k)
    n = min(MAX_VECTOR_K, max(64, k * NEIGHBOURS_PER_RESULT))
    rows = index(n, k)
    if len(rows) < k and n < MAX_VECTOR_K:
        rows = index(min(MAX_VECTOR_K, n * WIDER), k)
    return rows[:k] if len(rows) >= k else scan(k)


_SIZES_KEPT = 30_000  # users x labels whose sizes are kept: a service with many users stays small


class UserSizes:
    """How many nodes of each vector-indexed label a user has, as last counted: the count
    decides between scan and index (`nearest`) and was a round trip on every vector read,
    three a search. A stale size never gives a wrong answer, only a slower one (a user grown
    large is scanned; one shrunk reads the index, then is scanned). The adapter forgets a
    user's sizes when it writes for that user; another process's writes wait out `ttl_s`."""

    def __init__(self, ttl_s: float = 30.0) -> None:
        self._ttl_s = ttl_s
        self._lock = threading.Lock()
        self._sizes: dict[tuple[str, str, int], tuple[float, int]] = {}

    def count(self, key: tuple[str, str, int], fresh: Callable[[], int]) -> int:
        """The size under `key` (statement, user, cap), counted by `fresh` when not known."""
        with self._lock:
            known = self._sizes.get(key)
        if known is not None and time.monotonic() - known[0] < self._ttl_s:
            return known[1]
        size = fresh()
        with self._lock:
            if len(self._sizes) >= _SIZES_KEPT:
                self._sizes.clear()
            self._sizes[key] = (time.monotonic(), size)
        return size

    def forget(self, user_id: str | None = None) -> None:
        """Forget one user's sizes (None: everyone's)."""
        with self._lock:
            for key in [k for k in self._sizes if user_id is None or k[1] == user_id]:
                del self._sizes[key]


def nearest_rows(
    run: Run, read: VectorRead, params: dict[str, Any], k: int, sizes: UserSizes
) -> Rows:
    """`nearest` by the statements of `read`, each run by `run`; the user's size from `sizes`."""
    user = {"user_id": params["user_id"]}
    return nearest(
        lambda cap: sizes.count(
            (read.count, user["user_id"], cap),
            lambda: int(run(read.count, {**user, "cap": cap})[0][0]),
        ),
        lambda n, keep: run(read.index, {**params, "k": n, "limit": keep}),
        lambda keep: run(read.scan, {**params, "limit": keep}),
        k,
    )
