"""Cypher literals: the one place graphmem writes values into Cypher text.

Everything graphmem sends to a database passes values as parameters. The Cypher export is the
documented exception: a script a person pastes into Neo4j Browser or feeds to cypher-shell
cannot carry parameters, so `inline_parameters` turns a named statement from `cypher/` into a
parameter-free one by replacing each `$name` with the literal of its value.

A string literal is single-quoted; inside it only `'` and `\\` could end or bend the literal,
and both are escaped, so no value can break out of it. Line breaks and other control, line
separator and bidi-override characters are escaped too (`\\n`, `\\uXXXX`): a value never
spans lines and never reorders what a reader sees. Other characters, emoji and accents
included, stay as they are (the script is UTF-8). FalkorDB's parser does not decode `\\uXXXX`
(it keeps the six characters), so for FalkorDB `unicode_escapes=False` leaves those
characters raw inside the quotes, where they are inert, and refuses NUL, which it cannot
hold. Floats must be finite, integers must fit in 64 bits, map keys must be plain identifiers
(they come from graphmem's own models).

Example:
    >>> literal({"name": "O'Brien\\n", "tags": [1, 2.5, None, True]})
    "{name: 'O\\\\'Brien\\\\n', tags: [1, 2.5, null, true]}"
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

from engine.errors import InvalidInputError

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_SHORT_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp"})
_BIDI_CONTROLS = frozenset([*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F])
_INT64 = range(-(2**63), 2**63)


def _escape(ch: str, unicode_escapes: bool) -> str:
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    if not unicode_escapes:
        if ch == "\x00":
            raise InvalidInputError("NUL cannot be written in a FalkorDB string literal")
        return ch
    if unicodedata.category(ch) in _ESCAPED_CATEGORIES or ord(ch) in _BIDI_CONTROLS:
        return f"\\u{ord(ch):04X}"  # every such character is in the BMP: one \u unit
    return ch


def string_literal(value: str, *, unicode_escapes: bool = True) -> str:
    """`value` as a single-quoted Cypher string literal.

    Raises:
        InvalidInputError: NUL without `unicode_escapes`.
    """
    return "'" + "".join(_escape(ch, unicode_escapes) for ch in value) + "'"


def _float_literal(value: float) -> str:
    if not math.isfinite(value):
        raise InvalidInputError(f"{value!r} has no Cypher literal")
    # repr is the shortest text that reads back to the same double; Cypher's exponent
    # takes no '+' sign.
    return repr(value).replace("e+", "e")


def _map_literal(value: Mapping[Any, Any], unicode_escapes: bool) -> str:
    entries = []
    for key, item in value.items():
        if not isinstance(key, str) or not _IDENTIFIER.fullmatch(key):
            raise InvalidInputError(f"map key {key!r} is not a plain identifier")
        entries.append(f"{key}: {literal(item, unicode_escapes=unicode_escapes)}")
    return "{" + ", ".join(entries) + "}"


def literal(value: Any, *, unicode_escapes: bool = True) -> str:
    """The Cypher literal of `value`: None, bool, int, float, str, list/tuple or mapping.

    Raises:
        InvalidInputError: a value with no Cypher literal (NaN, infinity, an integer beyond
            64 bits, a map key that is not an identifier, any other type; NUL without
            `unicode_escapes`).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if value not in _INT64:
            raise InvalidInputError(f"{value} does not fit in a 64-bit Cypher integer")
        return str(value)
    if isinstance(value, float):
        return _float_literal(value)
    if isinstance(value, str):
        return string_literal(value, unicode_escapes=unicode_escapes)
    if isinstance(value, list | tuple):
        items = (literal(item, unicode_escapes=unicode_escapes) for item in value)
        return "[" + ", ".join(items) + "]"
    if isinstance(value, Mapping):
        return _map_literal(value, unicode_escapes)
    raise InvalidInputError(f"a {type(value).__name__} has no Cypher literal")


def inline_parameters(text: str, params: Mapping[str, Any], *, unicode_escapes: bool = True) -> str:
    """`text` with every `$name` replaced by the literal of `params[name]`.

    `text` must be one of graphmem's own statements (no `$` inside its string literals). The
    replacement is a single pass, so a value's literal is never scanned again.

    Raises:
        KeyError: `text` uses a parameter missing from `params`.
    """
    return _PARAMETER.sub(
        lambda m: literal(params[m.group(1)], unicode_escapes=unicode_escapes), text
    )
