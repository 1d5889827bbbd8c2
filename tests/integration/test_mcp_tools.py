"""The MCP tools as plain functions over a real `Memory`: what they take and what they answer
(the wire itself: test_mcp.py, test_mcp_logs.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InvalidInputError, LimitExceededError, NotFoundError
from engine.mcp_server import tools
from engine.mcp_server.tools import FactIn
from engine.memory import Memory


def test_a_fact_repeated_in_one_add_facts_call_counts_once(memory: Memory) -> None:
    tea = FactIn(subject="Bob", predicate="likes", object="Tea")
    out = tools.add_facts(memory, "bob", [tea, ["Bob", "LIKES", "Tea"], tea])
    (fact,) = memory.get_all("bob")
    assert (out.data["facts_added"], fact.mentions) == (1, 1)
    assert memory.entity("Bob", "bob").entity.mentions == 1


def test_add_facts_answers_the_count_of_facts_it_stored(memory: Memory) -> None:
    tea = FactIn(subject="Gus", predicate="likes", object="Tea")
    given: list[FactIn | list[str]] = [tea, ["gus", "LIKES", "Tea"], ["Gus", "likes", "Rum"]]
    repeated = tools.add_facts(memory, "gus", given)
    distinct = tools.add_facts(memory, "gus", [["Gus", "likes", "Gin"]])
    assert repeated.text.startswith(
        "Stored 2 fact(s) (3 given, a repeated fact counted once) for user 'gus': 2 new facts,"
    )
    assert distinct.text.startswith("Stored 1 fact(s) for user 'gus': 1 new facts,")
    assert memory.stats("gus").facts == 3


def test_add_memory_keeps_the_metadata_search_memory_filters_on(memory: Memory) -> None:
    tools.add_memory(memory, "carol", "Maria plays the violin.", metadata={"topic": "music"})
    tools.add_memory(memory, "carol", "Maria plays the violin too.", metadata={"topic": "sport"})
    music = tools.search_memory(memory, "carol", "violin", filters={"topic": "music"})
    others = tools.search_memory(memory, "carol", "violin", filters={"topic": {"ne": "music"}})
    with pytest.raises(LimitExceededError) as long:
        tools.add_memory(memory, "carol", "A long one.", metadata={"note": "x" * 40_000})
    assert [e["episode"]["text"] for e in music.data["episodes"]] == ["Maria plays the violin."]
    assert [e["episode"]["text"] for e in others.data["episodes"]] == [
        "Maria plays the violin too."
    ]
    assert "metadata has" in str(long.value)
    assert memory.stats("carol").episodes == 2


def test_memory_history_of_an_id_the_user_does_not_hold_is_not_found(
    memory: Memory, tmp_path: Path
) -> None:
    memory.add_facts([("Dan", "LIKES", "Tea")], "dan")
    (fact,) = memory.get_all("dan")
    triples = tmp_path / "dan.tsv"
    triples.write_text("Zoe\tLIKES\tJazz\n", encoding="utf-8")
    memory.load(triples, "dan")
    zoe = memory.entity("Zoe", "dan").entity
    added = tools.memory_history(memory, "dan", fact.uid)
    quiet = tools.memory_history(memory, "dan", zoe.uid)  # a load records no entity event
    with pytest.raises(NotFoundError) as unknown:
        tools.memory_history(memory, "dan", "f00d")
    with pytest.raises(NotFoundError) as others:
        tools.memory_history(memory, "eve", fact.uid)
    assert [e["event"] for e in added.data["events"]] == ["ADD"]
    assert quiet.data["events"] == [] and quiet.text.startswith("No change of")
    assert str(unknown.value) == "user 'dan' has no fact or entity 'f00d'"
    assert fact.uid in str(others.value) and "'eve'" in str(others.value)


def test_add_facts_refuses_an_entity_type_that_is_no_label_naming_it(memory: Memory) -> None:
    bad = FactIn(subject="Ann", predicate="likes", object="Tea", object_type="!!")
    with pytest.raises(InvalidInputError) as info:
        tools.add_facts(memory, "fay", [bad])
    assert str(info.value).startswith("fact #0: object_type '!!' cannot be an entity type")
    assert memory.get_all("fay") == []
