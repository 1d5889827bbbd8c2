"""`AsyncMemory`: `Memory` for asyncio code (as Mem0's `AsyncMemory`).

Every public method of `Memory` is here as a coroutine with the same arguments: it runs the
synchronous method in a thread pool that this object owns, so the event loop never waits on
the database, the embedding model or the LLM. `aclose()` (or leaving `async with`) closes the
memory and stops the pool.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from engine.config import Settings
from engine.errors import InvalidInputError, StoreUnavailableError
from engine.memory import Memory

P = ParamSpec("P")
R = TypeVar("R")
DEFAULT_WORKERS = 4


def _in_pool(method: Callable[Concatenate[Memory, P], R]) -> Callable[..., Awaitable[R]]:
    """`method` of `Memory` as a coroutine method of `AsyncMemory`."""

    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._run(functools.partial(method, self.memory, *args, **kwargs))

    return call


class AsyncMemory:
    """Long-term graph memory for asyncio code: `await mem.add(...)`, `await mem.search(...)`.

    Args:
        settings, **overrides: as `Memory` (ignored when `memory` is given).
        memory: a `Memory` to wrap instead (then `aclose` leaves it open).
        max_workers: calls that run at once (default 4).

    Example:
        >>> async with AsyncMemory() as mem:  # doctest: +SKIP
        ...     await mem.add("I live in Paris", user_id="alice")
        ...     hits = await mem.search("Where do I live?", user_id="alice")
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        memory: Memory | None = None,
        max_workers: int = DEFAULT_WORKERS,
        **overrides: Any,
    ) -> None:
        if max_workers < 1:
            raise InvalidInputError(f"max_workers must be at least 1, got {max_workers}")
        self.memory = memory if memory is not None else Memory(settings, **overrides)
        self._owns_memory = memory is None
        self._pool = ThreadPoolExecutor(max_workers, thread_name_prefix="graphmem-async")
        self._closed = False

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Self:
        """Build from a dict of settings (names as in `engine.config.Settings`)."""
        return cls(**config)

    async def _run(self, call: Callable[[], R]) -> R:
        if self._closed:
            raise StoreUnavailableError("this AsyncMemory is closed")
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    add = _in_pool(Memory.add)
    add_facts = _in_pool(Memory.add_facts)
    apply_add = _in_pool(Memory.apply_add)
    delete = _in_pool(Memory.delete)
    delete_all = _in_pool(Memory.delete_all)
    delete_entity = _in_pool(Memory.delete_entity)
    delete_episode = _in_pool(Memory.delete_episode)
    entity = _in_pool(Memory.entity)
    export = _in_pool(Memory.export)
    forget = _in_pool(Memory.forget)
    get_all = _in_pool(Memory.get_all)
    history = _in_pool(Memory.history)
    import_ = _in_pool(Memory.import_)
    ingest = _in_pool(Memory.ingest)
    load = _in_pool(Memory.load)
    merge_entities = _in_pool(Memory.merge_entities)
    prepare_add = _in_pool(Memory.prepare_add)
    reset = _in_pool(Memory.reset)
    search = _in_pool(Memory.search)
    stats = _in_pool(Memory.stats)
    top_entities = _in_pool(Memory.top_entities)
    update = _in_pool(Memory.update)
    users = _in_pool(Memory.users)

    @staticmethod
    def self_uid(user_id: str) -> str:
        """The uid of the entity standing for the user ("I", "me", "my")."""
        return Memory.self_uid(user_id)

    async def aclose(self) -> None:
        """Close the memory (when this object made it) and stop the pool; idempotent."""
        if self._closed:
            return
        if self._owns_memory:
            await self._run(self.memory.close)
        self._closed = True
        self._pool.shutdown(wait=True)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
