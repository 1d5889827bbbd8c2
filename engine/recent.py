"""A bounded map, the least recently used entries dropped first: the process-wide tables a
long-lived host would otherwise grow without end (vectors of texts, users' predicate lists)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Generic, TypeVar

T = TypeVar("T")


class Recent(Generic[T]):
    """A thread-safe map of at most `size` keys; the least recently used go first (`size`
    0: nothing is kept)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._items: OrderedDict[str, T] = OrderedDict()

    def get(self, keys: Iterable[str]) -> dict[str, T]:
        """The entries of `keys` kept, each now the most recently used."""
        found: dict[str, T] = {}
        with self._lock:
            for key in keys:
                item = self._items.get(key)
                if item is not None:
                    self._items.move_to_end(key)
                    found[key] = item
        return found

    def one(self, key: str) -> T | None:
        return self.get([key]).get(key)

    def put(self, items: dict[str, T]) -> None:
        if self._size <= 0:
            return
        with self._lock:
            for key, item in items.items():
                self._items[key] = item
                self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def pop(self, key: str) -> None:
        with self._lock:
            self._items.pop(key, None)
