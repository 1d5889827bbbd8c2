"""Inputs that reach a query, a model or a setting: each one checked whole, bounded, and never
echoed back when it may be a secret."""

from __future__ import annotations

import pytest

from engine import cypher
from engine.errors import ConfigError, InvalidInputError
from engine.memory import Memory
from engine.transfer.snapshot import RelationshipRecord
from tests.encodes import record_encodes

TRAILING = ["FRIEND_OF\n", "FRIEND_OF\r\n", "FRIEND_OF\n MATCH (n) DETACH DELETE n"]


@pytest.mark.parametrize("rel_type", TRAILING)
def test_a_relationship_type_is_checked_whole(rel_type: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        cypher.with_rel_type("MERGE (s)-[r:__REL_TYPE__]->(o)", rel_type)
    assert "UPPER_SNAKE_CASE" in str(caught.value)


@pytest.mark.parametrize("rel_type", TRAILING)
def test_every_group_of_a_union_read_is_checked_whole(rel_type: str) -> None:
    text = cypher.load("probe_typed", "falkordb")
    with pytest.raises(InvalidInputError) as caught:
        cypher.with_rel_type_groups(text, [["LIKES"], [rel_type]])
    assert "UPPER_SNAKE_CASE" in str(caught.value)


@pytest.mark.parametrize("rel_type", TRAILING)
def test_an_imported_relationship_type_is_checked_whole(rel_type: str) -> None:
    with pytest.raises(ValueError, match="relationship type"):
        RelationshipRecord(type=rel_type)


def test_a_misspelt_setting_never_echoes_its_value() -> None:
    secret = "sk-proj-THIS-IS-A-SECRET-0123456789"
    with pytest.raises(ConfigError) as caught:
        Memory(openai_key=secret)
    message = str(caught.value)
    assert secret not in message and caught.value.__cause__ is None
    assert "openai_key is not a setting (did you mean openai_api_key?)" in message


def test_a_bad_setting_value_is_named_not_echoed() -> None:
    with pytest.raises(ConfigError) as caught:
        Memory(search_limit="hunter2-password")
    assert "search_limit" in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_huge_query_embeds_a_bounded_number_of_words(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    query = " ".join(f"zq{i}x" for i in range(6000))[: memory.settings.max_message_chars]
    calls = record_encodes(memory.embedder, monkeypatch)
    memory.search(query, user_id="alice")
    inputs = [t for call in calls for t in call]
    words = {t for t in inputs if t.startswith("zq") and " " not in t}
    assert len(words) <= 64  # max_query_words (was every distinct word: about 4,600)
    assert len(inputs) <= 64 + 10  # + the query itself and the user's predicates
