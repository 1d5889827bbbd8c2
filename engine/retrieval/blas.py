"""A BLAS thread limit while a search runs, when the settings ask for one
(`search_blas_threads`; off by default).

A search's matrix products are small (a question's words against a user's relations), yet
OpenBLAS splits each over every core, and its idle workers then spin for a while after each
product: on a small machine they take a core from the database and the embedding model. A
BLAS library has one thread count for the whole process, so the limit covers every thread of
the host while any search runs; the host's own setting comes back when the last one ends.
The latency it saves is measured in docs/performance.md.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from threadpoolctl import ThreadpoolController


class _BlasThreads:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._searches = 0
        self._controller: ThreadpoolController | None = None
        self._modules = 0
        self._limiter: Any = None

    def _libraries(self) -> ThreadpoolController:
        """The BLAS libraries loaded, found again whenever modules were imported since (a
        runtime loaded later, e.g. PyTorch's, brings its own)."""
        if self._controller is None or len(sys.modules) != self._modules:
            self._controller = ThreadpoolController()
            self._modules = len(sys.modules)
        return self._controller

    @contextmanager
    def limit(self, threads: int) -> Iterator[None]:
        """At most `threads` BLAS threads until the last search running ends (the first
        search's limit holds while others overlap it)."""
        with self._lock:
            if self._searches == 0:
                self._limiter = self._libraries().limit(limits=threads, user_api="blas")
            self._searches += 1
        try:
            yield
        finally:
            with self._lock:
                self._searches -= 1
                if self._searches == 0:
                    self._limiter.restore_original_limits()
                    self._limiter = None


class BlasLimited(Protocol):
    """An object whose searches may limit BLAS threads (None: no limit)."""

    blas_threads: int | None


_BLAS = _BlasThreads()
S = TypeVar("S", bound=BlasLimited)
P = ParamSpec("P")
R = TypeVar("R")


def blas_limited(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """`method` runs with at most `self.blas_threads` BLAS threads; None leaves the
    process's BLAS alone (see the module's note)."""

    def limited(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if self.blas_threads is None:
            return method(self, *args, **kwargs)
        with _BLAS.limit(self.blas_threads):
            return method(self, *args, **kwargs)

    functools.update_wrapper(limited, method)
    return limited
