"""LlamaIndex integration: a memory block, a retriever, property-graph interop, and a
read-only, user-scoped view of graphmem's own Neo4j graph.

- `GraphMemoryBlock` (memory_block) plugs graphmem into LlamaIndex's `Memory`.
- `GraphMemRetriever` (retriever) is a `BaseRetriever`: one `NodeWithScore` per fact.
- `triples_from_property_graph` / `import_llama_index_graph` bring a LlamaIndex property graph
  into graphmem; `property_graph_from_memory` / `export_to_property_graph` copy one out
  (property_graph).
- `GraphmemPropertyGraphStore` (graph_store) is LlamaIndex's `Neo4jPropertyGraphStore` on
  graphmem's graph in place: one user's nodes only, and nothing it runs can write.

Example:
    >>> from llama_index.core.memory import Memory as ChatMemory
    >>> mem = Memory()
    >>> chat = ChatMemory.from_defaults(
    ...     memory_blocks=[GraphMemoryBlock(memory=mem, user_id="alice")], token_limit=4000
    ... )

LlamaIndex is imported in this package and nowhere else in `engine`.
"""

from __future__ import annotations

try:
    import llama_index.core  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the package
    raise ImportError(
        "engine.integrations.llama_index needs the `llama-index-core` package "
        "(pip install 'llama-index-core>=0.12')"
    ) from exc

from engine.integrations.llama_index.memory_block import GraphMemoryBlock
from engine.integrations.llama_index.property_graph import (
    export_to_property_graph,
    import_llama_index_graph,
    property_graph_from_memory,
    triples_from_property_graph,
)
from engine.integrations.llama_index.retriever import GraphMemRetriever, fact_node

__all__ = [
    "GraphMemRetriever",
    "GraphMemoryBlock",
    "export_to_property_graph",
    "fact_node",
    "import_llama_index_graph",
    "property_graph_from_memory",
    "triples_from_property_graph",
]
