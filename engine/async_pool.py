"""Blocking calls for asyncio code: each runs in a thread pool the async object owns, so the
event loop never waits on the database, the embedding model or the LLM. What `AsyncMemory`
(graphmem's) and the Mem0 facade's `AsyncMemory` share: the pool, the wrapping of each
synchronous method, and closing (the wrapped object only when the async one made it).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

from engine.errors import ClosedError


class Closable(Protocol):
    def close(self) -> None: ...


T = TypeVar("T", bound=Closable)
R = TypeVar("R")
DEFAULT_WORKERS = 4


def in_pool(method: Callable[..., R]) -> Callable[..., Awaitable[R]]:
    """`method` of the wrapped class as a coroutine method of the `Pooled` one."""

    @functools.wraps(method)
    async def call(self: Pooled[Any], *args: Any, **kwargs: Any) -> R:
        return await self._run(functools.partial(method, self._wrapped, *args, **kwargs))

    return call


def _retrieved(sent: asyncio.Future[Any]) -> None:
    """Mark the outcome of a call nobody may await any more as seen: its error is the
    caller's to catch, not asyncio's to log as never retrieved."""
    if not sent.cancelled():
        sent.exception()


class Pooled(Generic[T]):
    """`wrapped`'s methods (those declared with `in_pool`) for asyncio code; `aclose()` (or
    leaving `async with`) stops the pool and closes `wrapped` when `owned`."""

    def __init__(self, wrapped: T, *, owned: bool, max_workers: int, name: str) -> None:
        self._wrapped, self._owned, self._name = wrapped, owned, name
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix=f"graphmem-{name}")
        self._closed = False
        self._closing: asyncio.Future[None] | None = None

    async def _run(self, call: Callable[[], R]) -> R:
        if self._closed:
            raise ClosedError(f"this {type(self).__name__} is closed: open a new one")
        # Shielded: a cancel (a timeout) stops the waiting, never the call, even one queued.
        sent = asyncio.wrap_future(self._pool.submit(call))
        sent.add_done_callback(_retrieved)
        return await asyncio.shield(sent)

    async def aclose(self) -> None:
        """Take no more calls, let the calls sent end (one its caller stopped awaiting, by a
        timeout or a cancel, too: a thread cannot be stopped halfway through a write), then
        close the wrapped object when this one made it. Idempotent: a second call (another
        shutdown hook) returns when the first's close is done, not before. The event loop runs
        on meanwhile."""
        if self._closing is None:
            self._closed = True
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    async def _close(self) -> None:
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        if self._owned:
            await asyncio.to_thread(self._wrapped.close)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
