"""The ShareGPT reader: a JSON list of conversations, each `{"id", "conversations": [turns]}`
with turns `{"from": "human"|"gpt"|..., "value": text}`.

Times, where an export carries them: a turn's own `timestamp`/`ts`/`created_at`/
`create_time`, else the conversation's (its turns one second apart, in order). A conversation
with no time gives undated turns, which are never taken for repeats of each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord, ReadError
from engine.ingest.fields import Item, SourceFile
from engine.ingest.turns import Turns

_ROLES = {
    "human": "user",
    "user": "user",
    "gpt": "assistant",
    "chatgpt": "assistant",
    "assistant": "assistant",
    "system": "system",
}


def read_sharegpt(file: SourceFile) -> Iterator[Item]:
    """Every turn of every conversation, in file order."""
    data = file.load_json()
    if isinstance(data, ReadError):
        yield data
        return
    if not isinstance(data, list):
        yield file.error(
            "file", f"expected a JSON list of conversations, got {type(data).__name__}"
        )
        return
    turns = Turns()
    for number, item in enumerate(data, start=1):
        yield from _conversation(file, number, item, turns)


def _conversation(file: SourceFile, number: int, item: object, turns: Turns) -> Iterator[Item]:
    where = f"record {number}"
    said = item.get("conversations") if isinstance(item, dict) else None
    if not isinstance(item, dict) or not isinstance(said, list) or not said:
        yield file.error(where, "expected an object with a non-empty 'conversations' list")
        return
    notes: fields.Notes = []
    try:
        conversation_id = fields.text_id(item.get("id"), "id")
        start = fields.timestamp(fields.first(item, *fields.TS_KEYS), notes)
    except InvalidInputError as exc:
        yield file.error(where, str(exc))
        return
    yield from (file.warning(where, note) for note in notes)
    for index, turn in enumerate(said, start=1):
        here, source = f"{where} message {index}", f"{file.name}:{number}#{index}"
        if not isinstance(turn, dict):
            yield file.error(here, f"expected a JSON object, got {type(turn).__name__}")
            continue
        default = fields.offset(start, index - 1)
        yield from _turn(file, turn, (here, source), conversation_id, default, turns)


def _turn(
    file: SourceFile,
    turn: dict[str, Any],
    place: tuple[str, str],
    conversation_id: str | None,
    default: datetime | None,
    turns: Turns,
) -> Iterator[Item]:
    (where, source), notes = place, list[str]()
    record = fields.build_record(
        file,
        where,
        lambda: ChatRecord(
            user_id=file.user_id,
            session_id=conversation_id,
            conversation_id=conversation_id,
            role=_role(turn.get("from")),
            content=fields.content(turn.get("value")),
            ts=fields.timestamp(fields.first(turn, *fields.TS_KEYS), notes) or default,
            source=source,
            positional=True,
        ),
    )
    moment = record.ts if isinstance(record, ChatRecord) else None
    yield from turns.checked(file, where, record, notes, moment)


def _role(value: object) -> str:
    role = _ROLES.get(value.strip().lower()) if isinstance(value, str) else None
    if role is None:
        raise InvalidInputError(f"unknown role {value!r} in 'from'")
    return role
