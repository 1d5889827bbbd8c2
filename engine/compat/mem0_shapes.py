"""The dictionaries Mem0's `Memory` returns, built from graphmem's facts and history events:
a memory item (with its `score` in a search), a relation triple and a history entry, in the
field names Mem0 users read."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from engine.compat.mem0_scope import Scope
from engine.memory import Memory
from engine.models import UNCHANGED_DETAILS, Episode, Fact, HistoryEvent, ScoredFact
from engine.normalize import clean_text

_EVENTS = {"INVALIDATE": "DELETE", "MERGE": "UPDATE"}


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _latest(*times: datetime | None) -> datetime | None:
    known = [t for t in times if t is not None]
    return max(known) if known else None


def relation(fact: Fact, end: str) -> dict[str, str]:
    """The fact as Mem0's graph triple; `end` names the object ("target" or "destination")."""
    return {"source": fact.subject, "relationship": fact.predicate.lower(), end: fact.object}


@dataclass(frozen=True)
class Origin:
    """Where a memory came from, as Mem0 shows it: the metadata of its message (without the
    agent, which the facade keeps there) and the agent and run ids."""

    metadata: Mapping[str, Any] | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, scope: Scope, episode: Episode | None) -> Origin:
        """The origin of a memory read in `scope`, from the message it came from."""
        meta = dict(episode.metadata) if episode is not None else {}
        agent = meta.pop("agent_id", None)
        run = episode.session_id if episode is not None else None
        agent = agent if isinstance(agent, str) else None
        return cls(meta or None, scope.agent_id or agent, scope.run_id or run)


def memory_item(
    memory_id: str, fact: Fact, scope: Scope, origin: Origin, score: float | None = None
) -> dict[str, Any]:
    """One memory as Mem0 returns it from `get`, `get_all`, `search` and `add`; one that is
    no longer true also has `invalid_at` (Mem0 deletes such a memory, graphmem keeps it)."""
    item: dict[str, Any] = {
        "id": memory_id,
        "memory": fact.text,
        "hash": hashlib.md5(fact.text.encode("utf-8"), usedforsecurity=False).hexdigest(),
        "metadata": dict(origin.metadata) if origin.metadata else None,
        "created_at": iso(fact.first_seen),
        "updated_at": iso(_latest(fact.last_seen, fact.updated_at)),
        "user_id": scope.user_id,
    }
    item |= {k: getattr(origin, k) for k in ("agent_id", "run_id") if getattr(origin, k)}
    if fact.invalid_at is not None:  # graphmem's own key: kept as history, not current
        item["invalid_at"] = iso(fact.invalid_at)
    if score is not None:
        item["score"] = score
    return item


def history_item(
    memory_id: str, event: HistoryEvent, previous: str | None, text: str | None
) -> dict[str, Any]:
    """One entry of Mem0's `history`: the memory's text before the event (`previous`) and
    after it (`text`). A contradicted memory's entry is Mem0's DELETE: no new text,
    `is_deleted` 1."""
    ended = event.event == "INVALIDATE"
    return {
        "id": event.uid,
        "memory_id": memory_id,
        "old_memory": previous,
        "new_memory": None if ended else text,
        "event": _EVENTS.get(event.event, event.event),
        "created_at": event.ts.isoformat(),
        "updated_at": None,
        "is_deleted": int(ended),
        "actor_id": None,  # Mem0's speaker name and role: a fact may come from several
        "role": None,
    }


def _text_after(event: HistoryEvent, text: str | None) -> str | None:
    """The memory's text after `event`: an ADD's or a new text's detail is the text; a repeat
    ("said again"), a merge and an invalidation leave it as it was (their detail is a note)."""
    if event.event in ("ADD", "UPDATE") and event.detail not in UNCHANGED_DETAILS:
        return event.detail
    return text


def history_items(memory_id: str, events: list[HistoryEvent]) -> list[dict[str, Any]]:
    """Mem0's `history` of one memory from its events, oldest first."""
    out, text = [], None
    for event in events:
        after = _text_after(event, text)
        out.append(history_item(memory_id, event, text, after))
        text = after
    return out


def similarities(graph: Memory, user: str, query: str, hits: list[ScoredFact]) -> dict[str, float]:
    """Each hit's cosine similarity to `query` (its `score`), clipped to [0, 1]."""
    if not hits:
        return {}
    text = clean_text(query, "query", graph.settings.max_message_chars)
    wanted = graph.embedder.encode([text])[0].astype(np.float64)
    uids = [h.fact.uid for h in hits]
    rows = graph.store.run("get_fact_embeddings", {"user_id": user, "uids": uids})
    out = dict.fromkeys(uids, 0.0)
    for uid, embedding in rows:
        vector = np.asarray(embedding, dtype=np.float64)
        norm = float(np.linalg.norm(vector))
        if norm > 0:
            out[uid] = round(min(1.0, max(0.0, float(vector @ wanted) / norm)), 4)
    return out
