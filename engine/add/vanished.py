"""What an add found gone when it wrote: a fact or an entity it read as stored (so gave no
vector), deleted before the write. The add and `Memory.merge_entities` write their batches
with `write_whole`, which writes what was found gone again, whole; it lives with the store
(`engine.store.whole`), where a load, below the add, reaches it too.
"""

from __future__ import annotations

from engine.store.whole import write_whole

__all__ = ["write_whole"]
