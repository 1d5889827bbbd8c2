"""What a search derives for a user and stores with the user's data for the next process
(`stored_index`, `stored_relations`): each one ASCII string (a JSON header, then raw bytes,
in base64), written in the background, and never worth an error to the search that wrote it:
a reader that cannot use it derives it again."""

from __future__ import annotations

import base64
import json
import logging
import struct
from collections.abc import Callable
from typing import Any

from engine.errors import GraphmemError, StoreUnavailableError
from engine.retrieval.background import BACKGROUND

log = logging.getLogger(__name__)
_HEAD = struct.Struct("<Q")  # the length of the JSON header that opens the data


def pack(header: object, body: bytes) -> str:
    head = json.dumps(header, separators=(",", ":")).encode()
    return base64.b64encode(_HEAD.pack(len(head)) + head + body).decode()


def unpack(data: str) -> tuple[Any, memoryview] | None:
    """The header and the bytes `pack` was given; None when `data` is not what it gives."""
    try:
        raw = base64.b64decode(data, validate=True)
        (size,) = _HEAD.unpack_from(raw)
        header = json.loads(raw[_HEAD.size : _HEAD.size + size])
    except (ValueError, struct.error):
        return None
    return header, memoryview(raw)[_HEAD.size + size :]


def store_later(write: Callable[[], object], what: str) -> None:
    """Run `write` in the background; a store closed or stopped meanwhile drops it silently,
    another failure is logged (the next process derives `what` again)."""
    BACKGROUND.submit(_write, write, what)


def _write(write: Callable[[], object], what: str) -> None:
    try:
        write()
    except StoreUnavailableError:
        pass
    except GraphmemError as exc:
        log.warning("could not store %s: %s", what, exc)
