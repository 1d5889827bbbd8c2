"""The WhatsApp reader: a chat exported from WhatsApp (*Export chat*, with or without media),
its text file: a message a line, `12/31/23, 9:15 PM - Ann: text` (Android) or
`[31/12/2023, 21:15:03] Ann: text` (iOS), a message's further lines after its first.

A kept message is what a person wrote: role `user`, its speaker the name before the colon, its
text with WhatsApp's "<This message was edited>" mark taken off. Left out, and counted in one
warning at the end: lines that name no one (encryption notices, "Ann added Bob", which an
iPhone writes under the chat's name, after a U+200E mark), media left out of the export or
attached ("<Media omitted>", "image omitted", "<attached: ...>", a whole message in <> in any
language), deleted messages, missed calls. The dates are read in the file's own order
(`whatsapp_dates`); a time has no zone in the file (it is the phone's) and is taken as UTC.
Messages a header gives the same time (Android writes minutes) are kept a second apart, in file
order, so that "ok" said twice in a minute is two messages. Session and conversation id: the
chat's name (the file's, or for an iOS `_chat.txt` its folder's); source `<file name>:<line>`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.fields import Item, SourceFile
from engine.ingest.tally import Tally
from engine.ingest.turns import Turns
from engine.ingest.whatsapp_dates import DATE, TIME, DateOrder, date_order, has_seconds
from engine.ingest.whatsapp_dates import message_time as header_time

_MARKS = "\u200e\u200f\ufeff"
_BETWEEN = r"(?:,? | à | klo )"  # between date and time: French phones write "à", Finnish "klo"
HEADER = re.compile(
    rf"[{_MARKS}]*(?:\[(?P<d1>{DATE}){_BETWEEN}(?P<t1>{TIME})\] "
    rf"|(?P<d2>{DATE}){_BETWEEN}(?P<t2>{TIME}) - )"
    r"(?P<rest>.*)"
)
_SPEAKER = re.compile(r"(?P<name>[^:]{1,80}?): (?P<text>.*)", re.DOTALL)
# a quotation closed within a name; one left open says the colon is inside it (a notice
# quoting a group's name: `Ann created group "Trip: Paris"`)
_QUOTED = re.compile('\u201e[^\u201c]*\u201c|"[^"]*"|\u201c[^\u201d]*\u201d|\u00ab[^\u00bb]*\u00bb')
_OPENING_QUOTES = re.compile('["\u201c\u201e\u00ab]')
_WHATSAPPS = "\u200e"  # what an iPhone writes before the words WhatsApp puts in a message
_EDITED = re.compile(rf"[\s{_MARKS}]*<This message was edited>\s*$")
# a file's name and "(file attached)" in English, German, French, Spanish, Portuguese, Italian
_ATTACHED = (
    r"file attached|Datei angehängt|fichier joint|archivo adjunto|arquivo anexado|file allegato"
)
_DELETED = (
    "This message was deleted|You deleted this message|Diese Nachricht wurde gelöscht"
    "|Du hast diese Nachricht gelöscht|Ce message a été supprimé|Vous avez supprimé ce message"
    "|Se eliminó este mensaje|Eliminaste este mensaje|Mensagem apagada|Você apagou esta mensagem"
    "|Questo messaggio è stato eliminato|Hai eliminato questo messaggio"
)
_LEFT_OUT = {
    "media": re.compile(
        # a whole message in <...> is WhatsApp's, in any language: "<Media omitted>",
        # "<Medien ausgeschlossen>", an iPhone's "<attached: f.jpg>", "<Anhang: f.jpg>"
        r"<[^<>\n]{1,100}>|(?:image|video|audio|sticker|GIF|document|Contact card) omitted"
        rf"|.+\.\w{{2,4}} \((?:{_ATTACHED})\)",
        re.IGNORECASE,
    ),
    "deleted": re.compile(rf"(?:{_DELETED})\.?"),
    "calls": re.compile(r"Missed (?:voice|video|group voice|group video) call.*"),
    "view once": re.compile(r"null"),
}


@dataclass(slots=True)
class _Message:
    line: int
    date: str
    clock: str
    lines: list[str]


def read_whatsapp(file: SourceFile) -> Iterator[Item]:
    """Every message people wrote in the chat, in file order."""
    try:
        text = file.path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        yield file.error("file", f"not UTF-8 text (byte {exc.start + 1})")
        return
    messages, stray = _messages(text)
    if stray:
        yield file.error(f"line {stray}", "no WhatsApp message header (date, time and name)")
    try:
        order = date_order([m.date for m in messages])
    except InvalidInputError as exc:
        yield file.error("file", str(exc))
        return
    if order.guessed is not None:
        yield file.warning("file", order.guessed)
    tally = Tally("chats", groups=1)
    yield from _records(file, messages, order, tally)
    if (summary := tally.summary()) is not None:
        yield file.warning("file", summary)


def chat_name(file: SourceFile) -> str:
    """The chat the file holds: its name, or its folder's for an iOS export's `_chat.txt`."""
    if file.path.stem == "_chat" and file.path.parent.name:
        return file.path.parent.name
    return file.path.stem


def _messages(text: str) -> tuple[list[_Message], int | None]:
    """The messages, each with its lines; the number of a first line before any header."""
    messages: list[_Message] = []
    stray = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = HEADER.fullmatch(line)
        if match is not None:
            date, clock = match["d1"] or match["d2"], match["t1"] or match["t2"]
            messages.append(_Message(number, date, clock, [match["rest"]]))
        elif messages:
            messages[-1].lines.append(line)
        elif line.strip(_MARKS + " \t") and stray is None:
            stray = number
    return messages, stray


def _records(
    file: SourceFile, messages: list[_Message], order: DateOrder, tally: Tally
) -> Iterator[Item]:
    chat, turns = chat_name(file), Turns()
    last: tuple[datetime, int] | None = None
    for message in messages:
        where = f"line {message.line}"
        try:
            at = header_time(message.date, message.clock, order)
        except InvalidInputError as exc:
            yield file.error(where, str(exc))
            continue
        same = last[1] + 1 if last is not None and last[0] == at else 0
        last = (at, same)
        said = _said(message)
        if isinstance(said, str):
            tally.left_out[said] += 1
            continue
        tally.kept += 1
        speaker, content = said
        build = partial(
            ChatRecord,
            user_id=file.user_id,
            session_id=chat,
            conversation_id=chat,
            role="user",
            content=content,
            ts=at + _apart(message) * same,
            speaker=speaker,
            source=f"{file.name}:{message.line}",
            positional=True,
        )
        record = fields.build_record(file, where, build)
        moment = record.ts if isinstance(record, ChatRecord) else None
        yield from turns.checked(file, where, record, [], moment)


def _said(message: _Message) -> tuple[str, str] | str:
    """The speaker and text of a message a person wrote, or why it is left out."""
    said = _SPEAKER.fullmatch("\n".join(message.lines).strip(_MARKS))
    if said is None or _OPENING_QUOTES.search(_QUOTED.sub("", said["name"])):
        return "naming no one"
    content = _EDITED.sub("", said["text"].strip(_MARKS)).strip()
    reason = next((why for why, kind in _LEFT_OUT.items() if kind.fullmatch(content)), None)
    if reason is not None or not content:
        return reason or "empty"
    if said["text"].startswith(_WHATSAPPS):  # an iPhone's notice, under the chat's name
        return "naming no one"
    return said["name"].strip(_MARKS + " "), content


def _apart(message: _Message) -> timedelta:
    """How far apart messages are kept that a header gives one time: a second where the
    headers write minutes, a millisecond where they write seconds."""
    return timedelta(milliseconds=1) if has_seconds(message.clock) else timedelta(seconds=1)
