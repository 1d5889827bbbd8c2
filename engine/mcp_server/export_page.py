"""One page of a user's graph for MCP `export_graph`: records without their embeddings, at
most `limit` of them, and a cursor to the rest.

A model reads what a tool returns: 384 floats per entity and fact are of no use to it and
made a 7-entity graph 100,000 characters. The lossless, re-importable document (embeddings
included) is `graphmem export` / `Memory.export`, on the machine that holds the data.

The records come in one order, entities, facts, episodes, then history, each section by uid;
the cursor `facts:<uid>` means "the facts after that uid", so a record added or deleted between
two pages shifts no other one out of them. Each page reads at most `limit + 1` records whole per
section it touches (choosing them sorts the section's uids).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from engine.errors import InvalidInputError
from engine.store.base import GraphStore
from engine.transfer.snapshot import EntityRecord, EpisodeRecord, FactRecord, HistoryRecord

MAX_LIMIT = 500
SECTIONS = {
    "entities": "list_user_entities",
    "facts": "list_user_facts",
    "episodes": "list_user_episodes",
    "history": "list_user_history",
}
_ORDER = list(SECTIONS)
# what each section's rows are read as: the times exact (`engine.store.rows.exact_time`)
_RECORDS: dict[str, type[BaseModel]] = {
    "entities": EntityRecord,
    "facts": FactRecord,
    "episodes": EpisodeRecord,
    "history": HistoryRecord,
}
# a section and the uid its page starts after ("": at its first record)
_CURSOR = re.compile(r"(entities|facts|episodes|history):(\S{0,256})")


class ExportPage(BaseModel):
    """A page of one user's graph; `next_cursor` is set when more records follow."""

    user_id: str
    entities: list[dict[str, Any]] = Field(default_factory=list)
    facts: list[dict[str, Any]] = Field(default_factory=list)
    episodes: list[dict[str, Any]] = Field(default_factory=list)
    history: list[dict[str, Any]] = Field(default_factory=list)
    truncated: bool = False
    next_cursor: str | None = None
    note: str = "records without embeddings; `graphmem export` writes the lossless document"


def parse_cursor(cursor: str | None) -> tuple[int, str]:
    """(section index, the uid the page starts after) of a cursor; the start for None.

    Raises:
        InvalidInputError: not a cursor `export_graph` gave.
    """
    if cursor is None:
        return 0, ""
    match = _CURSOR.fullmatch(cursor)
    if match is None:
        raise InvalidInputError(
            f"cursor {cursor[:80]!r} is not one export_graph gave (its next_cursor, e.g. "
            "'facts:3f2a...')"
        )
    return _ORDER.index(match.group(1)), match.group(2)


def export_page(store: GraphStore, user_id: str, limit: int, cursor: str | None) -> ExportPage:
    """Up to `limit` records of `user_id`'s graph from `cursor` on (the store is set up).

    Raises:
        InvalidInputError: `limit` outside 1-500, or a bad cursor.
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    section, after = parse_cursor(cursor)
    page = ExportPage(user_id=user_id)
    room = limit
    for index in range(section, len(_ORDER)):
        name = _ORDER[index]
        start = after if index == section else ""
        rows = _read(store, name, user_id, start, room + 1 if room else 1)
        if room == 0:
            if rows:
                page.truncated, page.next_cursor = True, f"{name}:{start}"
            return page
        getattr(page, name).extend(r for _, r in rows[:room] if r is not None)
        if len(rows) > room:
            page.truncated, page.next_cursor = True, f"{name}:{rows[room - 1][0]}"
            return page
        room -= len(rows)
    return page


def _read(
    store: GraphStore, section: str, user_id: str, after: str, limit: int
) -> list[tuple[str, dict[str, Any] | None]]:
    """(uid, record) of each row read; None for a half-written fact (`torn`), which takes a
    place on the page (so a short page still means the end) but is not shown."""
    rows = store.run(SECTIONS[section], {"user_id": user_id, "after": after, "limit": limit})
    record = _RECORDS[section]
    return [
        (row[0]["uid"], None)
        if row[0].get("torn")
        else (row[0]["uid"], record.model_validate(row[0]).model_dump(exclude={"embedding"}))
        for row in rows
    ]
