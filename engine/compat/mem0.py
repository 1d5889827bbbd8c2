"""Mem0's `Memory` API on graphmem: code written for Mem0 runs with one changed import.

    from engine.compat.mem0 import Memory      # instead of: from mem0 import Memory
    m = Memory()                               # or Memory.from_config({...Mem0's keys...})
    m.add("I like pizza", user_id="alice")
    m.search("what do I like?", user_id="alice")   # {"results": [...], "relations": [...]}

`AsyncMemory` has the same verbs to await (`from engine.compat.mem0 import AsyncMemory`,
`await AsyncMemory.from_config({...})`), each run in a thread pool it owns.

A Mem0 "memory" is a graphmem fact (its sentence is the memory text); `relations` are the
same facts as (source, relationship, destination) triples. A memory id is UUID-shaped, as
Mem0's: a keyed permutation of the fact's uid under a secret of the store
(`engine.compat.mem0_ids`), so it names no user, cannot be computed from a fact, and is the
same in every process. `get`, `update`, `delete` and `history` take the id alone, as in Mem0,
or with the caller's scope (`user_id=`, `agent_id=`, `run_id=`), which the memory must then be
in; an id outside it is "not found", exactly like a random one. `agent_id`, `run_id` and
metadata `filters` narrow `search` and `get_all` to the facts whose messages match.
Differences: docs/migrate_from_mem0.md.

This module is the facade's public surface, as `mem0` is Mem0's: `Memory` lives in
`engine.compat.mem0_sync`, `AsyncMemory` in `engine.compat.mem0_async`.
"""

from __future__ import annotations

from engine.compat.mem0_async import AsyncMemory
from engine.compat.mem0_sync import Memory

__all__ = ["AsyncMemory", "Memory"]
