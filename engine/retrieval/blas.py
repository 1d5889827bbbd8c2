"""A search's BLAS threads. Its matrix products are small (a question's words against a
user's relations), yet OpenBLAS splits one of a few hundred thousand multiply-adds over every
core, and its idle workers then spin for a while after it: on a small machine they take a core
from the database and the embedding model. `on_one_thread` computes such a product in blocks
one thread takes, which changes nothing process-wide.

`search_blas_threads` (off by default) also limits every BLAS library loaded while any search
runs. A BLAS library has one thread count for the whole process, so the limit covers every
thread of the host; the host's own setting comes back when the last search ends. The latency
each saves is measured in docs/performance.md.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

import numpy as np
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


def on_one_thread(
    a: np.ndarray[Any, Any], b: np.ndarray[Any, Any], most: int
) -> np.ndarray[Any, Any]:
    """`a @ b.T`, computed in blocks of `b`'s rows of at most `most` multiply-adds each, small
    enough for one BLAS thread: a question's words against a chat user's hundreds of relations
    woke a BLAS worker that then took a core from the database and the model for ~50 ms (a
    search's CPU time doubled)."""
    rows, width = a.shape
    block = max(1, most // max(1, rows * width))
    if len(b) <= block:
        product: np.ndarray[Any, Any] = a @ b.T
        return product
    return np.hstack([a @ b[i : i + block].T for i in range(0, len(b), block)])
