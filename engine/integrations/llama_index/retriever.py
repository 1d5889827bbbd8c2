"""`GraphMemRetriever`: graphmem search as a LlamaIndex retriever, one node per fact."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engine.memory import Memory
from engine.models import ScoredFact
from engine.normalize import check_count, check_user_id
from engine.prompt_block import MAX_LIMIT


def fact_node(scored: ScoredFact) -> NodeWithScore:
    """A scored fact as a `NodeWithScore`: the fact's sentence, its triple and provenance."""
    fact = scored.fact
    metadata: dict[str, Any] = {
        "uid": fact.uid,
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "legs": list(scored.legs),
        "hop": scored.hop,
        "episodes": list(fact.episodes),
        "valid_at": fact.valid_at.isoformat() if fact.valid_at else None,
        "valid_unit": fact.valid_unit,  # how precisely valid_at is known: "year" for "last year"
    }
    node = TextNode(
        id_=fact.uid,
        text=fact.text,
        metadata=metadata,
        excluded_embed_metadata_keys=list(metadata),
        excluded_llm_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=scored.score)


class GraphMemRetriever(BaseRetriever):
    """graphmem search as a LlamaIndex retriever: one node per fact, best first.

    Example:
        >>> retriever = GraphMemRetriever(Memory(), user_id="alice", limit=5)
        >>> [n.node.get_content() for n in retriever.retrieve("who is Alice's friend?")]
        ['Alice friend of John']
    """

    def __init__(
        self,
        memory: Memory,
        user_id: str,
        limit: int = 10,
        *,
        include_invalid: bool = False,
        callback_manager: CallbackManager | None = None,
    ) -> None:
        """Raises:
        InvalidInputError: a user id or `limit` `Memory.search` refuses (at every retrieval
            otherwise), named.
        """
        self.memory = memory
        self.user_id = check_user_id(user_id)
        self.limit = check_count(limit, "limit", 1, MAX_LIMIT)
        self.include_invalid = include_invalid
        super().__init__(callback_manager=callback_manager)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.search(
            query_bundle.query_str,
            self.user_id,
            self.limit,
            include_invalid=self.include_invalid,
        )
        return [fact_node(scored) for scored in result.facts]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)
