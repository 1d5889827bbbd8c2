"""What `add` takes of its messages (`engine.add.messages.parse_messages`): a message it cannot
use is left out of a list and named in the errors, or refused alone, never stored to say
nothing. No store: the parsing alone."""

from __future__ import annotations

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
