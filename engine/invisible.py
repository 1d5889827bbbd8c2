"""Invisible format characters in an id, refused: an id is shown, and two ids shown alike
would be two users no one can tell apart.

Unicode's format characters (category Cf: the zero-width space U+200B, the word joiner
U+2060, the byte order mark U+FEFF, the soft hyphen, the bidirectional controls U+202A-U+202E
and U+2066-U+2069, the tags U+E0020-U+E007F) print as nothing, or turn the text around them,
so "alice\u200b" shows as "alice". Two are kept where they change what is drawn: the
zero-width joiner between two emoji (one emoji drawn of two: woman + laptop is a woman
technologist), and either joiner (U+200C, U+200D) inside a word of a script they shape (a
Persian word's non-joiner, a Sinhala conjunct's joiner).
"""

from __future__ import annotations

import unicodedata

from engine.errors import InvalidInputError

_ZWJ, _ZWNJ = "\u200d", "\u200c"
_EMOJI_STYLE = "\ufe0f"
# the scripts whose letters a joiner joins or keeps apart, as Unicode names their characters
_SHAPED_SCRIPTS = frozenset(
    {
        "ARABIC", "SYRIAC", "NKO", "MONGOLIAN", "DEVANAGARI", "BENGALI", "GURMUKHI", "GUJARATI",
        "ORIYA", "TAMIL", "TELUGU", "KANNADA", "MALAYALAM", "SINHALA", "KHMER", "MYANMAR",
    }
)  # fmt: skip


def check_visible(value: str, what: str) -> None:
    """Refuse `value` when it holds a format character (Unicode category Cf) that prints as
    nothing, but for the joiners that shape an emoji or a word (see the module docstring).

    Raises:
        InvalidInputError: naming the first such character by its code point and name.
    """
    hidden = hidden_at(value)
    if hidden:
        char = value[hidden[0]]
        name = unicodedata.name(char, "a format character")
        raise InvalidInputError(
            f"{what} {value!r} holds an invisible format character U+{ord(char):04X} "
            f"{name}: it prints as nothing or turns the text around it, so the id would "
            f"pass for another ({_shown(value)!r}); leave it out"
        )


def hidden_at(value: str) -> list[int]:
    """The places in `value` of the characters `check_visible` refuses."""
    return [
        index
        for index, char in enumerate(value)
        if unicodedata.category(char) == "Cf" and not _shapes(value, index)
    ]


def escaped(value: str) -> str:
    """`value` with each character `check_visible` refuses written as its code point, as
    Python and bash's `$'...'` write it (`alice\\u200b`): an id stored before they were
    refused, shown so that it passes for no other."""
    hidden = set(hidden_at(value))
    return "".join(
        _code_point(char) if index in hidden else char for index, char in enumerate(value)
    )


def _code_point(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _shapes(text: str, index: int) -> bool:
    """True when the joiner at `index` joins two emoji, or stands inside a word of a script it
    shapes."""
    char = text[index]
    if char not in (_ZWJ, _ZWNJ) or index in (0, len(text) - 1):
        return False
    before, after = text[index - 1], text[index + 1]
    if char == _ZWJ and (_is_emoji(before) or before == _EMOJI_STYLE) and _is_emoji(after):
        return True
    return _in_word(before) and _in_word(after) and _script(before) in _SHAPED_SCRIPTS


def _is_emoji(char: str) -> bool:
    """A pictograph (a skin tone too) of the blocks emoji are drawn from."""
    code = ord(char)
    return unicodedata.category(char) in ("So", "Sk") and (
        0x2000 <= code <= 0x2BFF or code >= 0x1F000
    )


def _in_word(char: str) -> bool:
    return unicodedata.category(char)[0] in "LM"


def _script(char: str) -> str:
    return unicodedata.name(char, "").partition(" ")[0]


def _shown(value: str) -> str:
    return "".join(c for c in value if unicodedata.category(c) != "Cf")
