"""A message's `content` given as OpenAI content parts, read for its text.

OpenAI's chat format lets a message's `content` be a list of typed parts:
`[{"type": "text", "text": "..."}, {"type": "image_url", "image_url": {...}}]`. Only text is
memory: the text parts (`text`, and the Responses API's `input_text` and `output_text`) are
read, in order, joined by a line break; a part of another type (`image_url`, `input_audio`,
`file`, an assistant's `refusal`) is left out and named. `add` and the OpenAI-format chat-log
reader read parts alike.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.errors import InvalidInputError
from engine.normalize import check_length_of

TEXT_TYPES = ("text", "input_text", "output_text")
_SHAPE = '{"type": "text", "text": "..."}'


def parts_text(parts: list[object], what: str, max_chars: int | None = None) -> tuple[str, str]:
    """The text of the content parts `parts` (the text parts, blank ones skipped, joined by a
    line break) and a note naming the types of the parts left out ("" when none were).

    Raises:
        InvalidInputError: an empty list, a part that is no object with a `type`, a text part
            whose `text` is no string, or no text part at all (naming the types there are).
        LimitExceededError: the text parts together are longer than `max_chars` (checked
            before they are joined).
    """
    if not parts:
        raise InvalidInputError(f"{what} is an empty list of parts")
    texts: list[str] = []
    others: list[str] = []
    for index, item in enumerate(parts):
        kind, part = _typed(item, f"{what}[{index}]")
        if kind in TEXT_TYPES:
            texts.append(_text(part, f"{what}[{index}]"))
        elif kind not in others:
            others.append(kind)
    if not texts:
        raise InvalidInputError(
            f"{what} has no text part (its parts: {', '.join(others)}): only text is read"
        )
    if max_chars is not None:
        check_length_of(texts, what, max_chars)
    return "\n".join(t for t in texts if t.strip()), _left_out(others)


def _typed(part: object, where: str) -> tuple[str, Mapping[str, object]]:
    """The part's type, and the part."""
    if not isinstance(part, Mapping):
        raise InvalidInputError(
            f"{where} must be an object such as {_SHAPE}, got {type(part).__name__}"
        )
    kind = part.get("type")
    if not isinstance(kind, str) or not kind.strip():
        raise InvalidInputError(f"{where} has no type (a part is an object such as {_SHAPE})")
    return kind, part


def _text(part: Mapping[str, object], where: str) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise InvalidInputError(
            f"{where}: the text of a text part must be a string, got {type(text).__name__}"
        )
    return text


def _left_out(kinds: list[str]) -> str:
    if not kinds:
        return ""
    if len(kinds) == 1:
        return f"its {kinds[0]} part is left out (only text is read)"
    return f"its {', '.join(kinds[:-1])} and {kinds[-1]} parts are left out (only text is read)"
