"""Mem0's `Memory` API on graphmem: code written for Mem0 runs with one changed import.

    from engine.compat.mem0 import Memory      # instead of: from mem0 import Memory
    m = Memory()                               # or Memory.from_config({...Mem0's keys...})
    m.add("I like pizza", user_id="alice")
    m.search("what do I like?", user_id="alice")   # {"results": [...], "relations": [...]}

A Mem0 "memory" is a graphmem fact (its sentence is the memory text); `relations` are the
same facts as (source, relationship, destination) triples. A memory id is the fact's uid and
the user it belongs to (`<uid>@<user_id>`), so `get`, `update`, `delete` and `history` need no
user argument, as in Mem0, and still read one user's graph only. `agent_id` and `run_id` are
kept on the messages (metadata and session) and narrow `search` and `get_all` to the facts
those messages gave. Differences: docs/migrate_from_mem0.md.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from engine.compat.mem0_config import settings_from_mem0
from engine.config import Settings
from engine.embedding import as_param
from engine.errors import ConfigError, InvalidInputError, NotFoundError
from engine.memory import Memory as GraphMemory
from engine.models import Episode, Fact, HistoryEvent
from engine.normalize import check_user_id, clean_text, stable_uid
from engine.store.base import HistoryRow, WriteBatch

__all__ = ["Memory"]
_EVENTS = {"INVALIDATE": "DELETE", "MERGE": "UPDATE"}
_SCOPE_KEYS = ("user_id", "agent_id", "run_id")


@dataclass(frozen=True)
class Scope:
    """Whose graph (`user`) and which of its messages (`agent_id`, `run_id`) a call reads."""

    user: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None

    @property
    def narrowed(self) -> bool:
        return self.agent_id is not None or self.run_id is not None

    def admits(self, episodes: list[Episode]) -> bool:
        return not self.narrowed or any(
            (self.agent_id is None or e.metadata.get("agent_id") == self.agent_id)
            and (self.run_id is None or e.session_id == self.run_id)
            for e in episodes
        )


def scope_of(
    user_id: str | None, agent_id: str | None, run_id: str | None, filters: Any = None
) -> Scope:
    """The scope of a call; `filters` may carry the ids too (Mem0's newer call shape).

    Raises:
        InvalidInputError: no id at all, an unusable id, or a filter graphmem cannot apply.
    """
    ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    if filters:
        if not isinstance(filters, Mapping) or set(filters) - set(_SCOPE_KEYS):
            raise InvalidInputError(
                f"filters may name only user_id, agent_id and run_id, got {filters!r}"
            )
        ids |= {k: v for k, v in filters.items() if ids.get(k) is None}
    for key, value in ids.items():
        if value is not None:
            check_user_id(value) if key == "user_id" else clean_text(value, key, 256)
    if ids["user_id"] is not None:
        user = ids["user_id"]
    elif ids["agent_id"] is not None:
        user = f"agent:{ids['agent_id']}"
    elif ids["run_id"] is not None:
        user = f"run:{ids['run_id']}"
    else:
        raise InvalidInputError("at least one of user_id, agent_id or run_id is required")
    return Scope(check_user_id(user), ids["user_id"], ids["agent_id"], ids["run_id"])


def memory_id(fact: Fact) -> str:
    return f"{fact.uid}@{fact.user_id}"


def parse_memory_id(value: object) -> tuple[str, str]:
    """(fact uid, user id) of a memory id made by `memory_id`."""
    text = clean_text(value, "memory_id", 600)
    uid, sep, user = text.partition("@")
    if not sep or len(uid) != 32 or not user:
        raise InvalidInputError(f"{text!r} is not a memory id of this store (<uid>@<user_id>)")
    return uid, check_user_id(user)


def _settings(config: Mapping[str, Any]) -> Settings:
    try:
        return Settings(**settings_from_mem0(config))
    except ValidationError as exc:
        raise ConfigError(f"invalid settings from the Mem0 config: {exc}") from exc


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _relation(fact: Fact, end: str) -> dict[str, str]:
    return {"source": fact.subject, "relationship": fact.predicate.lower(), end: fact.object}


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

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> Memory:
        """Build from Mem0's config keys: llm, embedder, graph_store (Neo4j)."""
        return cls(config_dict)

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

    def update(self, memory_id: str, data: str) -> dict[str, str]:
        """Give a memory a new text (re-embedded; an UPDATE event in its history)."""
        uid, user = parse_memory_id(memory_id)
        text = clean_text(data, "data", self.graph.settings.max_text_chars)
        self._fact(uid, user)
        now = time.time()
        batch = WriteBatch(
            fact_texts={uid: text},
            fact_embeddings={uid: as_param(self.graph.embedder.encode([text])[0])},
            history=[
                HistoryRow(stable_uid(uid, "UPDATE", repr(now)), uid, "UPDATE", now, None, text)
            ],
        )
        self.graph.store.write(user, batch)
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
        """Memories answering `query`, best first, with their relations."""
        scope = scope_of(user_id, agent_id, run_id, filters)
        asked = min(1000, limit * 4 if scope.narrowed else limit)
        found = self.graph.search(query, scope.user, asked)
        hits = [h for h in found.facts if threshold is None or h.score >= threshold]
        kept = self._admitted(scope, [h.fact for h in hits])[:limit]
        score = {h.fact.uid: h.score for h in hits}
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

    def get(self, memory_id: str) -> dict[str, Any] | None:
        """One memory by id, or None when there is none (also for ids of other stores)."""
        if not isinstance(memory_id, str):
            raise InvalidInputError(f"memory_id must be a string, got {memory_id!r}")
        try:
            uid, user = parse_memory_id(memory_id)
            fact = self._fact(uid, user)
        except (NotFoundError, InvalidInputError):
            return None
        scope = Scope(user, user, None, None)
        ((_, meta),) = self._admitted(scope, [fact])
        return self._item(fact, scope, meta)

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """The memory's changes, oldest first: ADD, UPDATE, DELETE (invalidated)."""
        uid, user = parse_memory_id(memory_id)
        events = self.graph.history(uid, user)
        out, previous = [], None
        for event in events:
            out.append(self._event(memory_id, event, previous))
            previous = event.detail if event.event != "INVALIDATE" else previous
        return out

    # -- deleting -------------------------------------------------------------------------

    def delete(self, memory_id: str) -> dict[str, str]:
        uid, user = parse_memory_id(memory_id)
        self.graph.delete(uid, user)
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
        """Delete every user's memories."""
        self.graph.reset()

    def close(self) -> None:
        self.graph.close()

    # -- mapping --------------------------------------------------------------------------

    def _fact(self, uid: str, user: str) -> Fact:
        self.graph.history(uid, user)  # validates and sets the store up
        found = self.graph.reads.facts_by_uids(user, [uid])
        if not found:
            raise NotFoundError(f"no memory {uid}@{user}")
        return found[0]

    def _admitted(
        self, scope: Scope, facts: list[Fact]
    ) -> list[tuple[Fact, dict[str, Any] | None]]:
        """The facts whose messages fall in `scope`, each with its first message's metadata."""
        wanted = sorted({uid for f in facts for uid in f.episodes})
        episodes = {e.uid: e for e in self.graph.reads.episodes_by_uids(scope.user, wanted)}
        kept = []
        for fact in facts:
            own = [episodes[u] for u in fact.episodes if u in episodes]
            if scope.admits(own):
                kept.append((fact, next((e.metadata for e in own if e.metadata), None)))
        return kept

    def _item(
        self, fact: Fact, scope: Scope, meta: Mapping[str, Any] | None, score: float | None = None
    ) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": memory_id(fact),
            "memory": fact.text,
            "hash": hashlib.md5(fact.text.encode("utf-8"), usedforsecurity=False).hexdigest(),
            "metadata": dict(meta) if meta else None,
            "created_at": _iso(fact.first_seen),
            "updated_at": _iso(fact.last_seen),
            "user_id": scope.user_id if scope.user_id is not None else fact.user_id,
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
