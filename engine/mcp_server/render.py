"""A search result as text for an LLM: the one place that decides how memory reads in a prompt."""

from __future__ import annotations

import json
from datetime import datetime

from engine.models import ScoredEpisode, ScoredFact, SearchResult
from engine.prompt_block import UNDATED, nothing_about, said_day

_SNIPPET_CHARS = 300


def _day(value: datetime | None) -> str | None:
    return value.date().isoformat() if value is not None else None


def _fact_line(rank: int, hit: ScoredFact) -> str:
    fact = hit.fact
    notes = [f"id {fact.uid}"]
    if fact.valid_at is not None:  # as precisely as known: "since 2025" for "last year"
        notes.append(f"since {said_day(fact.valid_at, fact.valid_unit)}")
    if fact.invalid_at is not None:
        notes.append(f"no longer true since {_day(fact.invalid_at)}")
    return f"{rank}. {fact.text}  ({', '.join(notes)})"


def quoted(text: str, limit: int = _SNIPPET_CHARS) -> str:
    """A message as one quoted line of at most about `limit` characters: its layout folded and
    its quotes escaped, so that what a message says cannot pass for the lines around it (a
    fact with an id, another message)."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 3].rstrip() + "..."
    return json.dumps(flat, ensure_ascii=False)


def _episode_line(scored: ScoredEpisode) -> str:
    """One message behind the answer: when, in which session, who said what."""
    said = scored.episode
    where = [said.ts.strftime("%Y-%m-%d %H:%M") if said.ts else UNDATED]
    if said.session_id:
        where.append(f"session {said.session_id}")
    who = said.speaker or said.role
    return f"- [{', '.join(where)}] {who}: {quoted(said.text)}  (message id {said.uid})"


def render_search(result: SearchResult) -> str:
    """The facts (best first, with ids for `delete_memory`), the connections joining what the
    question names, the messages that say it and the entities involved. Says so plainly when
    nothing is known."""
    episodes = result.episodes
    if not (result.facts or result.paths or episodes):
        return f"No memory of user {result.user_id!r} matches {result.query!r}."
    lines = [f"Memory of user {result.user_id!r} for {result.query!r}:"]
    if result.unknown_names:
        lines.append(nothing_about(result.unknown_names, others_follow=True))
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
