"""Inputs that reach a query, a model or a setting: each one checked whole, bounded, and never
echoed back when it may be a secret."""

from __future__ import annotations

import pytest

from engine import cypher
from engine.errors import ConfigError, InvalidInputError
from engine.memory import Memory
from engine.transfer.snapshot import RelationshipRecord

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
