"""The Claude export reader: the `conversations.json` of Claude.ai's "Export data".

The file is a JSON list of conversations (`uuid`, `name`, `created_at`, `chat_messages`), each
message `{uuid, sender: "human" | "assistant", text, content: [blocks], created_at,
attachments, files}`. Messages are read in order: `human` is role `user`, `assistant` role
`assistant`. A message's text is its `text` blocks joined by a blank line (its `text` field
when it has no blocks); the other blocks (tool use and results, thinking, images) and its
attachments and files are left out of it. A message with no text at all is left out. Both are
counted in one warning at the end of the file. A conversation that cannot be read (no
`chat_messages` list) is one `ReadError`; the others still read. The list is decoded one
conversation at a time (`json_list`).

Each message keeps its `created_at`, else the time of the message before it (the
conversation's `created_at` for the first). Its session and conversation id are the
conversation's `uuid`, its `source` the message `uuid` (stable across re-exports), and the
conversation's `name` is its `title` metadata.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.conversations import ConversationReader, Heading, Place, When
from engine.ingest.fields import Item, SourceFile

_ROLES = {"human": "user", "assistant": "assistant"}
_FILES = (("attachments", "attachment"), ("files", "file"))  # list key, what one is called


@dataclass(frozen=True, slots=True)
class _Conversation:
    """One conversation, parsed: its heading and messages (not yet checked)."""

    heading: Heading
    messages: list[Any]


@dataclass(frozen=True, slots=True)
class _Said:
    """A message's role and text, and the parts of it that are no text, by kind."""

    role: str
    text: str
    parts: Counter[str]


def read_claude(file: SourceFile) -> Iterator[Item]:
    """Every user and assistant message with text of every conversation, in file order."""
    yield from _Reader(file).read()


class _Reader(ConversationReader[_Conversation]):
    time_key = "created_at"

    def parse(self, number: int, item: object, notes: fields.Notes) -> _Conversation:
        return _parse(number, item, notes)

    def messages(self, conversation: _Conversation) -> Iterator[tuple[Any, object]]:
        return enumerate(conversation.messages, start=1)

    def message(
        self, conversation: _Conversation, place: Place, message: dict[str, Any], when: When
    ) -> Iterator[Item]:
        (where, index), (ts, notes) = place, when
        try:
            said = _said(message)
            message_id = fields.text_id(message.get("uuid"), "uuid")
        except InvalidInputError as exc:
            yield self.file.error(where, str(exc))
            return
        if not said.text:
            self.tally.left_out[_no_text(said.parts)] += 1
            return
        if message_id is None:
            message_id = f"{conversation.heading.id}#{index}"
            notes.append(f"no uuid: its source is {message_id!r}")
        self.tally.parts.update(said.parts)
        self.tally.kept += 1
        record = conversation.heading.record(
            user_id=self.file.user_id, role=said.role, content=said.text, ts=ts, source=message_id
        )
        yield from self.turns.checked(self.file, where, record, notes, message_id)


def _parse(number: int, item: object, notes: fields.Notes) -> _Conversation:
    messages = item.get("chat_messages") if isinstance(item, dict) else None
    if isinstance(item, dict) and "mapping" in item:
        raise InvalidInputError("a ChatGPT export: read it with --format chatgpt (or auto)")
    if not isinstance(item, dict) or not isinstance(messages, list):
        raise InvalidInputError("expected a conversation object with a 'chat_messages' list")
    return _Conversation(Heading.of(item, number, notes, ("uuid", "name", "created_at")), messages)


def _said(message: dict[str, Any]) -> _Said:
    """The message's role, text and left-out parts.

    Raises:
        InvalidInputError: the sender is missing or neither human nor assistant, or the
            message holds text that is not a string.
    """
    sender = message.get("sender")
    role = _ROLES.get(sender) if isinstance(sender, str) else None
    if role is None:
        raise InvalidInputError(f"unknown sender {sender!r}: expected 'human' or 'assistant'")
    parts: Counter[str] = Counter()
    blocks = message.get("content")
    if isinstance(blocks, list) and blocks:
        said = [_block_text(block, parts) for block in blocks]
    else:
        said = [_string(message.get("text"), "text")]
    for key, kind in _FILES:
        attached = message.get(key)
        parts[kind] += len(attached) if isinstance(attached, list) else 0
    text = "\n\n".join(s.strip() for s in said if s.strip())
    return _Said(role, text, +parts)  # `+` drops the kinds counted 0


def _block_text(block: object, parts: Counter[str]) -> str:
    """A `text` block's text; any other block is counted in `parts` by its type."""
    kind = block.get("type") if isinstance(block, dict) else None
    if kind == "text" and isinstance(block, dict):
        return _string(block.get("text"), "a text block's text")
    parts[kind if isinstance(kind, str) else "unreadable block"] += 1
    return ""


def _string(value: object, what: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _no_text(parts: Counter[str]) -> str:
    """Why a message without text is left out: `empty`, or what it holds instead."""
    if not parts:
        return "empty"
    return f"without text (only {', '.join(sorted(parts))})"
