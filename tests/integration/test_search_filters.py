"""Metadata filters on search (issue 52, M6): `Memory.search(filters=...)`, MCP
`search_memory` and `graphmem search --filter` keep the hits whose messages' metadata match,
inside the asking user's graph."""

from __future__ import annotations

import pytest

from engine.cli import build_parser
from engine.errors import InvalidInputError
from engine.mcp_server import tools as mcp_tools
from engine.memory import Memory

QUESTION = "What does Maria play?"


@pytest.fixture
def tagged(memory: Memory) -> Memory:
    memory.add("Maria plays the violin.", user_id="u", metadata={"topic": "music", "n": 1})
    memory.add("Maria plays tennis.", user_id="u", metadata={"topic": "sport", "n": 2})
    memory.add("Maria plays chess.", user_id="v", metadata={"topic": "music", "n": 3})
    return memory


def _said(memory: Memory, **filters: object) -> set[str]:
    result = memory.search(QUESTION, user_id="u", filters=filters or None)
    return {h.episode.text for h in result.episodes} | {h.fact.text for h in result.facts}


def test_filters_keep_what_matching_messages_said(tagged: Memory) -> None:
    every = _said(tagged)
    music = _said(tagged, topic="music")
    not_music = _said(tagged, topic={"ne": "music"})
    either = _said(tagged, n={"in": [1, 2]})

    assert any("violin" in t for t in every) and any("tennis" in t for t in every)
    assert any("violin" in t for t in music) and not any("tennis" in t for t in music)
    assert any("tennis" in t for t in not_music) and not any("violin" in t for t in not_music)
    assert not any("chess" in t for t in every | either)  # another user's, whatever matches
    assert _said(tagged, topic="nothing") == set()
    assert either == every


def test_bad_filters_are_refused(tagged: Memory) -> None:
    for bad in ("topic", {"topic": {"gt": 1}}, {"AND": []}, {"n": {"in": 1}}):
        with pytest.raises(InvalidInputError, match="filters"):
            tagged.search(QUESTION, user_id="u", filters=bad)  # type: ignore[arg-type]


def test_mcp_and_cli_take_filters(tagged: Memory) -> None:
    found = mcp_tools.search_memory(tagged, "u", QUESTION, filters={"topic": "sport"})
    args = build_parser().parse_args(
        ["search", QUESTION, "--user", "u", "--filter", "topic=sport", "--filter", "n=2"]
    )

    assert "tennis" in found.text and "violin" not in found.text
    assert args.filter == [("topic", "sport"), ("n", 2)]


def test_a_filter_finds_its_message_below_many_that_do_not_match(memory: Memory) -> None:
    """A message the filter admits that ranks below `limit` x 4 others was not in the
    candidates the filter saw: the search asks for more until enough match."""
    home = [
        {"role": "user", "content": f"I drink green tea at home on day {i}."} for i in range(60)
    ]
    for start in range(0, len(home), 20):
        memory.add(home[start : start + 20], user_id="u", metadata={"topic": "home"})
    memory.add(
        "The office ordered paper, pens and some tea.", user_id="u", metadata={"topic": "work"}
    )
    everything = memory.search("green tea at home", user_id="u", limit=12)
    assert all("office" not in h.episode.text for h in everything.episodes)  # ranked below
    result = memory.search("green tea at home", user_id="u", limit=3, filters={"topic": "work"})
    assert [h.episode.text for h in result.episodes] == [
        "The office ordered paper, pens and some tea."
    ]
