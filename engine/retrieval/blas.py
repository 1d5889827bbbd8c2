"""One BLAS thread while a search runs.

A search's matrix products are small (a question's words against a user's relations), yet
OpenBLAS splits each over every core, and its idle workers then spin for a while after each
product: on a 2-core machine they took a core from the database and the embedding model for
about 24 ms of every chat search (65 -> 46 ms a search with one thread). The limit covers the
process while any search runs, and the caller's own setting comes back when the last ends.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from threadpoolctl import ThreadpoolController


class _BlasThreads:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._searches = 0
        self._controller: ThreadpoolController | None = None
        self._limiter: Any = None

    @contextmanager
    def one(self) -> Iterator[None]:
        with self._lock:
            if self._searches == 0:
                if self._controller is None:
                    self._controller = ThreadpoolController()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._searches += 1
        try:
            yield
        finally:
            with self._lock:
                self._searches -= 1
                if self._searches == 0:
                    self._limiter.restore_original_limits()


_BLAS = _BlasThreads()
P = ParamSpec("P")
R = TypeVar("R")


def one_blas_thread(function: Callable[P, R]) -> Callable[P, R]:
    """`function` runs with one BLAS thread (see the module's note)."""

    @functools.wraps(function)
    def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        with _BLAS.one():
            return function(*args, **kwargs)

    return limited
