"""What `add` takes of its messages (`engine.add.messages.parse_messages`): a message it cannot
use is left out of a list and named in the errors, or refused alone, never stored to say
nothing. No store: the parsing alone."""

from __future__ import annotations

import re

import pytest

from engine.add.messages import parse_messages
from engine.errors import InvalidInputError

LIMIT = 1000


def _parse(messages: object) -> tuple[list[tuple[str, str]], list[str]]:
    parsed, errors = parse_messages(messages, LIMIT, 100)  # type: ignore[arg-type]
    return [(m.role, m.content) for m in parsed], errors


def test_a_message_of_an_unknown_role_is_left_out_and_named() -> None:
    kept, errors = _parse(
        [{"role": "robot", "content": "I live in Paris."}, {"role": "user", "content": "Hi."}]
    )
    assert kept == [("user", "Hi.")]
    [error] = errors
    assert error.startswith("message #0 left out: unknown role 'robot'")
    assert "assistant, developer, function, system, tool, user" in error
    assert "'name'" in error  # where a speaker's name goes


def test_a_lone_message_of_an_unknown_role_is_refused() -> None:
    with pytest.raises(InvalidInputError, match="unknown role 'Alice'"):
        _parse({"role": "Alice", "content": "I live in Paris."})


@pytest.mark.parametrize("role", ["User", "USER", " user ", "Assistant"])
def test_a_known_role_in_any_case_is_taken_in_lower_case(role: str) -> None:
    kept, errors = _parse([{"role": role, "content": "I live in Paris."}])
    assert kept == [(role.strip().casefold(), "I live in Paris.")] and errors == []


ALIASES = [("human", "user"), ("Human", "user"), ("ai", "assistant"), ("model", "assistant")]


@pytest.mark.parametrize("role, read", ALIASES)
def test_other_apis_words_for_the_roles_are_read_as_them(role: str, read: str) -> None:
    kept, errors = _parse([{"role": role, "content": "I live in Paris."}])
    assert kept == [(read, "I live in Paris.")] and errors == []


def _parts(*parts: dict[str, object]) -> dict[str, object]:
    return {"role": "user", "content": list(parts)}


TEXT = {"type": "text", "text": "I live in Oslo."}
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}
AUDIO = {"type": "input_audio", "input_audio": {"data": "...", "format": "wav"}}


def test_openai_content_parts_are_read_for_their_text_parts_joined_by_lines() -> None:
    more = {"type": "text", "text": "I work in Bergen."}
    kept, errors = _parse([_parts(TEXT, more)])
    assert kept == [("user", "I live in Oslo.\nI work in Bergen.")] and errors == []


def test_a_part_that_is_no_text_is_named_where_the_message_is_kept() -> None:
    kept, errors = _parse([_parts(IMAGE, TEXT, AUDIO, IMAGE)])
    assert kept == [("user", "I live in Oslo.")]
    assert errors == [
        "message #0: its image_url and input_audio parts are left out (only text is read)"
    ]
    assert _parse(_parts(TEXT, IMAGE))[1] == [  # a lone message too
        "message: its image_url part is left out (only text is read)"
    ]


def test_a_message_of_parts_without_text_is_left_out_naming_their_types() -> None:
    kept, errors = _parse([_parts(IMAGE, AUDIO), {"role": "user", "content": "Hi."}])
    assert kept == [("user", "Hi.")]
    assert errors == [
        "message #0 left out: message content has no text part (its parts: image_url, "
        "input_audio): only text is read"
    ]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ([], "message content is an empty list of parts"),
        (["I live in Oslo."], "message content[0] must be an object such as"),
        ([{"text": "I live in Oslo."}], "message content[0] has no type"),
        ([{"type": "text", "text": 3}], "message content[0]: the text of a text part must be"),
    ],
)
def test_malformed_parts_are_named(content: list[object], said: str) -> None:
    with pytest.raises(InvalidInputError, match=re.escape(said)):
        _parse({"role": "user", "content": content})
