"""Threads for the database reads of one search that need not wait for each other (a
semantic query while the caller anchors and expands): each mostly waits on the database. Work
no search waits for (reading a user's nodes whole, `known_edges`) runs aside, on one thread
of its own: it never takes a search's thread, and sends the database one read at a time.

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
        self._aside: ThreadPoolExecutor | None = None
        self._running: set[Future[Any]] = set()

    def submit(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Run `call` in the pool (started now if it is not running)."""
        return self._send(False, call, *args, **kwargs)

    def aside(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> Future[R]:
        """Run `call` on the thread for work no search waits for, after the work sent there
        before it (started now if it is not running)."""
        return self._send(True, call, *args, **kwargs)

    def _send(
        self, aside: bool, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs
    ) -> Future[R]:
        with self._lock:
            future = self._executor(aside).submit(call, *args, **kwargs)
            self._running.add(future)
        future.add_done_callback(self._done)
        return future

    def _executor(self, aside: bool) -> ThreadPoolExecutor:
        """The pool, or the thread aside (called holding the lock)."""
        if aside:
            if self._aside is None:
                self._aside = ThreadPoolExecutor(1, thread_name_prefix="graphmem-aside")
            return self._aside
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="graphmem-search")
        return self._pool

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
            if self._holders:
                return
            pools, self._pool, self._aside = [self._pool, self._aside], None, None
        for pool in pools:
            if pool is not None:
                pool.shutdown(wait=True)

    def running(self) -> bool:
        """Whether the pool (or its thread aside) has been started and not stopped since."""
        with self._lock:
            return self._pool is not None or self._aside is not None


BACKGROUND = BackgroundReads(_WORKERS)
