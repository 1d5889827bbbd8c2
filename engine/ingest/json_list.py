"""The items of a JSON list read one at a time, so a large file is never parsed whole.

A ChatGPT export's `conversations.json` can be hundreds of megabytes; `json.load` would hold
the whole tree at once. `json_items` holds the text of one item (plus a read-ahead chunk) and
the item it is decoding: memory grows with the largest item, not with the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any, TextIO

from engine.ingest.chat_records import ReadError
from engine.ingest.fields import Item, SourceFile

CHUNK_CHARS = 1 << 20
_SPACE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


class NotAList(ValueError):
    """The document does not start with `[`."""


class BadItem(ValueError):
    """Item `number` (from 1) is not valid JSON, or what follows it is not `,` or `]`;
    `number` is None for text after the list."""

    def __init__(self, number: int | None, reason: str) -> None:
        super().__init__(reason if number is None else f"item {number}: {reason}")
        self.number = number
        self.reason = reason


def json_items(handle: TextIO, chunk_chars: int = CHUNK_CHARS) -> Iterator[Any]:
    """Each item of the JSON list `handle` holds, in order.

    Raises (while iterating):
        NotAList: the document is not a list.
        BadItem: an item is invalid JSON, or the list is malformed after it.
        UnicodeDecodeError: the file is not valid in `handle`'s encoding.
    """
    text = _Text(handle, chunk_chars)
    if text.peek() != "[":
        raise NotAList("the document is not a JSON list")
    text.pos += 1
    if text.peek() == "]":
        text.pos += 1
    else:
        yield from _items(text)
    if text.peek():
        raise BadItem(None, "extra data after the list")


def file_items(
    file: SourceFile, what: str, visit: Callable[[int, Any], Iterator[Item]]
) -> Iterator[Item]:
    """What `visit(number, item)` gives for each item of the JSON list in `file` (numbered from
    1), in order. A file that is not a list of `what` ("conversations"), not valid JSON or not
    UTF-8 gives one `ReadError` where the fault is: the items before it are read."""
    try:
        with file.path.open(encoding="utf-8-sig") as handle:
            for number, item in enumerate(json_items(handle), start=1):
                yield from visit(number, item)
    except NotAList:
        yield _not_a_list(file, what)
    except BadItem as exc:
        yield file.error("file" if exc.number is None else f"record {exc.number}", exc.reason)
    except UnicodeDecodeError:
        yield file.error("file", "not valid UTF-8")


def _not_a_list(file: SourceFile, what: str) -> ReadError:
    data = file.load_json()  # only to say what the file holds instead
    if isinstance(data, ReadError):
        return data
    return file.error("file", f"expected a JSON list of {what}, got {type(data).__name__}")


def _items(text: _Text) -> Iterator[Any]:
    number = 0
    while True:
        number += 1
        text.peek()  # the decoder does not skip white space
        yield text.value(number)
        after = text.peek()
        text.pos += 1
        if after == "]":
            return
        if after != ",":
            found = repr(after) if after else "the end of the file"
            raise BadItem(number, f"expected ',' or ']' after it, found {found}")


def _invalid(exc: json.JSONDecodeError, text: str) -> str:
    """The reason for an item that does not decode: the decoder's, without the place its
    message would end with, and whether the file ends inside the item (a download cut short)."""
    said = f"invalid JSON: {exc.msg.removesuffix(' starting at')}"
    if exc.msg.startswith("Unterminated string") or exc.pos >= len(text.rstrip()):
        said += "; the file ends inside it: cut short?"
    return said


class _Text:
    """The unread text of the file: a buffer, where decoding stands in it, and the file."""

    def __init__(self, handle: TextIO, chunk_chars: int) -> None:
        self.handle, self.chunk_chars = handle, chunk_chars
        self.buffer, self.pos, self.eof = "", 0, False

    def more(self, at_least: int) -> bool:
        """Drop what was decoded and read on; False at the end of the file."""
        if self.eof:
            return False
        piece = self.handle.read(max(self.chunk_chars, at_least))
        self.buffer, self.pos = self.buffer[self.pos :] + piece, 0
        self.eof = not piece
        return bool(piece)

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            match = _SPACE.match(self.buffer, self.pos)
            self.pos = match.end() if match else self.pos
            if self.pos < len(self.buffer) or not self.more(0):
                return self.buffer[self.pos : self.pos + 1]

    def value(self, number: int) -> Any:
        """Decode the value that starts here, reading on until it is whole."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                # an item cut by the end of the buffer: read as much again, so a large item
                # is decoded a few times at most
                if self.more(len(self.buffer) - self.pos):
                    continue
                raise BadItem(number, _invalid(exc, self.buffer)) from exc
            except RecursionError as exc:
                raise BadItem(number, "invalid JSON: nested too deeply") from exc
            if end < len(self.buffer) or not self.more(0):  # a number may go on in the file
                self.pos = end
                return value
