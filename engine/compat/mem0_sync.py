"""`Memory`: Mem0's `Memory` API on a graphmem store (imported from `engine.compat.mem0`,
whose docstring says what maps to what)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, NoReturn

from engine.compat.mem0_args import (
    check_add_args,
    check_no_pages,
    check_search_flags,
    check_threshold,
    check_update_metadata,
    count_of,
)
from engine.compat.mem0_config import settings_of
from engine.compat.mem0_reads import Reads
from engine.compat.mem0_scope import scope_of, scope_or_none
from engine.compat.mem0_shapes import Origin, history_items, relation, similarities
from engine.embedding import as_param
from engine.errors import ExtractionError, InvalidInputError, NotFoundError
from engine.memory import Memory as GraphMemory
from engine.metadata_filter import OVER_FETCH, widened
from engine.models import Fact
from engine.normalize import clean_text, stable_uid
from engine.prompt_block import MAX_LIMIT
from engine.store.base import HistoryRow, WriteBatch
from engine.times import parse_time

__all__ = ["Memory"]
_NOT_EXTRACTED = (
    "extraction failed: {error}; the messages are kept (failed episodes, and the data dir's "
    "dead_letters.jsonl): add them again to retry, or run `graphmem ingest --retry-failed`"
)
_NO_CHAT = (
    "chat is not supported: graphmem has no chat of its own (nor has Mem0's Memory); "
    "search(query, user_id=...) for the memories and give their 'memory' texts to your own "
    "LLM call"
)
_DELETE_WHOM = (
    "delete_all needs a user_id, agent_id or run_id: it deletes one graph; deleting every "
    "user's memories is reset()"
)
log = logging.getLogger("graphmem")


class Memory:
    """Mem0's `Memory` (open-source API, v1 call shapes) on a graphmem store.

    Args:
        config: a Mem0 config dict (see `engine.compat.mem0_config`), or None for graphmem's
            defaults (environment, embedded store).
        memory: a graphmem `Memory` to use instead of building one from `config` (`close`
            then leaves it open: its owner closes it).
    """

    def __init__(
        self, config: Mapping[str, Any] | None = None, *, memory: GraphMemory | None = None
    ) -> None:
        self.graph = memory or GraphMemory(settings_of(config or {}))
        self._owns_graph = memory is None
        self._reads = Reads(self.graph)

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Build from Mem0's config keys: llm, embedder, graph_store (Neo4j)."""
        return cls(config_dict)

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- writing --------------------------------------------------------------------------

    def add(
        self,
        messages: Any,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        timestamp: Any = None,
        **unsupported: Any,
    ) -> dict[str, Any]:
        """Extract memories from `messages` (a string, a message dict, or a list of them);
        `timestamp` (Mem0 Platform's epoch seconds, or any time graphmem reads) dates them.

        Raises:
            InvalidInputError: `infer=False`, an argument Mem0 has and graphmem not (named by
                `check_add_args`), no id, a `timestamp` that is no time, no usable message.
            ExtractionError: the LLM failed for good (as Mem0's `add` raises): the messages are
                kept as failed episodes and dead letters; adding them again retries them.
        """
        check_add_args(infer, unsupported)
        if metadata is not None and not isinstance(metadata, Mapping):
            raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
        scope = scope_of(user_id, agent_id, run_id)
        meta = {**(metadata or {}), **({"agent_id": agent_id} if agent_id else {})}
        when = parse_time(timestamp, "timestamp")
        result = self.graph.add(
            messages,
            scope.user,
            session_id=run_id,
            metadata=meta or None,
            ts=when,
            user_name=scope.owner_name,
        )
        if result.extraction_error is not None:
            raise ExtractionError(_NOT_EXTRACTED.format(error=result.extraction_error))
        for error in result.errors:  # messages left out, facts dropped: Mem0 has no field
            log.warning("graphmem: add: %s", error)
        return self._reads.added(scope, result, Origin(metadata or None, agent_id, run_id))

    def update(
        self,
        memory_id: str,
        data: str,
        metadata: Mapping[str, Any] | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Give a memory a new text (re-embedded; an UPDATE event in its history).

        Raises:
            InvalidInputError: `metadata` (kept with the messages, not on a memory).
            NotFoundError: no such memory (in the scope, when one is given).
        """
        check_update_metadata(metadata)
        fact, scope = self._reads.resolve(memory_id, scope_or_none(user_id, agent_id, run_id))
        text = clean_text(data, "data", self.graph.settings.max_text_chars)
        now = time.time()
        uid = fact.uid
        batch = WriteBatch(
            fact_texts={uid: text},
            fact_embeddings={uid: as_param(self.graph.embedder.encode([text])[0])},
            history=[
                HistoryRow(stable_uid(uid, "UPDATE", repr(now)), uid, "UPDATE", now, None, text)
            ],
        )
        self.graph.store.write(scope.user, batch)
        return {"message": "Memory updated successfully!"}

    # -- reading --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int | None = None,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
        *,
        top_k: int | None = None,
        rerank: bool = True,
        explain: bool = False,
        reference_date: Any = None,
    ) -> dict[str, Any]:
        """Memories answering `query` in graphmem's ranking order, with their relations.

        Each result's `score` is the cosine similarity of the memory's sentence to the query,
        clipped to [0, 1]; `threshold` keeps the results scoring at least that much. `limit`
        (or `top_k`, Mem0's newer name) results at most, 100 by default. `rerank` is accepted
        and changes nothing: graphmem has no reranker to run (`engine.compat.mem0_args`).
        `unknown_names` (graphmem's own key) lists the names the query asks about that no
        memory of the user holds ("Bob" in "where does Bob live?").

        Raises:
            InvalidInputError: no id, a bad id, filter, `threshold` or count; `explain=True`
                or a `reference_date`, which graphmem cannot honour.
        """
        scope = scope_of(user_id, agent_id, run_id, filters)
        check_search_flags(rerank, explain, reference_date)
        floor, limit = check_threshold(threshold), count_of(limit, top_k)

        unknown: list[str] = []

        def ask(k: int) -> tuple[dict[str, float], list[tuple[Fact, Origin]], int]:
            result = self.graph.search(query, scope.user, k)
            found, unknown[:] = result.facts, result.unknown_names
            score = similarities(self.graph, scope.user, query, found)
            hits = [h.fact for h in found if floor is None or score[h.fact.uid] >= floor]
            return score, self._reads.admitted(scope, hits)[:limit], len(found)

        # a narrowed scope's memories may rank below the user's others
        first = limit * OVER_FETCH if scope.narrowed else limit
        score, kept, _ = widened(
            ask,
            lambda got, k: not scope.narrowed or len(got[1]) == limit or got[2] < k,
            first,
            MAX_LIMIT,
        )
        return {
            "results": [self._reads.item(f, scope, o, score[f.uid]) for f, o in kept],
            "relations": [relation(f, "destination") for f, _ in kept],
            "unknown_names": unknown,
        }

    def get_all(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int | None = None,
        *,
        top_k: int | None = None,
        page: int | None = None,
        page_size: int | None = None,
    ) -> dict[str, Any]:
        """The scope's first `limit` (or `top_k`) valid memories, oldest first (100 by
        default), with their relations.

        Raises:
            InvalidInputError: no id, a bad id or filter, a count not a positive integer;
                `page` or `page_size` (Mem0 Platform's pagination: ask for `limit`).
        """
        check_no_pages(page, page_size)
        scope = scope_of(user_id, agent_id, run_id, filters)
        kept = self._reads.listed(scope, count_of(limit, top_k))
        return {
            "results": [self._reads.item(f, scope, o) for f, o in kept],
            "relations": [relation(f, "target") for f, _ in kept],
        }

    def get(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, Any] | None:
        """One memory by id, or None when there is none (in the scope, when one is given):
        also for ids of other stores and of other users."""
        try:
            fact, scope = self._reads.resolve(memory_id, scope_or_none(user_id, agent_id, run_id))
        except NotFoundError:
            return None
        kept = self._reads.admitted(scope, [fact])
        return self._reads.item(fact, scope, kept[0][1] if kept else Origin.of(scope, None))

    def history(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> list[dict[str, Any]]:
        """The memory's changes, oldest first: ADD, UPDATE, DELETE (invalidated).

        Raises:
            NotFoundError: no such memory (in the scope, when one is given).
        """
        fact, scope = self._reads.resolve(memory_id, scope_or_none(user_id, agent_id, run_id))
        return history_items(
            self._reads.ids().of(fact.uid), self.graph.history(fact.uid, scope.user)
        )

    # -- deleting -------------------------------------------------------------------------

    def delete(
        self,
        memory_id: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Delete one memory.

        Raises:
            NotFoundError: no such memory (in the scope, when one is given).
        """
        fact, scope = self._reads.resolve(memory_id, scope_or_none(user_id, agent_id, run_id))
        self.graph.delete(fact.uid, scope.user)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete a whole graph: the user's (or the agent's or run's, when named alone).

        Raises:
            InvalidInputError: no id (every user's memories: `reset()`); `user_id` with an
                `agent_id` or `run_id`, or `agent_id` with `run_id` (each would delete more
                than asked); a bad id.
        """
        if user_id is None and agent_id is None and run_id is None:
            raise InvalidInputError(_DELETE_WHOM)
        if user_id is not None and (agent_id is not None or run_id is not None):
            raise InvalidInputError(
                "delete_all with user_id and agent_id/run_id: graphmem keeps one graph per "
                "user, so it would delete more than asked; call delete_all(user_id=...)"
            )
        if agent_id is not None and run_id is not None:
            raise InvalidInputError(
                "delete_all with agent_id and run_id: the agent's graph holds every run of it, "
                "so it would delete more than asked; call delete_all(agent_id=...), or delete "
                "the run's memories one by one (get_all(agent_id=..., run_id=...), delete)"
            )
        self.graph.delete_all(scope_of(user_id, agent_id, run_id).user)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete every user's memories (memory ids of facts added again stay the same)."""
        self.graph.reset()

    def chat(self, query: str, *args: Any, **kwargs: Any) -> NoReturn:
        """Mem0's `chat`, which Mem0 does not implement either.

        Raises:
            NotImplementedError: always, saying what to do instead.
        """
        raise NotImplementedError(_NO_CHAT)

    def close(self) -> None:
        """Close the graphmem memory when this facade built it."""
        if self._owns_graph:
            self.graph.close()
