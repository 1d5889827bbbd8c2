"""Reading a file of triples: TSV, CSV or JSONL, one `subject, predicate, object[, text]` a line,
or RDF N-Triples (`engine.load.ntriples`); any of them gzip-compressed (`.gz`).

Each line is checked on its own (columns, UTF-8, predicate, names and text within the limits);
a bad line becomes a `LineError` naming its number and the problem, and the lines after it
still load. A file that is not text at all (a NUL byte near its start) is refused whole.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from engine.errors import InvalidInputError
from engine.load.lines import (
    Limits,
    LineError,
    Naming,
    Triple,
    check_text_file,
    checked_triple,
    decoded_lines,
)
from engine.load.ntriples import node_name, predicate_name, read_names, read_statements

TripleFormat = Literal["tsv", "csv", "jsonl", "nt"]
TRIPLE_FORMATS: tuple[TripleFormat, ...] = ("tsv", "csv", "jsonl", "nt")
_BY_SUFFIX: dict[str, TripleFormat] = {
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "tsv",
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".nt": "nt",
    ".ntriples": "nt",
}
_HEADER = ("subject", "predicate", "object", "text")
# separators a file of triples may use in place of the one read (a format's own, or one
# given): each named in the error of a line of one column that it splits
_SEPARATORS = ("\t", "|", ";", ",")
_FORMAT_OF: dict[str, TripleFormat] = {"\t": "tsv", ",": "csv"}


def triple_format(path: Path, given: str = "auto") -> TripleFormat:
    """The format `given` names, or the one the file's suffix says ("auto").

    Raises:
        InvalidInputError: an unknown format, or a suffix that says none.
    """
    if given in TRIPLE_FORMATS:
        return given  # type: ignore[return-value]
    if given != "auto":
        raise InvalidInputError(f"format must be auto, {', '.join(TRIPLE_FORMATS)}; got {given!r}")
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes[-1:] == [".gz"]:  # kb.nt.gz is N-Triples, compressed
        suffixes.pop()
    found = _BY_SUFFIX.get(suffixes[-1]) if suffixes else None
    if found is None:
        raise InvalidInputError(
            f"cannot tell the format of {path.name!r} from its suffix; pass --format "
            f"({', '.join(TRIPLE_FORMATS)})"
        )
    return found


def read_triples(
    path: Path, fmt: TripleFormat, limits: Limits, delimiter: str | None = None
) -> Iterator[Triple | LineError | Naming]:
    """Every line of `path` as a `Triple`, a `LineError` or (N-Triples) a `Naming`, in order.
    Blank lines are skipped; a first line that names the columns (subject, predicate,
    object[, text]) is a header.

    Raises:
        InvalidInputError: the file is missing, unreadable, or not text.
    """
    check_text_file(path)
    if fmt == "nt":
        if delimiter is not None:
            raise InvalidInputError("N-Triples has no delimiter to choose; leave out --delimiter")
        yield from _ntriples(path, limits)
        return
    sep = delimiter if delimiter is not None else ("," if fmt == "csv" else "\t")
    if len(sep) != 1:
        raise InvalidInputError(f"the delimiter must be one character, got {sep!r}")
    for number, text in decoded_lines(path):
        result = text if isinstance(text, LineError) else _line(number, text, fmt, sep, limits)
        if result is not None:
            yield result


def _ntriples(path: Path, limits: Limits) -> Iterator[Triple | LineError | Naming]:
    names = read_names(path)
    for number, statement in read_statements(path):
        if isinstance(statement, LineError):
            yield statement
        elif statement is None:
            continue
        elif statement.is_label:
            yield Naming(number)
        else:
            try:
                subject = node_name(statement.subject, names)
                obj = node_name(statement.object, names)
                predicate = predicate_name(statement.predicate, names)
                yield checked_triple(number, [subject, predicate, obj], limits)
            except InvalidInputError as exc:
                yield LineError(number, str(exc))


def _line(
    number: int, text: str, fmt: TripleFormat, sep: str, limits: Limits
) -> Triple | LineError | None:
    try:
        fields = _fields(text, fmt, sep)
    except InvalidInputError as exc:
        return LineError(number, str(exc))
    if number == 1 and tuple(f.strip().lower() for f in fields) == _HEADER[: len(fields)]:
        return None
    try:
        return checked_triple(number, fields, limits)
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


__all__ = ["Limits", "LineError", "Naming", "Triple", "read_triples", "triple_format"]
