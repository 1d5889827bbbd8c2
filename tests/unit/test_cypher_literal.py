"""The Cypher literal encoder behind the Cypher export: every value reads back unchanged and
no value can leave its literal."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import InvalidInputError
from engine.transfer.cypher_literal import inline_parameters, literal, string_literal

_SHORT = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def decode(text: str) -> str:
    """Read a single-quoted Cypher string literal the way Neo4j's lexer does."""
    assert text[0] == text[-1] == "'"
    body, out, i = text[1:-1], [], 0
    while i < len(body):
        ch = body[i]
        assert ch not in "'\n\r\u2028\u2029", f"unescaped {ch!r} at {i}"
        if ch != "\\":
            out.append(ch)
            i += 1
        elif body[i + 1] == "u":
            out.append(chr(int(body[i + 2 : i + 6], 16)))
            i += 6
        else:
            out.append(_SHORT[body[i + 1]])
            i += 2
    return "".join(out)


HOSTILE = [
    "O'Brien",
    'say "hi"',
    "back\\slash\\",
    "`backtick`",
    "'}) DETACH DELETE n //",
    "\\'}) DETACH DELETE n //",
    "line\nbreak\r\nand\ttab",
    "Zoë 😀 李雷 👨‍👩‍👧",
    "nul\x00byte\x1bescape\x7f",
    "bidi \u202eevil\u202c and \u2028line sep\u2029",
    "$user_id",
    "",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_strings_decode_back(value: str) -> None:
    encoded = string_literal(value)
    assert decode(encoded) == value
    assert "\n" not in encoded and "\x00" not in encoded and "\u202e" not in encoded


@given(st.text())
def test_any_text_decodes_back(value: str) -> None:
    assert decode(string_literal(value)) == value


def test_values_of_every_kind() -> None:
    value = {"a": [1, -2, 2.5, 1e16, 1e-07, None, True, False], "b": {"c": "x"}}
    assert literal(value) == "{a: [1, -2, 2.5, 1e16, 1e-07, null, true, false], b: {c: 'x'}}"
    assert literal((1, "a")) == "[1, 'a']"


@pytest.mark.parametrize(
    "value", [math.nan, math.inf, -math.inf, 2**63, {"bad key": 1}, {"a`": 1}, object(), b"x"]
)
def test_values_without_a_literal_are_refused(value: object) -> None:
    with pytest.raises(InvalidInputError):
        literal(value)


def test_inline_parameters_never_rescans_a_value() -> None:
    text = "MATCH (e {user_id: $user_id}) SET e.name = $name RETURN e"
    out = inline_parameters(text, {"user_id": "$name", "name": "'}) DETACH DELETE e //"})
    assert out == ("MATCH (e {user_id: '$name'}) SET e.name = '\\'}) DETACH DELETE e //' RETURN e")
    with pytest.raises(KeyError):
        inline_parameters("RETURN $missing", {})


def test_without_unicode_escapes_only_quote_and_backslash_matter() -> None:
    assert string_literal("\u202e'\\\n", unicode_escapes=False) == "'\u202e\\'\\\\\\n'"
    with pytest.raises(InvalidInputError):
        string_literal("a\x00", unicode_escapes=False)
