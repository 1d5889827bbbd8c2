"""The Discord reader: a channel exported to JSON by DiscordChatExporter (the usual way to
export Discord: `{"guild", "channel", "messages": [...]}`, a file per channel).

A kept message is what a person wrote: role `user`, its speaker the author's server nickname
(else their name), its text the export's `content`. Left out, and counted in one warning at the
end: system messages (joins, pins, calls, renames: any `type` but `Default` and `Reply`), bots'
messages, and messages with no text (attachments, stickers or embeds alone).

Each message's time is its `timestamp` (with its zone), its session and conversation id the
channel's id, its metadata the channel's name (`channel`), the server's (`guild`) and, for a
reply, `reply_to` (the id of the message it answers); its source `<channel id>:<message id>`,
the id Discord gives a message. The messages are decoded one at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord, ReadError
from engine.ingest.fields import Item, SourceFile
from engine.ingest.tally import Tally
from engine.ingest.turns import Turns

_KEPT = ("Default", "Reply")
_ATTACHED = ("attachments", "stickers", "embeds")
_HEAD_KEYS = ('"guild"', '"channel"')


@dataclass(slots=True)
class _Channel:
    id: str
    metadata: dict[str, str] = field(default_factory=dict)


def is_discord(head: str) -> bool:
    """Whether the start of a JSON file is a DiscordChatExporter channel's."""
    return head.startswith("{") and all(key in head for key in _HEAD_KEYS)


def read_discord(file: SourceFile) -> Iterator[Item]:
    """Every message people wrote in the channel, in file order."""
    data = file.load_json()
    if isinstance(data, ReadError) or not isinstance(data, dict):
        yield data if isinstance(data, ReadError) else file.error("file", _EXPECTED)
        return
    channel, messages = _channel(data), data.get("messages")
    if channel is None or not isinstance(messages, list):
        yield file.error("file", _EXPECTED)
        return
    tally, turns = Tally("channels", groups=1), Turns()
    for number, message in enumerate(messages, start=1):
        yield from _message(file, f"message {number}", message, (channel, turns, tally))
    if (summary := tally.summary()) is not None:
        yield file.warning("file", summary)


_EXPECTED = "expected a DiscordChatExporter channel: an object with 'channel' and 'messages'"


def _channel(data: dict[str, Any]) -> _Channel | None:
    channel, guild = data.get("channel"), data.get("guild")
    if not isinstance(channel, dict) or fields.text_id(channel.get("id"), "id") is None:
        return None
    metadata = {"channel": channel["name"]} if isinstance(channel.get("name"), str) else {}
    if isinstance(guild, dict) and isinstance(guild.get("name"), str):
        metadata["guild"] = guild["name"]
    return _Channel(str(channel["id"]), metadata)


def _message(
    file: SourceFile, where: str, message: object, at: tuple[_Channel, Turns, Tally]
) -> Iterator[Item]:
    channel, turns, tally = at
    if not isinstance(message, dict):
        yield file.error(where, f"expected a message object, got {type(message).__name__}")
        return
    reason = left_out(message)
    if reason is not None:
        tally.left_out[reason] += 1
        return
    notes: fields.Notes = []
    record = fields.build_record(file, where, partial(_record, file, message, channel, notes))
    tally.kept += isinstance(record, ChatRecord)
    moment = record.source if isinstance(record, ChatRecord) else None
    yield from turns.checked(file, where, record, notes, moment)


def left_out(message: dict[str, Any]) -> str | None:
    """Why a message is not read (its system type, "from bots", "with only attachments",
    "empty"), None if it is."""
    kind = message.get("type", "Default")
    if kind not in _KEPT:
        return str(kind)
    author = message.get("author")
    if isinstance(author, dict) and author.get("isBot") is True:
        return "from bots"
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        return None  # read, to be refused naming the fault
    if content and content.strip():
        return None
    return "with only attachments" if any(message.get(k) for k in _ATTACHED) else "empty"


def _record(
    file: SourceFile, message: dict[str, Any], channel: _Channel, notes: fields.Notes
) -> ChatRecord:
    """The record of a message that is kept.

    Raises:
        InvalidInputError: no id, no author or no time, or content that is not text.
    """
    message_id = fields.text_id(message.get("id"), "id")
    if message_id is None:
        raise InvalidInputError("no id: the message cannot be told apart from others")
    author = message.get("author")
    names = author if isinstance(author, dict) else {}
    speaker = fields.speaker(fields.first(names, "nickname", "name", "id"), notes)
    if speaker is None:
        raise InvalidInputError("no author: who wrote it cannot be told")
    reference = message.get("reference")
    reply = reference.get("messageId") if isinstance(reference, dict) else None
    reply_to = fields.text_id(reply, "reference.messageId")
    return ChatRecord(
        user_id=file.user_id,
        session_id=channel.id,
        conversation_id=channel.id,
        role="user",
        content=fields.content(message.get("content")),
        ts=fields.parse_timestamp(message.get("timestamp")),
        speaker=speaker,
        source=f"{channel.id}:{message_id}",
        exported_id=True,
        metadata=channel.metadata | ({"reply_to": reply_to} if reply_to else {}),
    )
