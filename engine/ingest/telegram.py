"""The Telegram reader: Telegram Desktop's export in JSON (*Export chat history*, format JSON):
one chat's `result.json` (`{"name", "type", "id", "messages": [...]}`), or a whole account's
(*Settings > Advanced > Export Telegram data*), whose `chats.list` and `left_chats.list` hold
the chats.

Chat by chat, message by message. A kept message is what a person wrote: role `user`, its
speaker the sender's name (`from`, else `from_id`), its text the export's `text` (a string, or
a list of strings and marked-up parts, joined; a link with other words shows both). A forwarded
message speaks for its author (`forwarded_from`), not for whoever forwarded it, who goes in its
metadata. Left out, and counted in one warning at the end: service messages (joins, pins,
calls), and messages with no text (a photo, a sticker, a file alone).

Each message's time is its `date_unixtime` (UTC; else its `date`, the exporting computer's
local time, taken as UTC), its session and conversation id the chat's id, its metadata the
chat's name (`chat`) and, for a reply, `reply_to` (the id of the message it answers); its
source `<chat id>:<message id>`, the id Telegram gives a message within its chat.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import partial
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord, ReadError
from engine.ingest.fields import Item, SourceFile
from engine.ingest.tally import Tally
from engine.ingest.turns import Turns

_ACCOUNT_LISTS = ("chats", "left_chats")
_CHAT_TYPE = re.compile(
    r'"type":\s*"(?:personal_chat|bot_chat|saved_messages|replies'
    r'|(?:private|public)_(?:group|supergroup|channel))"'
)
_MEDIA = (
    "photo",
    "file",
    "media_type",
    "sticker_emoji",
    "poll",
    "contact_information",
    "location_information",
)


def read_telegram(file: SourceFile) -> Iterator[Item]:
    """Every message people wrote in every chat of the export, in file order."""
    data = file.load_json()
    if isinstance(data, ReadError):
        yield data
        return
    tally = Tally("chats")
    for where, chat in _chats(data):
        if not isinstance(chat, dict) or not isinstance(chat.get("messages"), list):
            yield file.error(where, "expected a chat: an object with a 'messages' list")
            continue
        tally.groups += 1
        yield from _chat(file, where, chat, tally)
    if tally.groups == 0 and not _is_account(data):
        yield file.error(
            "file", "expected a Telegram export: a chat with 'messages', or an account's 'chats'"
        )
    if (summary := tally.summary()) is not None:
        yield file.warning("file", summary)


def is_telegram(head: str) -> bool:
    """Whether the start of a JSON file is a Telegram Desktop export's (one from before 2022
    has no `date_unixtime`, but its chat's type is one of Telegram's)."""
    return head.startswith("{") and (
        '"date_unixtime"' in head
        or '"personal_information"' in head
        or bool(_CHAT_TYPE.search(head))
    )


def _is_account(data: object) -> bool:
    return isinstance(data, dict) and any(isinstance(data.get(k), dict) for k in _ACCOUNT_LISTS)


def _chats(data: object) -> Iterator[tuple[str, object]]:
    if isinstance(data, dict) and "messages" in data:
        yield "file", data
        return
    for key in _ACCOUNT_LISTS:
        listed = data.get(key) if isinstance(data, dict) else None
        chats = listed.get("list") if isinstance(listed, dict) else None
        for number, chat in enumerate(chats if isinstance(chats, list) else [], start=1):
            yield f"{key} {number}", chat


def _chat(file: SourceFile, where: str, chat: dict[str, Any], tally: Tally) -> Iterator[Item]:
    turns = Turns()
    chat_id = fields.text_id(chat.get("id"), "id") or fields.text_id(chat.get("name"), "name")
    name = chat.get("name") if isinstance(chat.get("name"), str) else None
    for number, message in enumerate(chat["messages"], start=1):
        here = f"{where} message {number}"
        if not isinstance(message, dict):
            yield file.error(here, f"expected a message object, got {type(message).__name__}")
            continue
        try:
            reason = left_out(message)
        except InvalidInputError as exc:
            yield file.error(here, str(exc))
            continue
        if reason is not None:
            tally.left_out[reason] += 1
            continue
        notes: fields.Notes = []
        build = partial(_record, file.user_id, message, (chat_id, name), notes)
        record = fields.build_record(file, here, build)
        tally.kept += isinstance(record, ChatRecord)
        moment = record.source if isinstance(record, ChatRecord) else None
        yield from turns.checked(file, here, record, notes, moment)


def left_out(message: dict[str, Any]) -> str | None:
    """Why a message is not read ("service", "media", "empty"), None if it is.

    Raises:
        InvalidInputError: its text is neither a string nor a list of parts.
    """
    if message.get("type", "message") != "message":
        return "service"
    if text(message.get("text")).strip():
        return None
    return "media" if any(message.get(k) for k in _MEDIA) else "empty"


def text(value: object) -> str:
    """The text of a message: a string, or its parts' texts joined.

    Raises:
        InvalidInputError: neither a string nor a list of strings and parts.
    """
    if value is None or isinstance(value, str):
        return value or ""
    if not isinstance(value, list):
        raise InvalidInputError(f"text must be a string or a list, got {type(value).__name__}")
    return "".join(_part(part) for part in value)


def _part(part: object) -> str:
    if isinstance(part, str):
        return part
    said = part.get("text") if isinstance(part, dict) else None
    if not isinstance(said, str):
        raise InvalidInputError("a part of the text is neither a string nor {'type', 'text'}")
    href = part.get("href") if isinstance(part, dict) else None
    return f"{said} ({href})" if isinstance(href, str) and href != said else said


def _record(
    user_id: str | None,
    message: dict[str, Any],
    chat: tuple[str | None, str | None],
    notes: fields.Notes,
) -> ChatRecord:
    """The record of a message that is kept.

    Raises:
        InvalidInputError: no id, no sender or no time that can be read.
    """
    (chat_id, name), message_id = chat, fields.text_id(message.get("id"), "id")
    if message_id is None:
        raise InvalidInputError("no id: the message cannot be told apart from others")
    sender = fields.speaker(fields.first(message, "from", "from_id"), notes)
    author = fields.speaker(message.get("forwarded_from"), notes)
    if sender is None:
        raise InvalidInputError("no sender ('from' or 'from_id'): who wrote it cannot be told")
    reply = fields.text_id(message.get("reply_to_message_id"), "reply_to_message_id")
    metadata = {"chat": name} if name else {}
    metadata |= {"reply_to": reply} if reply else {}
    metadata |= {"forwarded_by": sender} if author else {}
    return ChatRecord(
        user_id=user_id,
        session_id=chat_id,
        conversation_id=chat_id,
        role="user",
        content=text(message.get("text")),
        ts=fields.parse_timestamp(fields.first(message, "date_unixtime", "date")),
        speaker=author or sender,
        source=f"{chat_id}:{message_id}",
        exported_id=True,
        metadata=metadata,
    )
