"""One user's lane of the ingest pipeline: work prepared in parallel, applied in order."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from engine.ingest.sources import Job

T = TypeVar("T")


class Lane(Generic[T]):
    """One user's jobs: prepared in any order, applied strictly in lane order.

    Whichever worker finishes a prepare hands it in; the first to find the lane idle applies
    every consecutive ready job, so applies of one user never overlap or reorder.
    """

    def __init__(self, apply: Callable[[Job, T], None]) -> None:
        self._apply = apply
        self._lock = threading.Lock()
        self._ready: dict[int, tuple[Job, T]] = {}
        self._next = 0
        self._draining = False

    def hand_in(self, index: int, job: Job, extracted: T) -> None:
        with self._lock:
            self._ready[index] = (job, extracted)
            if self._draining:
                return
            self._draining = True
        while True:
            with self._lock:
                item = self._ready.pop(self._next, None)
                if item is None:
                    self._draining = False
                    return
                self._next += 1
            self._apply(*item)
