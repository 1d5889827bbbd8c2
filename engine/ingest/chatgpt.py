"""The ChatGPT export reader: the `conversations.json` of ChatGPT's "Export data".

The file is a JSON list of conversations, each a tree of messages: `mapping` (node id ->
`{message, parent, children}`) and `current_node`, the last node of the branch the user last
saw. Only that branch is read, root first: messages edited away or regenerated are left out.

A kept message is a user or assistant text message shown in the conversation: its string parts
joined (images and files skipped). Left out, and counted in one warning at the end of the file:
system and tool messages, hidden ones (custom instructions), the assistant's calls to a tool,
other content (code, browsing, reasoning), messages with no text, and the messages of other
branches. A conversation that cannot be read (no mapping, a broken tree) is one `ReadError`;
the others still read. The list is decoded one conversation at a time (`json_list`).

Each message keeps its `create_time`, else the time of the message before it on the branch
(the conversation's `create_time` for the first), so it keeps its place. Its session and
conversation id are the conversation's id, its `source` the message id (stable across
re-exports), and the conversation's title is its `title` metadata.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.conversations import ConversationReader, Heading, Place, When
from engine.ingest.fields import Item, SourceFile

_ROLES = ("user", "assistant")
_TEXT_TYPES = ("text", "multimodal_text")
_OFF_BRANCH = "on other branches (edited or regenerated)"


@dataclass(frozen=True, slots=True)
class _Conversation:
    """One conversation, parsed: its heading and the nodes of its shown branch."""

    heading: Heading
    mapping: dict[str, Any]
    branch: list[str]  # node ids, root first


def read_chatgpt(file: SourceFile) -> Iterator[Item]:
    """Every shown user and assistant message of every conversation, in file order."""
    yield from _Reader(file).read()


class _Reader(ConversationReader[_Conversation]):
    def parse(self, number: int, item: object, notes: fields.Notes) -> _Conversation:
        return _parse(number, item, notes)

    def messages(self, conversation: _Conversation) -> Iterator[tuple[Any, object]]:
        """The shown branch's messages (the root holds none); those off it are counted."""
        if off := _off_branch(conversation):
            self.tally.left_out[_OFF_BRANCH] += off
        for node_id in conversation.branch:
            message = conversation.mapping[node_id].get("message")
            if message is not None:
                yield node_id, message

    def message(
        self, conversation: _Conversation, place: Place, message: dict[str, Any], when: When
    ) -> Iterator[Item]:
        (where, node_id), (ts, notes) = place, when
        try:
            reason = left_out(message)
        except InvalidInputError as exc:
            yield self.file.error(where, str(exc))
            return
        if reason is not None:
            self.tally.left_out[reason] += 1
            return
        given = message.get("id")
        message_id = given if isinstance(given, str) and given else node_id
        author = message["author"]
        record = fields.build_record(
            self.file,
            where,
            lambda: conversation.heading.record(
                user_id=self.file.user_id,
                role=author["role"],
                content=_text(message["content"]["parts"]),
                ts=ts,
                speaker=fields.speaker(author.get("name"), notes),
                source=message_id,
            ),
        )
        self.tally.kept += isinstance(record, ChatRecord)
        yield from self.turns.checked(self.file, where, record, notes, message_id)


def _parse(number: int, item: object, notes: fields.Notes) -> _Conversation:
    mapping = item.get("mapping") if isinstance(item, dict) else None
    if isinstance(item, dict) and "chat_messages" in item:
        raise InvalidInputError("a Claude export: read it with --format claude (or auto)")
    if not isinstance(item, dict) or not isinstance(mapping, dict):
        raise InvalidInputError("expected a conversation object with a 'mapping' of messages")
    return _Conversation(
        heading=Heading.of(item, number, notes, ("id", "conversation_id", "title", "create_time")),
        mapping=mapping,
        branch=branch(mapping, item.get("current_node")),
    )


def branch(mapping: dict[str, Any], current: object) -> list[str]:
    """The node ids from the root to `current`, following each node's `parent`.

    Raises:
        InvalidInputError: `current` is missing or not in `mapping`, a node on the way is not
            an object or names a parent that is not in `mapping`, or the parents go round.
    """
    if current is None:
        raise InvalidInputError("no current_node: the branch last shown cannot be told")
    if not isinstance(current, str) or current not in mapping:
        raise InvalidInputError(f"current_node {current!r} is not in the mapping")
    path: list[str] = []
    seen: set[str] = set()
    node_id: str | None = current
    while node_id is not None:
        if node_id in seen:
            raise InvalidInputError(f"the mapping has a cycle: node {node_id!r} is its own parent")
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise InvalidInputError(f"node {node_id!r} is not an object")
        seen.add(node_id)
        path.append(node_id)
        parent = node.get("parent")
        if parent is not None and (not isinstance(parent, str) or parent not in mapping):
            raise InvalidInputError(f"node {node_id!r} names parent {parent!r}, not in the mapping")
        node_id = parent
    return path[::-1]


def _off_branch(conversation: _Conversation) -> int:
    on = set(conversation.branch)
    return sum(
        1
        for node_id, node in conversation.mapping.items()
        if node_id not in on and isinstance(node, dict) and isinstance(node.get("message"), dict)
    )


def left_out(message: dict[str, Any]) -> str | None:
    """Why a message is not read (`"system"`, `"tool"`, `"hidden"`, ...), None if it is.

    Raises:
        InvalidInputError: the message has no `author.role`, or its text has no `parts` list.
    """
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    if not isinstance(role, str):
        raise InvalidInputError("the message has no author.role")
    if role not in _ROLES:
        return role if role in ("system", "tool") else f"of role {role!r}"
    metadata = message.get("metadata")
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return "hidden"
    recipient = message.get("recipient")
    if isinstance(recipient, str) and recipient != "all":
        return "to a tool"  # the assistant calling a tool (browsing, code, memory)
    content = message.get("content")
    kind = content.get("content_type") if isinstance(content, dict) else None
    if kind not in _TEXT_TYPES:
        return f"not text ({kind})"
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list):
        raise InvalidInputError(f"a {kind} message needs a 'parts' list")
    if _text(parts):
        return None
    return "with only images or files" if any(not isinstance(p, str) for p in parts) else "empty"


def _text(parts: list[Any]) -> str:
    """The string parts and voice messages' transcriptions joined by line breaks; images,
    audio and files (other objects) are skipped."""
    said = [p.get("text") if isinstance(p, dict) and _spoken(p) else p for p in parts]
    return "\n".join(p for p in said if isinstance(p, str) and p.strip())


def _spoken(part: dict[str, Any]) -> bool:
    return part.get("content_type") == "audio_transcription"
