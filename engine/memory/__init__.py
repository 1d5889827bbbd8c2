"""`Memory`, the public face of graphmem, and the parts it is built from.

core      `MemoryCore`: its parts (store, embedder, extractor, retriever), setup, stats,
          lifecycle
edit      `MemoryEdit`: update, delete, forget, merge by hand (`merge` builds a merge's batch)
transfer  `MemoryTransfer`: export and import
facade    `Memory`: add, search and the rest of the verbs, over all of the above
held      `held_history`: the history of an id the user holds, else not found (CLI, MCP)
"""

from engine.memory.facade import Memory

__all__ = ["Memory"]
