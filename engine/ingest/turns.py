"""What a reader remembers of the turns of one file: repeated turns and who named a speaker.

One rule for every reader: a turn is a repeat of an earlier one of the same file when it has
the same user, session, role, speaker and text AND the same explicit moment: the time the
file gives it (JSONL, CSV, ShareGPT) or its `dia_id` (LoCoMo). A repeat is read once, with a
warning. A turn without an explicit moment is never a repeat: the same words said again are
said again.

A turn without a speaker, in a file where an earlier turn of the same role named one, gets a
warning: its "I" goes to the user's own entity, not to a participant.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.fields import Item, SourceFile

Moment = datetime | str | None
_Key = tuple[str | None, str | None, str, str | None, str, str]


@dataclass(slots=True)
class Turns:
    """The turns one reader has met so far in one file."""

    _first: dict[_Key, str] = field(default_factory=dict)
    _named: set[str] = field(default_factory=set)  # roles that named a speaker

    def repeat(self, record: ChatRecord, moment: Moment, where: str) -> str | None:
        """Where the first telling of `record` was, if this is a repeat; else remember it."""
        if moment is None:
            return None
        stamp = moment.isoformat() if isinstance(moment, datetime) else moment
        r = record
        key = (r.user_id, r.session_id, r.role, r.speaker, r.content, stamp)
        first = self._first.get(key)
        if first is None:
            self._first[key] = where
        return first

    def speaker_note(self, record: ChatRecord, notes: fields.Notes) -> None:
        """Note a missing speaker where the file names speakers for this role."""
        if record.speaker is not None:
            self._named.add(record.role)
        elif record.role in self._named:
            notes.append(
                f"no speaker, where earlier {record.role} turns name one: its self-references "
                "go to the user's own entity"
            )

    def checked(
        self, file: SourceFile, where: str, item: Item, notes: fields.Notes, moment: Moment
    ) -> Iterator[Item]:
        """`item` with its warnings (`fields.noted`), or one warning when it is a repeat."""
        if isinstance(item, ChatRecord):
            first = self.repeat(item, moment, where)
            if first is not None:
                yield file.warning(where, repeated(first, "time"))
                return
            self.speaker_note(item, notes)
        yield from fields.noted(file, where, item, notes)


def repeated(first: str, moment: str) -> str:
    """The warning for a repeat of the turn at `first`."""
    return f"the same turn as {first} (session, role, speaker, text and {moment}): read once"
