"""A search `as_of` a time: what the memory held then (the messages said by then, the facts
true then, ended since or not), at every door that searches: Python, the CLI and MCP."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main
from engine.errors import InvalidInputError
from engine.mcp_server import tools
from engine.memory import Memory
from engine.models import SearchResult

QUESTION = "Where do I live?"


def _moved(memory: Memory) -> None:
    memory.add("I live in Berlin.", user_id="u", ts="2022-03-01")
    memory.add("I live in Oslo.", user_id="u", ts="2024-06-01")


def _places(result: SearchResult) -> set[str]:
    return {hit.fact.object for hit in result.facts if hit.fact.predicate == "LIVES_IN"}


def test_a_search_as_of_a_time_finds_what_was_true_then(memory: Memory) -> None:
    _moved(memory)

    then = memory.search(QUESTION, user_id="u", as_of="2023-01-01")
    now = memory.search(QUESTION, user_id="u")
    after = memory.search(QUESTION, user_id="u", as_of="2025-01-01")
    before = memory.search(QUESTION, user_id="u", as_of="2021-12-31")

    assert (_places(then), _places(now), _places(after)) == ({"Berlin"}, {"Oslo"}, {"Oslo"})
    berlin = next(h.fact for h in then.facts if h.fact.object == "Berlin")
    assert berlin.invalid_at is not None  # ended since, true then
    assert [e.episode.text for e in then.episodes] == ["I live in Berlin."]
    assert (before.facts, before.episodes) == ([], [])


def test_as_of_bounds_a_window_and_refuses_one_after_it(memory: Memory) -> None:
    _moved(memory)

    bounded = memory.search(QUESTION, user_id="u", until="2030-01-01", as_of="2023-01-01")
    assert _places(bounded) == {"Berlin"}
    with pytest.raises(InvalidInputError, match=r"since .* is later than as_of"):
        memory.search(QUESTION, user_id="u", since="2024-01-01", as_of="2023-01-01")


def test_the_cli_and_mcp_search_as_of(
    memory: Memory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _moved(memory)

    answer = tools.search_memory(memory, "u", QUESTION, as_of="2023-01-01T00:00:00Z")
    assert "Berlin" in answer.text and "Oslo" not in answer.text
    home = str(tmp_path / "home")
    late = ["--data-dir", home, "search", QUESTION, "--user", "u", "--since", "2024-01-01"]
    assert main([*late, "--as-of", "2023-01-01"]) == 2
    assert "later than as_of" in capsys.readouterr().err
