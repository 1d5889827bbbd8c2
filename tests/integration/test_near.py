"""A search `near` a name (whom the conversation is about): that entity anchors the search as
if the query named it, at every door that searches: Python, the CLI and MCP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.errors import InvalidInputError
from engine.mcp_server import tools
from engine.memory import Memory

QUESTION = "What does she love?"
SAID = ["Kate loves cooking.", "Kate works at UCLA.", "Bob loves chess.", "Ann loves painting."]


def _people(memory: Memory) -> None:
    for text in SAID:
        memory.add(text, user_id="u")


def test_the_entity_a_search_is_near_anchors_it(memory: Memory) -> None:
    _people(memory)

    for name, first in [("Bob", "Bob loves chess"), ("kate", "Kate loves cooking")]:
        result = memory.search(QUESTION, user_id="u", near=name)
        assert result.anchors == [name.title()]
        assert result.facts[0].fact.text == first
    plain = memory.search(QUESTION, user_id="u")
    assert plain.anchors == []


def test_a_name_nothing_holds_is_said_and_bad_names_are_refused(memory: Memory) -> None:
    _people(memory)

    result = memory.search(QUESTION, user_id="u", near=["Bob", "Zed"])
    assert (result.anchors, result.unknown_names) == (["Bob"], ["Zed"])
    with pytest.raises(InvalidInputError, match="mode 'dual' or 'expansion'"):
        memory.search(QUESTION, user_id="u", near="Bob", mode="semantic")
    with pytest.raises(InvalidInputError, match="at most 20"):
        memory.search(QUESTION, user_id="u", near=[f"p{i}" for i in range(21)])
    with pytest.raises(InvalidInputError, match="a name or a list of names"):
        memory.search(QUESTION, user_id="u", near=7)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="a name in near is empty"):
        memory.search(QUESTION, user_id="u", near=["Bob", " "])


def test_the_cli_and_mcp_search_near_a_name(
    memory: Memory, cli_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _people(memory)
    answer = tools.search_memory(memory, "u", QUESTION, near=["Bob"])
    assert answer.data["anchors"] == ["Bob"]
    assert answer.text.index("Bob loves chess") < answer.text.index("Kate loves cooking")

    home = ["--data-dir", str(cli_home)]
    for text in SAID:
        assert main([*home, "add", text, "--user", "u"]) == 0
    capsys.readouterr()
    assert main(["--json", *home, "search", QUESTION, "--user", "u", "--near", "Bob"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["anchors"] == ["Bob"] and found["facts"][0]["fact"]["text"] == "Bob loves chess"
    assert main([*home, "search", QUESTION, "--user", "u", "--near", " "]) == 2
    assert "a name in --near is empty" in capsys.readouterr().err


def test_another_users_entity_is_no_name_to_be_near(memory: Memory) -> None:
    _people(memory)
    memory.add("Eve loves tea.", user_id="other")

    result = memory.search(QUESTION, user_id="other", near=["Bob", "Eve"])
    assert (result.anchors, result.unknown_names) == (["Eve"], ["Bob"])
    assert {hit.fact.user_id for hit in result.facts} == {"other"}


def test_a_search_near_a_name_means_it_too(memory: Memory) -> None:
    """In a graph of many alike facts, the legs that read the query's meaning read the name
    it is near as well: her facts lead, not the facts nearest 'who does she know?' alone."""
    people = [f"Person {i}" for i in range(60)]
    facts = [(p, "KNOWS", people[(i + 7) % 60]) for i, p in enumerate(people)]
    facts += [(p, "WORKS_AT", f"Company {i % 9}") for i, p in enumerate(people)]
    memory.add_facts(facts, user_id="kb")

    top = memory.search("who does she know?", user_id="kb", near="Person 42").facts[:2]
    assert all("Person 42" in (h.fact.subject, h.fact.object) for h in top)
    assert {h.fact.predicate for h in top} == {"KNOWS"}


def test_a_name_is_near_as_entity_finds_it(memory: Memory) -> None:
    memory.add("Katherine Lee loves tennis.", user_id="u")

    result = memory.search("What does she love?", user_id="u", near="katherinelee")
    assert (result.anchors, result.unknown_names) == (["Katherine Lee"], [])


def test_a_name_and_its_alias_are_one_anchor(memory: Memory) -> None:
    _people(memory)
    memory.add("Katie loves tennis.", user_id="u")
    memory.merge_entities("Kate", "Katie", user_id="u")

    assert memory.search(QUESTION, user_id="u", near=["Kate", "Katie"]).anchors == ["Kate"]
