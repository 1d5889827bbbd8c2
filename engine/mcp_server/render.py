"""A search result as text for an LLM: the one place that decides how memory reads in a prompt."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine.models import SearchResult

_SNIPPET_CHARS = 300


def _day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value is not None else None


def _fact_line(rank: int, hit: Any) -> str:
    fact = hit.fact
    notes = [f"id {fact.uid}"]
    since = _day(fact.valid_at)
    if since:
        notes.append(f"since {since}")
    if fact.invalid_at is not None:
        notes.append(f"no longer true since {_day(fact.invalid_at)}")
    return f"{rank}. {fact.text}  ({', '.join(notes)})"


def _episode_line(episode: Any) -> str:
    """One message that supports the answer; reads whatever of speaker, time, session and text
    the episode carries (attribute names as `SearchResult.episodes` defines them)."""
    speaker = getattr(episode, "speaker", None) or getattr(episode, "role", None) or "someone"
    when = getattr(episode, "time", None) or getattr(episode, "ts", None)
    session = getattr(episode, "session", None) or getattr(episode, "session_id", None)
    text = str(getattr(episode, "text", None) or getattr(episode, "content", "") or "")
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 3].rstrip() + "..."
    where = []
    if isinstance(when, datetime):
        where.append(when.strftime("%Y-%m-%d %H:%M"))
    if session:
        where.append(f"session {session}")
    head = f"[{', '.join(where)}] " if where else ""
    return f'- {head}{speaker}: "{text}"'


def render_search(result: SearchResult) -> str:
    """The facts (best first, with ids for `delete_memory`), the connections joining what the
    question names, the messages they came from (when the result carries episodes) and the
    entities involved. Says so plainly when nothing is known."""
    episodes = list(getattr(result, "episodes", None) or [])
    if not (result.facts or result.paths or episodes):
        return f"No memory of user {result.user_id!r} matches {result.query!r}."
    lines = [f"Memory of user {result.user_id!r} for {result.query!r}:"]
    if result.facts:
        lines.append("Facts, best first:")
        lines += [_fact_line(i, hit) for i, hit in enumerate(result.facts, start=1)]
    if result.paths:
        lines.append("Connections:")
        lines += ["- " + " -> ".join(f.text for f in path.facts) for path in result.paths]
    if episodes:
        lines.append("From the conversation:")
        lines += [_episode_line(e) for e in episodes]
    if result.entities:
        lines.append("Entities: " + ", ".join(se.entity.name for se in result.entities))
    return "\n".join(lines)
