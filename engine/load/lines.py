"""The lines of a file of triples, whatever its format: opened (gzip-compressed too), each
decoded on its own, a bad one a `LineError` naming its number, and a valid line's fact
checked and cleaned into a `Triple`."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from io import BufferedIOBase
from pathlib import Path

from engine.errors import InvalidInputError
from engine.normalize import check_storable, clean_text, normalize_predicate, spoken_predicate

_SNIFF_BYTES = 8192
_MAX_LINE_BYTES = 1 << 20  # a line longer than this is reported, not parsed


@dataclass(frozen=True, slots=True)
class Triple:
    """One valid line: names and text cleaned, the predicate in UPPER_SNAKE_CASE."""

    line: int
    subject: str
    predicate: str
    object: str
    text: str


@dataclass(frozen=True, slots=True)
class LineError:
    line: int
    reason: str

    def located(self, path: Path | str) -> str:
        """`path:line: reason`, the one style of every error about a line of a file."""
        return f"{path}:{self.line}: {self.reason}"


@dataclass(frozen=True, slots=True)
class Naming:
    """A line that names an entity instead of stating a fact (an RDF label)."""

    line: int


@dataclass(frozen=True, slots=True)
class Limits:
    max_name_chars: int
    max_text_chars: int


def open_file(path: Path) -> BufferedIOBase:
    """`path` opened for reading bytes; a `.gz` file decompressed."""
    if path.suffix.lower() == ".gz":
        return gzip.open(path, "rb")
    return path.open("rb")


def check_text_file(path: Path) -> None:
    """Raises InvalidInputError when `path` cannot be read or is not a text file."""
    try:
        with open_file(path) as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:  # gzip.BadGzipFile is one
        raise InvalidInputError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    except (EOFError, zlib.error) as exc:
        raise InvalidInputError(f"cannot read {str(path)!r}: a broken gzip file ({exc})") from exc
    if b"\x00" in head:
        line = head[: head.index(b"\x00")].count(b"\n") + 1
        raise InvalidInputError(
            f"{path}:{line}: a NUL byte: not a text file; expected TSV, CSV, JSONL or N-Triples"
        )


def decoded_lines(path: Path) -> Iterator[tuple[int, str | LineError]]:
    """Each line of `path` that is not blank, by number: its text, or why it cannot be read.

    Raises:
        InvalidInputError: a gzip file that breaks off part way.
    """
    try:
        with open_file(path) as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    yield number, _decoded(number, raw)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InvalidInputError(f"cannot read {str(path)!r}: a broken gzip file ({exc})") from exc


def checked_triple(number: int, fields: list[str], limits: Limits) -> Triple:
    """A line's fact, checked as `add_facts` checks one (a NUL or lone surrogate a JSON
    escape gives is refused, not cleaned), before cleaning, which would make a value of one
    alone blank text (the line's length bounds that pass).

    Raises:
        InvalidInputError: a value that cannot be stored, or a predicate that cannot be a type.
    """
    for value, named in zip(fields, ("subject", "predicate", "object", "fact text"), strict=False):
        check_storable(value, named)
    subject = clean_text(fields[0], "subject", limits.max_name_chars)
    obj = clean_text(fields[2], "object", limits.max_name_chars)
    predicate = normalize_predicate(fields[1])
    if len(fields) == 4 and fields[3].strip():
        text = clean_text(fields[3], "fact text", limits.max_text_chars)
    else:
        text = f"{subject} {spoken_predicate(fields[1])} {obj}"
    return Triple(number, subject, predicate, obj, text)


def _decoded(number: int, raw: bytes) -> str | LineError:
    if len(raw) > _MAX_LINE_BYTES:
        return LineError(number, f"the line has {len(raw)} bytes; the limit is {_MAX_LINE_BYTES}")
    try:
        # a byte order mark (Windows tools write one) opens the file, not its first line
        text = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        return LineError(number, f"not UTF-8 text (byte {exc.start + 1} of the line)")
    if "\x00" in text:
        return LineError(number, "a NUL byte: not text")
    return text
