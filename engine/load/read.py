"""Reading a file of triples: TSV, CSV or JSONL, one `subject, predicate, object[, text]` a line.

Each line is checked on its own (columns, UTF-8, predicate, names and text within the limits);
a bad line becomes a `LineError` naming its number and the problem, and the lines after it
still load. A file that is not text at all (a NUL byte near its start) is refused whole.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.errors import InvalidInputError
from engine.normalize import check_storable, clean_text, normalize_predicate, spoken_predicate

TripleFormat = Literal["tsv", "csv", "jsonl"]
TRIPLE_FORMATS: tuple[TripleFormat, ...] = ("tsv", "csv", "jsonl")
_BY_SUFFIX: dict[str, TripleFormat] = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
}
_SNIFF_BYTES = 8192
_HEADER = ("subject", "predicate", "object", "text")
_MAX_LINE_BYTES = 1 << 20  # a line longer than this is reported, not parsed
# separators a file of triples may use in place of the one read (a format's own, or one
# given): each named in the error of a line of one column that it splits
_SEPARATORS = ("\t", "|", ";", ",")
_FORMAT_OF: dict[str, TripleFormat] = {"\t": "tsv", ",": "csv"}


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
class Limits:
    max_name_chars: int
    max_text_chars: int


def triple_format(path: Path, given: str = "auto") -> TripleFormat:
    """The format `given` names, or the one the file's suffix says ("auto").

    Raises:
        InvalidInputError: an unknown format, or a suffix that says none.
    """
    if given in TRIPLE_FORMATS:
        return given  # type: ignore[return-value]
    if given != "auto":
        raise InvalidInputError(f"format must be auto, {', '.join(TRIPLE_FORMATS)}; got {given!r}")
    found = _BY_SUFFIX.get(path.suffix.lower())
    if found is None:
        raise InvalidInputError(
            f"cannot tell the format of {path.name!r} from its suffix; pass --format "
            f"({', '.join(TRIPLE_FORMATS)})"
        )
    return found


def read_triples(
    path: Path, fmt: TripleFormat, limits: Limits, delimiter: str | None = None
) -> Iterator[Triple | LineError]:
    """Every line of `path` as a `Triple` or a `LineError`, in order. Blank lines are skipped;
    a first line that names the columns (subject, predicate, object[, text]) is a header.

    Raises:
        InvalidInputError: the file is missing, unreadable, or not text.
    """
    check_text_file(path)
    sep = delimiter if delimiter is not None else ("," if fmt == "csv" else "\t")
    if len(sep) != 1:
        raise InvalidInputError(f"the delimiter must be one character, got {sep!r}")
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            result = _line(number, raw, fmt, sep, limits)
            if result is not None:
                yield result


def check_text_file(path: Path) -> None:
    """Raises InvalidInputError when `path` cannot be read or is not a text file."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from exc
    if b"\x00" in head:
        line = head[: head.index(b"\x00")].count(b"\n") + 1
        raise InvalidInputError(
            f"{path}:{line}: a NUL byte: not a text file; expected TSV, CSV or JSONL triples"
        )


def _line(
    number: int, raw: bytes, fmt: TripleFormat, sep: str, limits: Limits
) -> Triple | LineError | None:
    if len(raw) > _MAX_LINE_BYTES:
        return LineError(number, f"the line has {len(raw)} bytes; the limit is {_MAX_LINE_BYTES}")
    try:
        text = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        return LineError(number, f"not UTF-8 text (byte {exc.start + 1} of the line)")
    if "\x00" in text:
        return LineError(number, "a NUL byte: not text")
    try:
        fields = _fields(text, fmt, sep)
    except InvalidInputError as exc:
        return LineError(number, str(exc))
    if number == 1 and tuple(f.strip().lower() for f in fields) == _HEADER[: len(fields)]:
        return None
    try:
        return _triple(number, fields, limits)
    except InvalidInputError as exc:
        return LineError(number, str(exc))


def _fields(text: str, fmt: TripleFormat, sep: str) -> list[str]:
    if fmt == "jsonl":
        return _json_fields(text)
    if fmt == "csv":
        try:
            rows = list(csv.reader([text], delimiter=sep, strict=True))
        except csv.Error as exc:
            raise InvalidInputError(f"malformed CSV ({exc})") from exc
        fields = rows[0] if rows else []
    else:
        fields = text.split(sep)
    if not 3 <= len(fields) <= 4:
        raise InvalidInputError(
            f"expected 3 or 4 columns (subject, predicate, object[, text]), got {len(fields)}"
            + (_separator_hint(text, fmt, sep) if len(fields) == 1 else "")
        )
    return fields


def _separator_hint(text: str, fmt: TripleFormat, sep: str) -> str:
    """What to pass when a line of one column splits into 3 or 4 at another common separator
    (a file of `Alice|LIVES_IN|Paris` read as TSV): each of its lines is an error otherwise."""
    for other in _SEPARATORS:
        if other != sep and 3 <= len(text.split(other)) <= 4:
            return f"; the line holds {other!r}: is that the separator? ({_option(other, fmt)})"
    return ""


def _option(separator: str, fmt: TripleFormat) -> str:
    own = _FORMAT_OF.get(separator)
    if own == fmt:  # the format's own separator, replaced by the one given
        return "leave out --delimiter"
    return f"pass --format {own}" if own else f"pass --delimiter '{separator}'"


def _json_fields(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:  # its own "line 1" would be a second location
        raise InvalidInputError(f"malformed JSON at column {exc.colno}: {exc.msg}") from exc
    except ValueError as exc:
        raise InvalidInputError(f"malformed JSON ({exc})") from exc
    except RecursionError as exc:  # json's decoder recurses once per [ or {
        raise InvalidInputError("JSON nested too deeply (a triple is one flat object)") from exc
    if isinstance(value, list):
        fields = value
    elif isinstance(value, dict):
        unknown = sorted(set(value) - set(_HEADER))
        if unknown:
            raise InvalidInputError(f"unknown keys {', '.join(unknown)}; expected {_HEADER}")
        missing = [k for k in _HEADER[:3] if k not in value]
        if missing:
            raise InvalidInputError(f"missing {', '.join(missing)}")
        fields = [value[k] for k in _HEADER if k in value and value[k] is not None]
    else:
        raise InvalidInputError("expected a JSON object or array")
    if not 3 <= len(fields) <= 4:
        raise InvalidInputError(f"expected 3 or 4 values, got {len(fields)}")
    if not all(isinstance(f, str) for f in fields):
        raise InvalidInputError("subject, predicate, object and text must be strings")
    return fields


def _triple(number: int, fields: list[str], limits: Limits) -> Triple:
    """A line's fact, checked as `add_facts` checks one (a NUL or lone surrogate a JSON
    escape gives is refused, not cleaned), before cleaning, which would make a value of one
    alone blank text (the line's length bounds that pass)."""
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
