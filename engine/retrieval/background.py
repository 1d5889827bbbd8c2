"""Threads for the database reads of one search that need not wait for each other (a
semantic query while the caller anchors and expands): each mostly waits on the database.

No thread exists at import: the pool starts at the first read sent, and stops when the last
`Memory` using it closes (`hold` / `release`), so a host that closed its memories is left
with no thread of graphmem's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
_WORKERS = 4


class BackgroundReads:
    """A thread pool started on first use and stopped when its last holder releases it."""

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._holders = 0
        self._pool: ThreadPoolExecutor | None = None
        self._running: set[Future[Any]] = set()

    def submit(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Run `call` in the pool (started now if it is not running)."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="graphmem-search")
            future = self._pool.submit(call, *args, **kwargs)
            self._running.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future: Future[Any]) -> None:
        with self._lock:
            self._running.discard(future)

    def drain(self) -> None:
        """Wait for the work sent so far (a store closes once the reads and writes sent to
        it have ended: one still running reconnects, and the embedded server, seeing a
        client, is not stopped)."""
        with self._lock:
            running = list(self._running)
        wait(running)

    def hold(self) -> None:
        """One more user (a `Memory`): the pool stays until each user has released it."""
        with self._lock:
            self._holders += 1

    def release(self) -> None:
        """One user less; the last stops the pool's threads (its reads in flight end first)."""
        with self._lock:
            self._holders = max(self._holders - 1, 0)
            pool = self._pool if self._holders == 0 else None
            if pool is not None:
                self._pool = None
        if pool is not None:
            pool.shutdown(wait=True)

    def running(self) -> bool:
        """Whether the pool has been started and not stopped since."""
        with self._lock:
            return self._pool is not None


BACKGROUND = BackgroundReads(_WORKERS)
