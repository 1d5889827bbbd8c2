"""The MCP tools as plain functions over a `Memory`: each returns text for the model and the
same answer as structured data. No MCP types here, so they are tested like any function.

Every tool takes a `user_id`, or falls back to the server's default (`graphmem mcp --user`,
`GRAPHMEM_MCP_USER_ID`); it is validated exactly as the Python API validates it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from engine.errors import InvalidInputError
from engine.knowledge import EntityView
from engine.mcp_server.render import render_search
from engine.memory import Memory
from engine.models import AddResult, FactInput
from engine.normalize import check_user_id

ExportFormat = Literal["json", "cypher", "graphml"]
RankBy = Literal["salience", "frequency", "recency"]


class ToolOutput(NamedTuple):
    text: str
    data: dict[str, Any]


class MessageIn(BaseModel):
    """One chat message as an MCP host sends it."""

    model_config = ConfigDict(extra="forbid")

    role: str = Field(default="user", description="user, assistant, system or tool")
    content: str = Field(description="the message text")
    name: str | None = Field(default=None, description="who wrote it, when not the user")


class FactIn(BaseModel):
    """A fact the host already knows: subject, predicate, object."""

    model_config = ConfigDict(extra="forbid")

    subject: str = Field(description="who or what the fact is about, e.g. 'Alice'")
    predicate: str = Field(description="the relation, e.g. 'works at' or WORKS_AT")
    object: str = Field(description="the other side, e.g. 'Acme'")
    text: str | None = Field(default=None, description="the fact as a sentence (optional)")
    subject_type: str | None = Field(default=None, description="e.g. person (optional)")
    object_type: str | None = Field(default=None, description="e.g. organization (optional)")


def resolve_user(user_id: str | None, default: str | None) -> str:
    """The user a call acts for: its own `user_id`, else the server's default.

    Raises:
        InvalidInputError: neither is given, or the id is not usable (see `check_user_id`).
    """
    chosen = user_id if user_id is not None else default
    if chosen is None:
        raise InvalidInputError(
            "user_id is required: pass it, or start the server with --user "
            "(GRAPHMEM_MCP_USER_ID) to set a default"
        )
    return check_user_id(chosen)


def parse_time(value: str | float | None) -> datetime | float | None:
    """An ISO 8601 time ("2024-05-01T09:30:00+02:00"; UTC when no offset) or epoch seconds."""
    if value is None or isinstance(value, int | float):
        return value
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise InvalidInputError(
            f"time {value!r} is not ISO 8601 (e.g. 2024-05-01T09:30:00Z) or epoch seconds"
        ) from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


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
    time: str | float | None = None,
) -> ToolOutput:
    result = memory.add(
        _messages(messages),
        user_id,
        session_id=session_id,
        source="mcp",
        speaker=speaker,
        ts=parse_time(time),
    )
    count = 1 if isinstance(messages, str) else len(messages)
    return ToolOutput(_added_text(result, f"{count} message(s)"), result.model_dump(mode="json"))


def add_facts(memory: Memory, user_id: str, facts: list[FactIn]) -> ToolOutput:
    if not facts:
        raise InvalidInputError("facts is empty: give at least one {subject, predicate, object}")
    inputs = [FactInput(**fact.model_dump()) for fact in facts]
    result = memory.add_facts(inputs, user_id)
    return ToolOutput(_added_text(result, f"{len(facts)} fact(s)"), result.model_dump(mode="json"))


def search_memory(memory: Memory, user_id: str, query: str, limit: int = 10) -> ToolOutput:
    result = memory.search(query, user_id, limit)
    return ToolOutput(render_search(result), result.model_dump(mode="json"))


def _entity_text(view: EntityView) -> str:
    entity = view.entity
    head = f"{entity.name}" + (f" ({entity.type})" if entity.type else "")
    seen = entity.last_seen.date().isoformat() if entity.last_seen else "never"
    lines = [f"{head}: {entity.mentions} mentions, last seen {seen}"]
    if entity.aliases:
        lines.append("Also called: " + ", ".join(entity.aliases))
    lines.append("Facts:" if view.facts else "No facts.")
    lines += [
        f"- {f.text}  (id {f.uid}{', no longer true' if f.invalid_at else ''})" for f in view.facts
    ]
    if view.episodes:
        lines.append("Messages that mention it, newest first:")
        lines += [f"- [{e.ts:%Y-%m-%d}] {e.role}: {e.content[:200]}" for e in view.episodes]
    return "\n".join(lines)


def get_entity(memory: Memory, user_id: str, name: str, limit: int = 50) -> ToolOutput:
    view = memory.entity(name, user_id, limit=limit)
    return ToolOutput(_entity_text(view), view.model_dump(mode="json"))


def list_entities(
    memory: Memory, user_id: str, limit: int = 20, by: RankBy = "salience"
) -> ToolOutput:
    if not 1 <= limit <= 1000:
        raise InvalidInputError(f"limit must be between 1 and 1000, got {limit}")
    top = memory.top_entities(user_id, limit, by=by)
    lines = [
        f"{i}. {s.entity.name}" + (f" ({s.entity.type})" if s.entity.type else "")
        + f": {s.entity.mentions} mentions"
        for i, s in enumerate(top, start=1)
    ]  # fmt: skip
    text = (
        "\n".join([f"Entities of user {user_id!r} by {by}:", *lines])
        if top
        else (f"User {user_id!r} has no entities yet.")
    )
    return ToolOutput(text, {"entities": [s.model_dump(mode="json") for s in top]})


def delete_memory(memory: Memory, user_id: str, fact_id: str) -> ToolOutput:
    memory.delete(fact_id, user_id)
    return ToolOutput(
        f"Deleted fact {fact_id} of user {user_id!r}.", {"deleted": fact_id, "user_id": user_id}
    )


def export_graph(memory: Memory, user_id: str, format: ExportFormat = "json") -> ToolOutput:
    text = memory.export(user_id, format)
    data: dict[str, Any] = {"user_id": user_id, "format": format, "chars": len(text)}
    if format == "json":
        data["graph"] = json.loads(text)
    return ToolOutput(text, data)
