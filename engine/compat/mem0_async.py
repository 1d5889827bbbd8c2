"""`AsyncMemory`: Mem0's `AsyncMemory` on graphmem (imported from `engine.compat.mem0`).

Each Mem0 verb is a coroutine with the arguments and answers of the synchronous facade
(`engine.compat.mem0_sync.Memory`): it runs that facade's method in a thread pool this object
owns, so the event loop never waits on the database, the embedding model or the LLM.
`aclose()` (or leaving `async with`) stops the pool and closes the memory when this object
made it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self

from engine.async_pool import DEFAULT_WORKERS, Pooled
from engine.async_pool import in_pool as _in_pool
from engine.compat.mem0_sync import Memory
from engine.memory import Memory as GraphMemory
from engine.normalize import check_count


class AsyncMemory(Pooled[Memory]):
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
        workers = check_count(max_workers, "max_workers", 1)
        # the facade closes only a graphmem Memory it built: closing it closes what it owns
        super().__init__(
            Memory(config, memory=memory), owned=True, max_workers=workers, name="mem0"
        )

    @property
    def sync(self) -> Memory:
        """The synchronous facade whose methods this one awaits."""
        return self._wrapped

    @classmethod
    async def from_config(cls, config_dict: Mapping[str, Any]) -> Self:
        """Build from Mem0's config keys; awaited, as Mem0's: `await AsyncMemory.from_config(c)`."""
        return cls(config_dict)

    @property
    def graph(self) -> GraphMemory:
        """The graphmem `Memory` underneath (as the synchronous facade's `graph`)."""
        return self.sync.graph

    add = _in_pool(Memory.add)
    chat = _in_pool(Memory.chat)
    delete = _in_pool(Memory.delete)
    delete_all = _in_pool(Memory.delete_all)
    get = _in_pool(Memory.get)
    get_all = _in_pool(Memory.get_all)
    history = _in_pool(Memory.history)
    reset = _in_pool(Memory.reset)
    search = _in_pool(Memory.search)
    update = _in_pool(Memory.update)
