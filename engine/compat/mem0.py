"""Mem0's `Memory` API on graphmem: code written for Mem0 runs with one changed import.

    from engine.compat.mem0 import Memory      # instead of: from mem0 import Memory
    m = Memory()                               # or Memory.from_config({...Mem0's keys...})
    m.add("I like pizza", user_id="alice")
    m.search("what do I like?", user_id="alice")   # {"results": [...], "relations": [...]}

A Mem0 "memory" is a graphmem fact (its sentence is the memory text); `relations` are the
same facts as (source, relationship, destination) triples. A memory id is UUID-shaped, as
Mem0's: a keyed permutation of the fact's uid under a secret of the store
(`engine.compat.mem0_ids`), so it names no user, cannot be computed from a fact, and is the
same in every process. `get`, `update`, `delete` and `history` take the id alone, as in Mem0,
or with the caller's scope (`user_id=`, `agent_id=`, `run_id=`), which the memory must then be
in; an id outside it is "not found", exactly like a random one. `agent_id`, `run_id` and
metadata `filters` narrow `search` and `get_all` to the facts whose messages match.
Differences: docs/migrate_from_mem0.md.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from datetime import datetime
from types import TracebackType
from typing import Any

import numpy as np
from pydantic import ValidationError

from engine.compat.mem0_config import settings_from_mem0
from engine.compat.mem0_ids import MemoryIds, parse, store_key
from engine.compat.mem0_scope import Scope, owner_scope, scope_of
from engine.config import Settings
from engine.embedding import as_param
from engine.errors import ConfigError, InvalidInputError, NotFoundError
from engine.memory import Memory as GraphMemory
from engine.models import Fact, HistoryEvent, ScoredFact
from engine.normalize import clean_text, stable_uid
from engine.store.base import HistoryRow, WriteBatch

__all__ = ["Memory"]
_EVENTS = {"INVALIDATE": "DELETE", "MERGE": "UPDATE"}
_LEGACY_ID = (
    "{id!r} is a memory id of an earlier graphmem (<uid>@<user>), which anyone could compute; "
    "pass the scope it belongs to (user_id=, agent_id= or run_id=) to use it, and keep the "
    "new id the result carries (get_all also lists them)"
)


def _settings(config: Mapping[str, Any]) -> Settings:
    try:
        return Settings(**settings_from_mem0(config))
    except ValidationError as exc:
        raise ConfigError(f"invalid settings from the Mem0 config: {exc}") from exc


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _relation(fact: Fact, end: str) -> dict[str, str]:
    return {"source": fact.subject, "relationship": fact.predicate.lower(), end: fact.object}


def _missing(memory_id: str) -> NotFoundError:
    return NotFoundError(f"no memory {memory_id!r}")


def _threshold(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InvalidInputError(f"threshold must be a number from 0 to 1, got {value!r}")
    return float(value)


def _scope_or_none(user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope | None:
    if user_id is None and agent_id is None and run_id is None:
        return None
    return scope_of(user_id, agent_id, run_id)


class Memory:
    """Mem0's `Memory` (open-source API, v1 call shapes) on a graphmem store.

    Args:
        config: a Mem0 config dict (see `engine.compat.mem0_config`), or None for graphmem's
            defaults (environment, embedded store).
        memory: a graphmem `Memory` to use instead of building one from `config`.
    """

    def __init__(
        self, config: Mapping[str, Any] | None = None, *, memory: GraphMemory | None = None
    ) -> None:
        self.graph = memory or GraphMemory(_settings(config or {}))
        self._ids: MemoryIds | None = None

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
        **unsupported: Any,
    ) -> dict[str, Any]:
        """Extract memories from `messages` (a string, a message dict, or a list of them)."""
        if not infer:
            raise InvalidInputError(
                "infer=False is not supported: graphmem keeps every message as an episode and "
                "always extracts facts from it"
            )
        if unsupported:
            raise InvalidInputError(f"unsupported arguments: {', '.join(sorted(unsupported))}")
        scope = scope_of(user_id, agent_id, run_id)
        meta = {**(metadata or {}), **({"agent_id": agent_id} if agent_id else {})}
        result = self.graph.add(messages, scope.user, session_id=run_id, metadata=meta or None)
        invalid = set(result.invalidated_uids)
        facts = self.graph.reads.facts_by_uids(
            scope.user, list(dict.fromkeys(result.fact_uids + result.invalidated_uids))
        )
        items = []
        for fact in facts:
            event = "DELETE" if fact.uid in invalid else "ADD"
            if event == "ADD" and fact.first_seen != fact.last_seen:
                event = "UPDATE"
            items.append({**self._item(fact, scope, meta or None), "event": event})
        added = [_relation(f, "target") for f in facts if f.uid not in invalid]
        deleted = [_relation(f, "target") for f in facts if f.uid in invalid]
        return {
            "results": items,
            "relations": {"added_entities": added, "deleted_entities": deleted},
        }

    def update(
        self,
        memory_id: str,
        data: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> dict[str, str]:
        """Give a memory a new text (re-embedded; an UPDATE event in its history).

        Raises:
            NotFoundError: no such memory (in the scope, when one is given).
        """
        fact, scope = self._resolve(memory_id, _scope_or_none(user_id, agent_id, run_id))
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
        limit: int = 100,
        filters: Mapping[str, Any] | None = None,
        threshold: float | None = None,
    ) -> dict[str, Any]:
        """Memories answering `query` in graphmem's ranking order, with their relations.

        Each result's `score` is the cosine similarity of the memory's sentence to the query,
        clipped to [0, 1]; `threshold` keeps the results scoring at least that much.
        """
        scope = scope_of(user_id, agent_id, run_id, filters)
        floor = _threshold(threshold)
        asked = min(1000, limit * 4 if scope.narrowed else limit)
        found = self.graph.search(query, scope.user, asked).facts
        score = self._similarities(scope.user, query, found)
        hits = [h.fact for h in found if floor is None or score[h.fact.uid] >= floor]
        kept = self._admitted(scope, hits)[:limit]
        return {
            "results": [self._item(f, scope, m, score[f.uid]) for f, m in kept],
            "relations": [_relation(f, "destination") for f, _ in kept],
        }

    def get_all(
        self,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        filters: Mapping[str, Any] | None = None,
        limit: int = 100,
    ) -> dict[str, Any]:
        """The scope's valid memories, oldest first, with their relations."""
        scope = scope_of(user_id, agent_id, run_id, filters)
        facts = self.graph.get_all(scope.user, limit=limit * 4 if scope.narrowed else limit)
        kept = self._admitted(scope, facts)[:limit]
        return {
            "results": [self._item(f, scope, m) for f, m in kept],
            "relations": [_relation(f, "target") for f, _ in kept],
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
            fact, scope = self._resolve(memory_id, _scope_or_none(user_id, agent_id, run_id))
        except NotFoundError:
            return None
        kept = self._admitted(scope, [fact])
        return self._item(fact, scope, kept[0][1] if kept else None)

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
        fact, scope = self._resolve(memory_id, _scope_or_none(user_id, agent_id, run_id))
        mid = self._memory_ids().of(fact.uid)
        out, previous = [], None
        for event in self.graph.history(fact.uid, scope.user):
            out.append(self._event(mid, event, previous))
            previous = event.detail if event.event != "INVALIDATE" else previous
        return out

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
        fact, scope = self._resolve(memory_id, _scope_or_none(user_id, agent_id, run_id))
        self.graph.delete(fact.uid, scope.user)
        return {"message": "Memory deleted successfully!"}

    def delete_all(
        self, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> dict[str, str]:
        """Delete a whole graph: the user's (or the agent's or run's, when named alone)."""
        if user_id is not None and (agent_id is not None or run_id is not None):
            raise InvalidInputError(
                "delete_all with user_id and agent_id/run_id: graphmem keeps one graph per "
                "user, so it would delete more than asked; call delete_all(user_id=...)"
            )
        self.graph.delete_all(scope_of(user_id, agent_id, run_id).user)
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Delete every user's memories (memory ids of facts added again stay the same)."""
        self.graph.reset()

    def close(self) -> None:
        self.graph.close()

    # -- ids ------------------------------------------------------------------------------

    def _memory_ids(self) -> MemoryIds:
        if self._ids is None:
            self.graph._setup()
            self._ids = MemoryIds(store_key(self.graph.store))
        return self._ids

    def _resolve(self, memory_id: str, scope: Scope | None) -> tuple[Fact, Scope]:
        """The fact a memory id names, and the scope to show it in.

        Raises:
            InvalidInputError: not a memory id; a legacy id given without a scope.
            NotFoundError: no such fact, or not in `scope`: the same error either way.
        """
        text, legacy_user = parse(memory_id)
        if legacy_user is not None:
            if scope is None:
                raise InvalidInputError(_LEGACY_ID.format(id=memory_id))
            if legacy_user != scope.user:
                raise _missing(memory_id)
            uid, user = text, scope.user
        else:
            uid = self._memory_ids().uid(text)
            user = scope.user if scope is not None else self._owner(uid, memory_id)
        found = self.graph.reads.facts_by_uids(user, [uid])
        if not found or (scope is not None and not self._admitted(scope, found)):
            raise _missing(memory_id)
        return found[0], scope or owner_scope(user)

    def _owner(self, uid: str, memory_id: str) -> str:
        rows = self.graph.store.run("find_fact_owners", {"uid": uid})
        if len(rows) != 1:
            raise _missing(memory_id)
        return str(rows[0][0])

    # -- mapping --------------------------------------------------------------------------

    def _similarities(self, user: str, query: str, hits: list[ScoredFact]) -> dict[str, float]:
        """Each hit's cosine similarity to `query`, clipped to [0, 1]."""
        if not hits:
            return {}
        text = clean_text(query, "query", self.graph.settings.max_message_chars)
        wanted = self.graph.embedder.encode([text])[0].astype(np.float64)
        uids = [h.fact.uid for h in hits]
        rows = self.graph.store.run("get_fact_embeddings", {"user_id": user, "uids": uids})
        out = dict.fromkeys(uids, 0.0)
        for uid, embedding in rows:
            vector = np.asarray(embedding, dtype=np.float64)
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                out[uid] = round(min(1.0, max(0.0, float(vector @ wanted) / norm)), 4)
        return out

    def _admitted(
        self, scope: Scope, facts: list[Fact]
    ) -> list[tuple[Fact, dict[str, Any] | None]]:
        """The facts whose messages fall in `scope`, each with the metadata of its first
        message in scope."""
        wanted = sorted({uid for f in facts for uid in f.episodes})
        episodes = {e.uid: e for e in self.graph.reads.episodes_by_uids(scope.user, wanted)}
        kept = []
        for fact in facts:
            own = [episodes[u] for u in fact.episodes if u in episodes]
            if scope.admits(own):
                inside = [e for e in own if scope.admits_episode(e)] or own
                kept.append((fact, next((e.metadata for e in inside if e.metadata), None)))
        return kept

    def _item(
        self, fact: Fact, scope: Scope, meta: Mapping[str, Any] | None, score: float | None = None
    ) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": self._memory_ids().of(fact.uid),
            "memory": fact.text,
            "hash": hashlib.md5(fact.text.encode("utf-8"), usedforsecurity=False).hexdigest(),
            "metadata": dict(meta) if meta else None,
            "created_at": _iso(fact.first_seen),
            "updated_at": _iso(fact.last_seen),
            "user_id": scope.user_id,
        }
        item |= {k: getattr(scope, k) for k in ("agent_id", "run_id") if getattr(scope, k)}
        if score is not None:
            item["score"] = score
        return item

    def _event(self, mid: str, event: HistoryEvent, previous: str | None) -> dict[str, Any]:
        return {
            "id": event.uid,
            "memory_id": mid,
            "old_memory": previous,
            "new_memory": event.detail if event.event != "INVALIDATE" else previous,
            "event": _EVENTS.get(event.event, event.event),
            "created_at": event.ts.isoformat(),
            "updated_at": None,
            "is_deleted": 0,
        }
