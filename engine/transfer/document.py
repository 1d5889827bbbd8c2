"""Reading a JSON export: a document given in memory, or a file named by an explicit path.

The caller says which it is by the type: `str` and `bytes` are always the document itself,
never a path, so text from outside (an upload, a tool argument) cannot make the engine open a
file, and an error about it never tells whether some path exists. A `pathlib.Path` (any
`os.PathLike`) is a file to read. Sizes are checked before a byte is parsed: a file by its
size, then by a read that stops one byte past the limit (it may grow in between).

Example:
    >>> parse_snapshot(Path("alice.json"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from engine.errors import InvalidInputError
from engine.normalize import check_user_id
from engine.transfer.import_limits import ImportLimits
from engine.transfer.snapshot import GraphSnapshot

Source = GraphSnapshot | Mapping[str, Any] | str | bytes | os.PathLike[str]
# a \uD800-\uDBFF escape no \uDC00-\uDFFF escape follows, or one of those with no
# \uD800-\uDBFF escape before it; `\\ud800` (an escaped backslash) is no escape
_LONE_SURROGATE = re.compile(
    r"(?<!\\)(?:\\\\)*(\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


def read_bounded(stream: IO[bytes], limits: ImportLimits | None, what: str) -> bytes:
    """All of `stream`, refused once it passes `limits.max_bytes` (never read further)."""
    if limits is None:
        return stream.read()
    data = stream.read(limits.max_bytes + 1)
    limits.check_size(len(data), what, at_least=len(data) > limits.max_bytes)
    return data


def read_file(path: Path, limits: ImportLimits | None) -> bytes:
    """The bytes of the export at `path`, its size checked before it is read.

    Raises:
        InvalidInputError: the file cannot be read (the caller named it: the reason is told).
        LimitExceededError: the file is over `limits.max_bytes`.
    """
    what = f"{str(path)!r}"
    try:
        with path.open("rb") as handle:
            if limits is not None:
                limits.check_size(os.fstat(handle.fileno()).st_size, what)
            return read_bounded(handle, limits, what)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {what}: {exc.strerror or exc}") from exc


def parse_snapshot(source: Source, limits: ImportLimits | None = None) -> GraphSnapshot:
    """A validated snapshot from a JSON export: the document (`str`, `bytes` or a mapping), or
    the file at an explicit path (`pathlib.Path`). A `str` is never read as a path.

    With `limits`, a document over `max_bytes` is refused before it is parsed.

    Raises:
        InvalidInputError: the file cannot be read, the text is not a graphmem JSON export
            (too deeply nested included), or it breaks the document's rules
            (see `engine.transfer.snapshot`).
        LimitExceededError: the document is larger than the limit.
    """
    if isinstance(source, GraphSnapshot):
        return source
    if isinstance(source, os.PathLike):
        source = read_file(Path(source), limits)
    elif limits is not None and isinstance(source, str | bytes):
        limits.check_size(len(source), "the export")
    if isinstance(source, str | bytes):
        _check_start(source)
    try:
        if isinstance(source, str | bytes):
            return GraphSnapshot.model_validate_json(source)
        return GraphSnapshot.model_validate(source)
    except ValidationError as exc:
        first = exc.errors()[0]
        escape = first["type"] == "json_invalid" and "hex escape" in first["msg"]
        lone = _lone_surrogate(source) if escape and isinstance(source, str | bytes) else None
        if lone is not None:
            raise InvalidInputError(f"not a valid graphmem export: {lone}") from exc
        raise InvalidInputError(f"not a valid graphmem export {_told(first)}") from exc


def _told(error: ErrorDetails) -> str:
    """Where and what pydantic found wrong: the field's path, and our validators' messages
    without pydantic's "Value error, " (a record's text names its field: "name is not valid
    Unicode text (a lone surrogate at 2)")."""
    where = ".".join(str(p) for p in error["loc"]) or "document"
    return f"at {where}: {error['msg'].removeprefix('Value error, ')}"


def _lone_surrogate(document: str | bytes) -> str | None:
    """Where the JSON text `document` holds its first lone surrogate escape, said in a user's
    terms (the parser says "unexpected end of hex escape"); None when it holds none."""
    text = document if isinstance(document, str) else document.decode("utf-8", "replace")
    found = _LONE_SURROGATE.search(text)
    if found is None:
        return None
    start = found.start(1)
    line, column = text.count("\n", 0, start) + 1, start - text.rfind("\n", 0, start)
    return (
        f"a lone surrogate escape ({found[1]}) at line {line} column {column} is not valid "
        "Unicode text and cannot be stored"
    )


def _check_start(document: str | bytes) -> None:
    head = document[:4096].lstrip()[:1]
    if head in ("{", b"{"):
        return
    hint = "; to read a file, pass its path as pathlib.Path" if isinstance(document, str) else ""
    raise InvalidInputError(
        "not a graphmem JSON export (it does not start with '{'); import reads the document "
        f"`graphmem export --format json` writes{hint}; a Cypher export runs in cypher-shell or "
        "Neo4j Browser instead"
    )


def target_user(user_id: str | None, users_from_file: bool) -> str | None:
    """The user an import writes for: `user_id`, or None for "the file's own user", which
    only an explicit `users_from_file=True` allows.

    Raises:
        InvalidInputError: neither or both given.
    """
    if user_id is None and not users_from_file:
        raise InvalidInputError(
            "import needs user_id: the user whose graph receives the export (the file does "
            "not choose); to restore a backup into the user it names, pass users_from_file=True"
        )
    if user_id is not None and users_from_file:
        raise InvalidInputError("give user_id or users_from_file=True, not both")
    return None if user_id is None else check_user_id(user_id)
