"""`AsyncMemory`: Mem0's `AsyncMemory` on graphmem (imported from `engine.compat.mem0`).

Each Mem0 verb is a coroutine with the arguments and answers of the synchronous facade
(`engine.compat.mem0_sync.Memory`): it runs that facade's method in a thread pool this object
owns, so the event loop never waits on the database, the embedding model or the LLM.
`aclose()` (or leaving `async with`) stops the pool and closes the memory when this object
made it.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Self, TypeVar

from engine.async_memory import DEFAULT_WORKERS
from engine.compat.mem0_sync import Memory
from engine.errors import ClosedError, InvalidInputError
from engine.memory import Memory as GraphMemory

R = TypeVar("R")


def _in_pool(method: Callable[..., R]) -> Callable[..., Awaitable[R]]:
    """`method` of the synchronous facade as a coroutine method of `AsyncMemory`."""

    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> R:
        return await self._run(functools.partial(method, self.sync, *args, **kwargs))

    return call


class AsyncMemory:
    """Mem0's `AsyncMemory` (open-source API, v1 call shapes) on a graphmem store.

    Args:
        config: a Mem0 config dict (as `Memory`), or None for graphmem's defaults.
        memory: a graphmem `Memory` to use instead of building one (then `aclose` leaves it
            open: its owner closes it).
        max_workers: calls that run at once (default 4).

    Raises:
        InvalidInputError: `max_workers` below 1.
        ConfigError: a Mem0 config graphmem cannot use (as `Memory`).

    Example:
        >>> async with AsyncMemory() as m:  # doctest: +SKIP
        ...     await m.add("I like pizza", user_id="alice")
        ...     found = await m.search("What do I like?", user_id="alice")
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        memory: GraphMemory | None = None,
        max_workers: int = DEFAULT_WORKERS,
    ) -> None:
        if isinstance(max_workers, bool) or not isinstance(max_workers, int) or max_workers < 1:
            raise InvalidInputError(
                f"max_workers must be an integer of at least 1, got {max_workers!r}"
            )
        self.sync = Memory(config, memory=memory)
        self._owns_memory = memory is None
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="graphmem-mem0")
        self._closed = False

    @classmethod
    async def from_config(cls, config_dict: Mapping[str, Any]) -> Self:
        """Build from Mem0's config keys; awaited, as Mem0's: `await AsyncMemory.from_config(c)`."""
        return cls(config_dict)

    @property
    def graph(self) -> GraphMemory:
        """The graphmem `Memory` underneath (as the synchronous facade's `graph`)."""
        return self.sync.graph

    async def _run(self, call: Callable[[], R]) -> R:
        if self._closed:
            raise ClosedError("this AsyncMemory is closed: open a new one (AsyncMemory(...))")
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    add = _in_pool(Memory.add)
    delete = _in_pool(Memory.delete)
    delete_all = _in_pool(Memory.delete_all)
    get = _in_pool(Memory.get)
    get_all = _in_pool(Memory.get_all)
    history = _in_pool(Memory.history)
    reset = _in_pool(Memory.reset)
    search = _in_pool(Memory.search)
    update = _in_pool(Memory.update)

    async def aclose(self) -> None:
        """Close the memory (when this object made it) and stop the pool; idempotent."""
        if self._closed:
            return
        if self._owns_memory:
            await self._run(self.sync.close)
        self._closed = True
        self._pool.shutdown(wait=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
