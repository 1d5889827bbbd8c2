"""`AsyncMemory`: `Memory` for asyncio code (as Mem0's `AsyncMemory`).

Every public method of `Memory` is here as a coroutine with the same arguments: it runs the
synchronous method in a thread pool that this object owns, so the event loop never waits on
the database, the embedding model or the LLM. `aclose()` (or leaving `async with`) closes the
memory and stops the pool.
"""

from __future__ import annotations

from typing import Any, Self

from engine.async_pool import DEFAULT_WORKERS, Pooled
from engine.async_pool import in_pool as _in_pool
from engine.config import Settings
from engine.memory import Memory
from engine.normalize import check_count

__all__ = ["DEFAULT_WORKERS", "AsyncMemory"]


class AsyncMemory(Pooled[Memory]):
    """Long-term graph memory for asyncio code: `await mem.add(...)`, `await mem.search(...)`.

    Args:
        settings, **overrides: as `Memory` (ignored when `memory` is given).
        memory: a `Memory` to wrap instead (then `aclose` leaves it open).
        max_workers: calls that run at once (default 4).

    Raises:
        InvalidInputError: `max_workers` is not an integer of at least 1.

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
        workers = check_count(max_workers, "max_workers", 1)
        wrapped = memory if memory is not None else Memory(settings, **overrides)
        super().__init__(wrapped, owned=memory is None, max_workers=workers, name="async")

    @property
    def memory(self) -> Memory:
        """The `Memory` whose methods this one awaits."""
        return self._wrapped

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Self:
        """Build from a dict of settings (names as in `engine.config.Settings`)."""
        return cls(**config)

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
