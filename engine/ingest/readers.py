"""Readers that turn chat logs on disk into `ChatRecord`s for batch ingestion.

Formats: `openai-jsonl`, `sharegpt`, `locomo`, `csv`, `chatgpt` and `claude` (a ChatGPT or
Claude export's `conversations.json`), `slack` (a Slack export's folder), `whatsapp` (a chat
exported from WhatsApp), `telegram` (a Telegram Desktop export's `result.json`), `discord` (a
channel exported by DiscordChatExporter), or `auto` to detect one. Bad records
become `ReadError`s and the rest of the file still reads; a file that is not valid at all gives
one `ReadError` located at `file`. A record kept despite a fault (a time that cannot be read,
an unknown speaker) comes after a `ReadWarning` saying so. JSONL and CSV are read line by
line, so large files stream; a `.json` file is one JSON document whatever its line count
(`engine.ingest.json_doc`): OpenAI-format chat in one, ShareGPT and LoCoMo are loaded whole,
a ChatGPT or Claude export is decoded one conversation at a time, a Slack export one message
at a time.

`source` is `<file name>:<line>` (JSONL, CSV) or `<file name>:<record>` (ShareGPT, a `.json`
list of OpenAI-format messages; `<file name>:1` for a `.json` file of one conversation), with
`#<message>` when a line or record holds a whole conversation; LoCoMo uses the `dia_id`, a
ChatGPT or Claude export the message id, a Slack export `<channel id>:<ts>`.
Line, record and message numbers count from 1.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any, get_args

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatFormat, ChatRecord, ReadError, ReadResult, ReadWarning
from engine.ingest.chatgpt import read_chatgpt
from engine.ingest.claude import read_claude
from engine.ingest.csvlog import COLUMNS, check_delimiter, read_csv
from engine.ingest.discord import is_discord, read_discord
from engine.ingest.fields import Item, SourceFile, StrPath, parse_timestamp
from engine.ingest.json_doc import (
    JSON_SUFFIX,
    Several,
    Told,
    json_format,
    list_format,
    one_document,
)
from engine.ingest.locomo import load_locomo_qa, read_locomo
from engine.ingest.sharegpt import read_sharegpt
from engine.ingest.slack import read_slack
from engine.ingest.slack_export import is_slack_export
from engine.ingest.telegram import is_telegram, read_telegram
from engine.ingest.turns import Turns
from engine.ingest.whatsapp import HEADER as WHATSAPP_HEADER
from engine.ingest.whatsapp import read_whatsapp

__all__ = [
    "CHAT_FORMATS",
    "iter_chat_log",
    "load_locomo_qa",
    "parse_timestamp",
    "read_chat_log",
    "read_told",
    "resolve_format",
    "told_format",
]

CHAT_FORMATS: tuple[str, ...] = get_args(ChatFormat)

_PEEK_CHARS = 65536
_EXTENSIONS = {".jsonl": "openai-jsonl", ".ndjson": "openai-jsonl", ".csv": "csv"}


@dataclass(frozen=True)
class _Defaults:
    """Fields a JSONL conversation line gives to each of its messages."""

    user_id: str | None = None
    session_id: str | None = None
    conversation_id: str | None = None
    ts: datetime | None = None


def read_chat_log(
    path: StrPath, format: str = "auto", user_id: str | None = None, delimiter: str | None = None
) -> ReadResult:
    """Read a whole chat log into records and errors, in file order.

    Args:
        path: the file to read; for a Slack export, its folder.
        format: one of `CHAT_FORMATS`, or `"auto"` to detect it from the extension and content.
        user_id: if given, every record is attributed to this user, whatever the file says.
        delimiter: the column separator of a CSV file (default a comma).

    Raises:
        InvalidInputError: `path` does not exist or is not a file (nor a Slack export's
            folder), `format` is unknown,
            `format="auto"` cannot tell the format, or `delimiter` is not one character.

    Example:
        >>> result = read_chat_log("chats.jsonl")  # doctest: +SKIP
        >>> [r.content for r in result.records], [str(e) for e in result.errors]  # doctest: +SKIP
    """
    told = told_format(path, format)
    records: list[ChatRecord] = []
    errors: list[ReadError] = []
    warnings: list[ReadWarning] = []
    for item in read_told(path, told, user_id, delimiter):
        if isinstance(item, ChatRecord):
            records.append(item)
        elif isinstance(item, ReadWarning):
            warnings.append(item)
        else:
            errors.append(item)
    return ReadResult(records=records, errors=errors, format=told.format, warnings=warnings)


def iter_chat_log(
    path: StrPath, format: str = "auto", user_id: str | None = None, delimiter: str | None = None
) -> Iterator[Item]:
    """Stream a chat log as `ChatRecord`s, `ReadError`s and `ReadWarning`s in file order.

    Arguments and errors as for `read_chat_log`; they are checked before the first item.
    """
    return read_told(path, told_format(path, format), user_id, delimiter)


def read_told(
    path: StrPath, told: Told, user_id: str | None = None, delimiter: str | None = None
) -> Iterator[Item]:
    """`iter_chat_log` of a format told already (`told_format`): the document its detection
    parsed is read, not parsed again."""
    fmt = told.format
    if fmt == "csv":
        check_delimiter(delimiter)
    if fmt == "slack":  # a folder, checked by resolve_format
        return read_slack(SourceFile(Path(path), os.fspath(path), user_id))
    file = SourceFile.open(path, user_id, delimiter)
    if fmt == "openai-jsonl" and told.document is not None:
        return _read_jsonl(file, told.document)
    return _READERS[fmt](file)


def resolve_format(path: StrPath, format: str = "auto") -> str:
    """The format to read `path` with: `format` itself, or the detected one for `"auto"`
    (`told_format`, without the document)."""
    return told_format(path, format).format


def told_format(path: StrPath, format: str = "auto") -> Told:
    """The format to read `path` with: `format` itself, or the detected one for `"auto"`,
    with the document a `.json` file's detection parsed (`read_told` reads it).

    Known extensions decide (`.jsonl`, `.ndjson`, `.csv`); a `.json` file is an export told by
    its keys, else the one JSON document it holds (`engine.ingest.json_doc`), whatever its line
    count; otherwise the start of the file decides. A folder is a Slack export when it holds a
    `channels.json` list (`is_slack_export`).

    Raises:
        InvalidInputError: `path` is missing, a folder that is no Slack export, a file named as
            `slack`; `format` is unknown; or the format of `path` cannot be told.
    """
    if format != "auto" and format not in CHAT_FORMATS:
        raise InvalidInputError(f"unknown chat-log format {format!r}; use one of {CHAT_FORMATS}")
    if Path(path).is_dir():
        return Told(_folder_format(os.fspath(path), format))
    file = SourceFile.open(path)
    if format == "slack":
        raise InvalidInputError(
            f"{file.shown!r} is a file: a Slack export is read as its folder (the one holding "
            "users.json and channels.json)"
        )
    if format != "auto":
        return Told(format)
    suffix = file.path.suffix.lower()
    if suffix == JSON_SUFFIX:
        head = _peek(file)
        exported = _exported(head)
        return Told(exported) if exported else json_format(file, head)
    detected = _EXTENSIONS.get(suffix) or _sniff(_peek(file))
    if detected is None:
        raise InvalidInputError(
            f"cannot tell the chat-log format of {file.shown!r}; pass format= one of {CHAT_FORMATS}"
        )
    return Told(detected)


def _folder_format(path: str, format: str) -> str:
    if format in ("auto", "slack") and is_slack_export(Path(path)):
        return "slack"
    raise InvalidInputError(
        f"chat log {path!r} is not a file (a folder is read only as a Slack export, the one "
        "holding users.json and channels.json)"
    )


def _peek(file: SourceFile) -> str:
    with file.path.open(encoding="utf-8", errors="replace") as handle:
        return handle.read(_PEEK_CHARS).lstrip("\ufeff \t\r\n")


def _exported(head: str) -> str | None:
    """The format of an app's JSON export told by the keys near the start of its file (a
    `.json` file or any other); None when no export's keys are there."""
    if head.startswith("["):
        return list_format(head)
    if is_telegram(head):
        return "telegram"
    if is_discord(head):
        return "discord"
    return None


def _sniff(head: str) -> str | None:
    """Guess the format from the start of a file; None when nothing fits."""
    # before the JSON list: an iPhone's WhatsApp export starts with "[" too
    if WHATSAPP_HEADER.fullmatch(head.partition("\n")[0].rstrip("\r")):
        return "whatsapp"
    if head.startswith("["):
        return list_format(head)
    exported = _exported(head)
    if exported is not None:
        return exported
    if head.startswith("{"):
        line, newline, _ = head.partition("\n")
        return "openai-jsonl" if not newline or _is_json_object(line) else None
    header = next(csv.reader([head.partition("\n")[0]]), [])
    names = {COLUMNS.get(cell.strip().lower()) for cell in header}
    return "csv" if {"role", "content"} <= names else None


def _is_json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


# -- openai-jsonl ------------------------------------------------------------------------------


def _read_jsonl(file: SourceFile, document: Any = None) -> Iterator[Item]:
    """An `openai-jsonl` log: by lines, or a `.json` file's one document (`document`, when
    its detection parsed it)."""
    turns = Turns()
    if file.path.suffix.lower() == JSON_SUFFIX:
        document = one_document(file) if document is None else document
        if not isinstance(document, Several):
            yield from _json_document(file, document, turns)
            return
    with file.path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            yield from _jsonl_line(file, number, raw, turns)


def _json_document(file: SourceFile, document: Any, turns: Turns) -> Iterator[Item]:
    """A `.json` file's one document: a conversation or message, read as the one line it
    would be in JSONL (its sources those of line 1), or a list of them, record by record."""
    if isinstance(document, ReadError):
        yield document
    elif isinstance(document, list):
        for number, obj in enumerate(document, start=1):
            yield from _jsonl_object(file, obj, f"record {number}", f"{file.name}:{number}", turns)
    else:
        yield from _jsonl_object(file, document, "record 1", f"{file.name}:1", turns)


def _jsonl_line(file: SourceFile, number: int, raw: bytes, turns: Turns) -> Iterator[Item]:
    where, source = f"line {number}", f"{file.name}:{number}"
    if not raw.strip():
        return
    try:
        obj = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        yield file.error(where, "not valid UTF-8")
        return
    except (ValueError, RecursionError) as exc:
        yield file.error(where, f"invalid JSON: {exc}")
        return
    yield from _jsonl_object(file, obj, where, source, turns)


def _jsonl_object(
    file: SourceFile, obj: object, where: str, source: str, turns: Turns
) -> Iterator[Item]:
    """A message or a conversation `{"messages": [...]}`, what a JSONL line holds."""
    if not isinstance(obj, dict):
        yield file.error(where, f"expected a JSON object, got {type(obj).__name__}")
    elif "messages" in obj:
        yield from _jsonl_conversation(file, obj, where, source, turns)
    else:
        yield from _jsonl_message(file, obj, (where, source), _Defaults(), turns)


def _jsonl_conversation(
    file: SourceFile, obj: dict[str, Any], where: str, source: str, turns: Turns
) -> Iterator[Item]:
    messages = obj["messages"]
    if not isinstance(messages, list) or not messages:
        yield file.error(where, "messages must be a non-empty list")
        return
    notes: fields.Notes = []
    try:
        defaults = _conversation_defaults(obj, notes)
    except InvalidInputError as exc:
        yield file.error(where, str(exc))
        return
    yield from (file.warning(where, note) for note in notes)
    for index, message in enumerate(messages):
        here, at = f"{where} message {index + 1}", f"{source}#{index + 1}"
        if not isinstance(message, dict):
            yield file.error(here, f"expected a JSON object, got {type(message).__name__}")
            continue
        # Messages without their own time follow the conversation's, one second apart.
        own = replace(defaults, ts=fields.offset(defaults.ts, index))
        yield from _jsonl_message(file, message, (here, at), own, turns)


def _conversation_defaults(obj: dict[str, Any], notes: fields.Notes) -> _Defaults:
    return _Defaults(
        user_id=fields.text_id(fields.first(obj, "user_id", "user"), "user_id"),
        session_id=fields.text_id(
            fields.first(obj, "session_id", "conversation_id", "id"), "session_id"
        ),
        conversation_id=fields.text_id(fields.first(obj, "conversation_id", "id"), "id"),
        ts=fields.timestamp(fields.first(obj, *fields.TS_KEYS), notes),
    )


def _jsonl_message(
    file: SourceFile,
    msg: dict[str, Any],
    place: tuple[str, str],
    defaults: _Defaults,
    turns: Turns,
) -> Iterator[Item]:
    (where, source), notes = place, list[str]()

    def build() -> ChatRecord:
        user = fields.text_id(fields.first(msg, "user_id", "user"), "user_id")
        session = fields.text_id(fields.first(msg, "session_id", "conversation_id"), "session_id")
        return ChatRecord(
            user_id=file.user_id or user or defaults.user_id,
            session_id=session or defaults.session_id,
            conversation_id=fields.text_id(msg.get("conversation_id"), "conversation_id")
            or defaults.conversation_id,
            role=fields.role(msg.get("role")),
            content=fields.message_content(msg.get("content"), notes),
            ts=fields.timestamp(fields.first(msg, *fields.TS_KEYS), notes) or defaults.ts,
            speaker=fields.speaker(msg.get("name"), notes),
            source=source,
            positional=True,
        )

    record = fields.build_record(file, where, build)
    # a time the file gives (its own or its conversation's) is what makes a repeat
    moment = record.ts if isinstance(record, ChatRecord) else None
    return turns.checked(file, where, record, notes, moment)


_READERS: dict[str, Callable[[SourceFile], Iterator[Item]]] = {
    "openai-jsonl": _read_jsonl,
    "sharegpt": read_sharegpt,
    "locomo": read_locomo,
    "csv": read_csv,
    "chatgpt": read_chatgpt,
    "claude": read_claude,
    "slack": read_slack,
    "whatsapp": read_whatsapp,
    "telegram": read_telegram,
    "discord": read_discord,
}
