"""The MCP tools as plain functions over a `Memory`: each returns text for the model and the
same answer as structured data. No MCP types here, so they are tested like any function.

Each takes the user it acts for as already decided by `engine.mcp_server.access.act_for`
(the server wires every tool through it); arguments are named as in the Python API.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from engine.cli.verbs import plural
from engine.errors import InvalidInputError
from engine.knowledge import EntityView
from engine.mcp_server.export_page import export_page
from engine.mcp_server.render import quoted, render_search
from engine.mcp_server.tool_errors import extraction_failure
from engine.memory import Memory
from engine.memory.held import held_history
from engine.models import AddResult, FactInput, ScoredEntity, UserSummary
from engine.prompt_block import block_or_why, said_day
from engine.times import parse_time

RankBy = Literal["salience", "frequency", "recency"]
_log = logging.getLogger("graphmem.mcp")


class ToolOutput(NamedTuple):
    text: str
    data: dict[str, Any]


class ContentPartIn(BaseModel):
    """One part of a message's content in OpenAI's format (`engine.ingest.content_parts`)."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="text, read; image_url, input_audio or file, left out")
    text: str | None = Field(default=None, description="a text part's text")


class MessageIn(BaseModel):
    """One chat message as an MCP host sends it."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(
        default="user",
        description="user, assistant, system, developer, tool or function (a name goes in name)",
    )
    content: str | list[ContentPartIn] = Field(
        description="the message text, or OpenAI content parts (their text is read)"
    )
    name: str | None = Field(default=None, description="who wrote it, when not the user")


class FactIn(BaseModel):
    """A fact the host already knows: subject, predicate, object."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(description="who or what the fact is about, e.g. 'Alice'")
    predicate: str = Field(description="the relation, e.g. 'works at' or WORKS_AT")
    object: str = Field(description="the other side, e.g. 'Acme'")
    text: str | None = Field(default=None, description="the fact as a sentence (optional)")
    subject_type: str | None = Field(
        default=None, description="e.g. person, stored as the label Person (optional)"
    )
    object_type: str | None = Field(
        default=None, description="e.g. sports team, stored as the label SportsTeam (optional)"
    )


def _messages(messages: str | list[MessageIn]) -> str | list[dict[str, Any]]:
    if isinstance(messages, str):
        return messages
    return [item.model_dump(exclude_none=True) for item in messages]


def _added_text(result: AddResult, what: str) -> str:
    parts = [
        f"Stored {what} for user {result.user_id!r}: {result.facts_added} new facts, "
        f"{result.facts_updated} confirmed, {result.facts_invalidated} invalidated, "
        f"{result.entities_added} new entities."
    ]
    if result.episodes_skipped:
        parts.append(f"{result.episodes_skipped} messages were already stored.")
    parts += [f"Note: {error}" for error in result.errors]
    return " ".join(parts)


def add_memory(
    memory: Memory,
    user_id: str,
    messages: str | list[MessageIn],
    *,
    session_id: str | None = None,
    speaker: str | None = None,
    ts: str | float | None = None,
    metadata: dict[str, Any] | None = None,
) -> ToolOutput:
    """`Memory.add`, its `metadata` checked by the same rules (a JSON object of at most
    `max_message_chars` as JSON: `engine.add.messages.metadata_json`)."""
    result = memory.add(
        _messages(messages),
        user_id,
        session_id=session_id,
        metadata=metadata,
        source="mcp",
        speaker=speaker,
        ts=parse_time(ts, "ts"),
    )
    count = 1 if isinstance(messages, str) else len(messages)
    result = _result_for_caller(result)
    return ToolOutput(_added_text(result, f"{count} message(s)"), result.model_dump(mode="json"))


def _result_for_caller(result: AddResult) -> AddResult:
    """`result` with its extraction failure in the caller's terms (`extraction_failure`); the
    fault itself, which names the LLM's address, is logged for the operator."""
    fault = result.extraction_error
    if fault is None:
        return result
    _log.warning("add_memory: extraction failed: %s", " ".join(fault.splitlines()))
    said = extraction_failure(fault)
    note = f"{said}; the messages are kept, marked failed"
    errors = [note if fault in error else error for error in result.errors]
    return result.model_copy(update={"extraction_error": said, "errors": errors})


def _fact_input(fact: FactIn | list[str]) -> FactInput:
    if isinstance(fact, FactIn):
        return FactInput(**fact.model_dump())
    if len(fact) not in (3, 4):
        raise InvalidInputError(
            f"a fact given as an array is [subject, predicate, object] or [subject, predicate, "
            f"object, text]; got {len(fact)} items"
        )
    subject, predicate, object_ = fact[:3]
    return FactInput(subject=subject, predicate=predicate, object=object_,
                     text=fact[3] if len(fact) == 4 else None)  # fmt: skip


def add_facts(memory: Memory, user_id: str, facts: list[FactIn | list[str]]) -> ToolOutput:
    if not facts:
        raise InvalidInputError("facts is empty: give at least one {subject, predicate, object}")
    inputs = [_fact_input(fact) for fact in facts]
    result = memory.add_facts(inputs, user_id)
    stored = len(set(result.fact_uids))  # a fact repeated in the call is stored once
    what = f"{stored} fact(s)" + (
        f" ({len(facts)} given, a repeated fact counted once)" if stored < len(facts) else ""
    )
    return ToolOutput(_added_text(result, what), result.model_dump(mode="json"))


def search_memory(
    memory: Memory,
    user_id: str,
    query: str,
    limit: int = 10,
    *,
    since: str | float | None = None,
    until: str | float | None = None,
    filters: dict[str, Any] | None = None,
    max_tokens: int | None = None,
    as_of: str | float | None = None,
    near: list[str] | None = None,
) -> ToolOutput:
    """The ranked lists, or with `max_tokens` the prompt block `SearchResult.context` packs."""
    start, end = parse_time(since, "since"), parse_time(until, "until")
    at = parse_time(as_of, "as_of")
    result = memory.search(
        query, user_id, limit, since=start, until=end, filters=filters, max_tokens=max_tokens,
        as_of=at, near=near,
    )  # fmt: skip
    found = result.facts or result.episodes or result.paths
    if max_tokens is None or not found:
        return ToolOutput(render_search(result), result.model_dump(mode="json"))
    counts = (len(result.facts), len(result.episodes))
    asked = f"user {result.user_id!r} for {result.query!r}"
    text = block_or_why(result.context(max_tokens), max_tokens, counts, asked)
    return ToolOutput(text, result.model_dump(mode="json"))


def _error_for_caller(error: str | None) -> str | None:
    """A failed message's extraction fault in the caller's terms (`extraction_failure`)."""
    return None if error is None else extraction_failure(error)


def _entity_text(view: EntityView) -> str:
    entity = view.entity
    head = f"{entity.name}" + (f" ({entity.type})" if entity.type else "")
    seen = entity.last_seen.date().isoformat() if entity.last_seen else "never"
    lines = [f"{head}, id {entity.uid}: {plural(entity.mentions, 'mention')}, last seen {seen}"]
    if entity.aliases:
        lines.append("Also called: " + ", ".join(entity.aliases))
    lines.append("Facts:" if view.facts else "No facts.")
    lines += [
        f"- {f.text}  (id {f.uid}{', no longer true' if f.invalid_at else ''})" for f in view.facts
    ]
    if view.episodes:
        lines.append("Messages that mention it, newest first:")
        lines += [f"- [{said_day(e.ts)}] {e.role}: {quoted(e.content, 200)}" for e in view.episodes]
    return "\n".join(lines)


def get_entity(
    memory: Memory,
    user_id: str,
    name: str,
    limit: int = 50,
    *,
    since: str | float | None = None,
    until: str | float | None = None,
) -> ToolOutput:
    start, end = parse_time(since, "since"), parse_time(until, "until")
    view = memory.entity(name, user_id, limit=limit, since=start, until=end)
    said = [e.model_copy(update={"error": _error_for_caller(e.error)}) for e in view.episodes]
    view = view.model_copy(update={"episodes": said})
    return ToolOutput(_entity_text(view), view.model_dump(mode="json"))


def _ranked_line(rank: int, scored: ScoredEntity) -> str:
    """`3. Berlin (Place): 2 mentions`, one line of `list_entities`."""
    entity = scored.entity
    kind = f" ({entity.type})" if entity.type else ""
    return f"{rank}. {entity.name}{kind}: {plural(entity.mentions, 'mention')}"


def list_entities(
    memory: Memory, user_id: str, limit: int = 20, by: RankBy = "salience"
) -> ToolOutput:
    if not 1 <= limit <= 1000:
        raise InvalidInputError(f"limit must be between 1 and 1000, got {limit}")
    top = memory.top_entities(user_id, limit, by=by)
    lines = [_ranked_line(i, s) for i, s in enumerate(top, start=1)]
    text = (
        "\n".join([f"Entities of user {user_id!r} by {by}:", *lines])
        if top
        else (f"User {user_id!r} has no entities yet.")
    )
    return ToolOutput(text, {"entities": [s.model_dump(mode="json") for s in top]})


def delete_memory(
    memory: Memory, user_id: str, fact_id: str, *, with_messages: bool = False
) -> ToolOutput:
    if not with_messages:
        memory.delete(fact_id, user_id)
        return ToolOutput(
            f"Deleted fact {fact_id} of user {user_id!r}.",
            {"deleted": fact_id, "user_id": user_id},
        )
    gone = memory.forget(fact_id, user_id)
    return ToolOutput(
        f"Deleted fact {fact_id} of user {user_id!r} with the {len(gone.episodes)} message(s) "
        f"it came from.",
        {"deleted": fact_id, "user_id": user_id, **gone.model_dump()},
    )


def update_memory(
    memory: Memory,
    user_id: str,
    fact_id: str,
    *,
    text: str | None = None,
    valid_at: str | float | None = None,
    invalid_at: str | float | None = None,
) -> ToolOutput:
    fact = memory.update(
        fact_id, user_id, text=text,
        valid_at=parse_time(valid_at, "valid_at"), invalid_at=parse_time(invalid_at, "invalid_at"),
    )  # fmt: skip
    ends = " (no longer true)" if fact.invalid_at else ""
    return ToolOutput(f"Updated fact {fact.uid}: {fact.text}{ends}", fact.model_dump(mode="json"))


def memory_history(memory: Memory, user_id: str, fact_id: str) -> ToolOutput:
    """The change events of a fact or entity of the user, oldest first.

    Raises:
        NotFoundError: the user has no fact or entity of that id.
    """
    events = held_history(memory, fact_id, user_id)
    lines = [f"{e.ts:%Y-%m-%d %H:%M} {e.event} {e.detail or ''}".rstrip() for e in events]
    text = "\n".join(lines) or f"No change of {fact_id} of user {user_id!r} is recorded."
    return ToolOutput(text, {"events": [e.model_dump(mode="json") for e in events]})


def delete_message(memory: Memory, user_id: str, message_id: str) -> ToolOutput:
    gone = memory.delete_episode(message_id, user_id)
    return ToolOutput(
        f"Deleted message {message_id} of user {user_id!r}.",
        {"user_id": user_id, **gone.model_dump()},
    )


def list_users(memory: Memory, binding: str | None) -> ToolOutput:
    """Every user on an any-user connection; on a bound one, its own user only, counted
    alone (`Memory.stats`: not a count of every user of the store)."""
    users = memory.users() if binding is None else _own_summary(memory, binding)
    lines = [
        f"{u.user_id}: {u.valid_facts} facts, {u.entities} entities, {u.episodes} messages"
        for u in users
    ]
    return ToolOutput(
        "\n".join(lines) or "No users yet.", {"users": [u.model_dump() for u in users]}
    )


def _own_summary(memory: Memory, user_id: str) -> list[UserSummary]:
    """The bound user's summary, as `Memory.users` lists it (none when they hold nothing)."""
    stats = memory.stats(user_id)
    if not (stats.entities or stats.facts or stats.episodes):
        return []
    counts = stats.model_dump(include={"entities", "facts", "valid_facts", "episodes"})
    return [UserSummary(user_id=user_id, **counts)]


def export_graph(
    memory: Memory, user_id: str, limit: int = 100, cursor: str | None = None
) -> ToolOutput:
    page = export_page(memory.store, user_id, limit, cursor)
    for episode in page.episodes:
        episode["error"] = _error_for_caller(episode.get("error"))
    data = page.model_dump(mode="json")
    return ToolOutput(json.dumps(data, ensure_ascii=False), data)
