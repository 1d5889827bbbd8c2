"""Entity types as labels (:Entity:Person) and the labels LlamaIndex reads, on every adapter."""

from __future__ import annotations

import pytest

from engine import cypher
from engine.errors import InvalidInputError
from engine.normalize import normalize_label


def test_labels_are_validated_before_they_reach_a_query() -> None:
    text = cypher.load("set_entity_labels", "neo4j")
    assert "SET e:`Person`" in cypher.with_label(text, "Person")
    assert "SET e:`País`" in cypher.with_label(text, "País")
    assert "SET e:`人物`" in cypher.with_label(text, "人物")
    bad_labels = ["Person`) DETACH DELETE e //", "person", "país", "Person\n", "P`x", "Entity", ""]
    for bad in [*bad_labels, "History", "Pa ís", "X" * 65]:
        with pytest.raises(InvalidInputError):
            cypher.with_label(text, bad)
    merge = cypher.load("merge_fact_relationships", "neo4j")
    assert "[r:`住在`|`FRIEND_OF` {" in cypher.with_rel_types(merge, ["住在", "FRIEND_OF"])
    for bad_type in ["FRIEND_OF\n", "FRIEND_OF`]->()", "friend_of", "ESTÁ CASADO", "_X", ""]:
        with pytest.raises(InvalidInputError):
            cypher.with_rel_type(merge, bad_type)


def test_a_type_that_would_shadow_graphmems_own_labels_is_no_type() -> None:
    assert normalize_label("history") is None
    assert normalize_label("Episode") is None
    assert normalize_label("sports team") == "SportsTeam"
    assert normalize_label("país") == "País"
    assert normalize_label("город") == "Город"
    assert normalize_label("人物") == "人物"
