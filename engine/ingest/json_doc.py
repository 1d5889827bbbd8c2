"""A `.json` chat log is one JSON document, whatever its line count: its format is told from
what the document holds, never from its first line.

An app's export is told by the keys near the start of its file, as any file's is (it may be
hundreds of megabytes: it is not parsed to be told): a list by the key its items hold the
messages under (`list_format`: ShareGPT's `conversations`, a ChatGPT export's `mapping`, a
Claude export's `chat_messages`, or LoCoMo's keys), a Telegram or Discord export by its own.
Otherwise the document is parsed whole: an OpenAI-format conversation
(`{"messages": [...]}`), message (`{"role", "content"}`) or list of them is `openai-jsonl`, read
as one document (`engine.ingest.readers`), the one detection parsed (`Told`): a large file
is parsed once. A `.json` file holding one JSON object per line is JSON Lines under another
name, read line by line as before.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, get_args

from engine.errors import InvalidInputError
from engine.ingest.chat_records import ChatFormat, ReadError
from engine.ingest.fields import SourceFile

JSON_SUFFIX = ".json"
# the key holding the messages of a list format's conversation, near the start of its first
_LIST_KEYS = {'"conversations"': "sharegpt", '"mapping"': "chatgpt", '"chat_messages"': "claude"}
_LOCOMO_KEYS = ('"sample_id"', '"speaker_a"', '"qa"', '"conversation"')
_OPENAI_KEYS = ("messages", "role")
_SHOWN_KEYS = 8
EXPECTED = (
    "a .json chat log holds one JSON document: a list of ShareGPT conversations "
    '({"id", "conversations": [...]}), of LoCoMo samples, a ChatGPT or Claude export\'s '
    "conversations.json, a Telegram or DiscordChatExporter export, or OpenAI-format chat: a "
    'conversation {"messages": [...]}, a message {"role", "content"}, or a list of them'
)


class Several:
    """The file holds more than one JSON value: JSON Lines, whatever its name."""


@dataclass(frozen=True)
class Told:
    """A chat log's format, with the document detection parsed to tell it (a `.json` file's
    that no export's keys told), for its reader; None when nothing was parsed."""

    format: str
    document: Any = None


def list_format(head: str) -> str | None:
    """The format of a JSON list told from the start of its file (`head`); None when no key
    known is in it."""
    # the first of these keys met names it: a later one may be inside a message's data
    found = [(head.find(key), fmt) for key, fmt in _LIST_KEYS.items() if key in head]
    if found:
        return min(found)[1]
    if any(key in head for key in _LOCOMO_KEYS):
        return "locomo"
    return None


def json_format(file: SourceFile, head: str) -> Told:
    """The format of the `.json` file `file`, whose text starts with `head`, that no export's
    keys told (`engine.ingest.readers`): OpenAI-format chat, or JSON Lines; with the document.

    Raises:
        InvalidInputError: the file is not JSON, or holds a document of no format known: the
            error says what it holds and what a `.json` chat log may hold.
    """
    document = one_document(file)
    if (isinstance(document, Several) and head.startswith("{")) or is_openai(document):
        return Told("openai-jsonl", document)
    held = document.reason if isinstance(document, ReadError) else f"it holds {_held(document)}"
    raise InvalidInputError(
        f"cannot tell the chat-log format of {file.shown!r}: {held}; {EXPECTED}; or pass "
        f"format= one of {get_args(ChatFormat)}"
    )


def one_document(file: SourceFile) -> Any | Several | ReadError:
    """The JSON document `file` holds; `Several` when it holds more than one value; a
    `ReadError` located at `file` when it is no JSON or no UTF-8."""
    try:
        text = file.path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        return file.error("file", "not valid UTF-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        return Several() if exc.msg == "Extra data" else file.error("file", f"invalid JSON: {exc}")
    except RecursionError:
        return file.error("file", "invalid JSON: nested too deeply")


def is_openai(document: object) -> bool:
    """True for an OpenAI-format conversation or message, or a list starting with one."""
    first = document[0] if isinstance(document, list) and document else document
    return isinstance(first, dict) and any(key in first for key in _OPENAI_KEYS)


def _held(document: object) -> str:
    if isinstance(document, dict):
        keys = list(document)
        shown = ", ".join(keys[:_SHOWN_KEYS]) + (", ..." if len(keys) > _SHOWN_KEYS else "")
        return f"a JSON object (keys: {shown})"
    if isinstance(document, list):
        first = f", the first {_held(document[0])}" if document else ""
        return f"a JSON list of {len(document)} items{first}"
    return f"a JSON {type(document).__name__}"
