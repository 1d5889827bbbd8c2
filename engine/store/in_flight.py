"""The calls a store has on its connection, so that closing it ends them instead of racing
them: a call still running when the pool was disconnected reconnected (the client retries a
lost connection), and the server, seeing that client, was never stopped."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from engine.errors import ClosedError


class InFlight:
    """Counts the calls running; `closing` refuses new ones, waits for these, and lets only
    the closing thread's own calls (its last compaction) through until it is done."""

    def __init__(self, what: str) -> None:
        self._what = what
        self._changed = threading.Condition()
        self._running = 0
        self._closer: int | None = None
        self._closed = False

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """Raises:
        ClosedError: the store is closed or closing (another thread closes it)."""
        with self._changed:
            if self._closed or self._closer not in (None, threading.get_ident()):
                raise ClosedError(f"{self._what} is closed: open a new one")
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._running -= 1
                self._changed.notify_all()

    @contextlib.contextmanager
    def closing(self, patience_s: float) -> Iterator[None]:
        """Refuse other threads' calls and wait for theirs to end, `patience_s` at most (a
        bound against a hung call, which the disconnect then cuts); closed on exit."""
        with self._changed:
            self._closer = threading.get_ident()
            self._changed.wait_for(lambda: self._running == 0, timeout=patience_s)
        try:
            yield
        finally:
            with self._changed:
                self._closed = True
