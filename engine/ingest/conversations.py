"""What the readers of conversation exports (ChatGPT, Claude) share: a JSON list of
conversations decoded one at a time (`json_list`), a conversation that cannot be read one
`ReadError` while the others read, each message's time else the one before it (the
conversation's for the first), and one warning counting what was left out (`Tally`).

A reader says how a conversation is parsed (`parse`), which messages it holds in order
(`messages`) and what a message gives (`message`, a record or nothing, counted)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Protocol, TypeVar

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.fields import Item, SourceFile
from engine.ingest.json_list import file_items
from engine.ingest.tally import Tally
from engine.ingest.turns import Turns


@dataclass(frozen=True, slots=True)
class Heading:
    """What every conversation of an export has: its id (`record-N` when it has none), its
    title and its time."""

    id: str
    title: str | None
    ts: datetime | None

    @classmethod
    def of(
        cls, item: dict[str, Any], number: int, notes: fields.Notes, keys: tuple[str, ...]
    ) -> Heading:
        """The heading of the `number`th conversation `item`, read from its `keys`: the id's
        (the first present of one or more), then the title's and the time's. What could not
        be read is noted in `notes`."""
        *ids, title_key, time_key = keys
        given = fields.text_id(fields.first(item, *ids), ids[0])
        if given is None:
            notes.append(f"no {' or '.join(ids)}: its session is 'record-{number}'")
        title = item.get(title_key)
        title = title.strip() if isinstance(title, str) and title.strip() else None
        return cls(given or f"record-{number}", title, fields.timestamp(item.get(time_key), notes))

    def record(self, **said: Any) -> ChatRecord:
        """A message of the conversation: its session and conversation the conversation's, its
        title as metadata, keyed by the export's own id (`source`)."""
        metadata = {"title": self.title} if self.title else {}
        return ChatRecord(
            session_id=self.id, conversation_id=self.id, exported_id=True, metadata=metadata, **said
        )


class Conversation(Protocol):
    @property
    def heading(self) -> Heading: ...


C = TypeVar("C", bound=Conversation)
#: A message's place: where it is said in errors ("record 3 message 7") and its key.
Place = tuple[str, Any]
When = tuple[datetime | None, fields.Notes]  # its time, and what was said about reading it


@dataclass(slots=True)
class ConversationReader(Generic[C]):
    """One export file being read: the file, what it gave so far, the turns met."""

    file: SourceFile
    tally: Tally = field(default_factory=lambda: Tally("conversations"))
    turns: Turns = field(default_factory=Turns)
    time_key = "create_time"  # the message's field holding its time

    def read(self) -> Iterator[Item]:
        """Every message of every conversation, in file order, then the count left out."""
        yield from file_items(self.file, "conversations", self.conversation)
        if (summary := self.tally.summary()) is not None:
            yield self.file.warning("file", summary)

    def conversation(self, number: int, item: object) -> Iterator[Item]:
        """The conversation's messages, or its error."""
        where, notes = f"record {number}", list[str]()
        try:
            conversation = self.parse(number, item, notes)
        except InvalidInputError as exc:
            yield self.file.error(where, str(exc))
            return
        yield from (self.file.warning(where, note) for note in notes)
        self.tally.groups += 1
        last = conversation.heading.ts
        for key, message in self.messages(conversation):
            here = f"{where} message {key}"
            if not isinstance(message, dict):
                reason = f"expected a message object, got {type(message).__name__}"
                yield self.file.error(here, reason)
                continue
            notes = []
            last = fields.timestamp(message.get(self.time_key), notes, fields.EARLIER) or last
            yield from self.message(conversation, (here, key), message, (last, notes))

    def parse(self, number: int, item: object, notes: fields.Notes) -> C:
        """The conversation `item` (the `number`th), notes on reading it added to `notes`.

        Raises:
            InvalidInputError: it cannot be read.
        """
        raise NotImplementedError

    def messages(self, conversation: C) -> Iterator[tuple[Any, object]]:
        """The conversation's messages in order, each with its key (an id or a number)."""
        raise NotImplementedError

    def message(
        self, conversation: C, place: Place, message: dict[str, Any], when: When
    ) -> Iterator[Item]:
        """The message as a record, or nothing when it is left out (counted)."""
        raise NotImplementedError
