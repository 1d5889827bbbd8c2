"""Entity types as labels (:Entity:Person) and the labels LlamaIndex reads, on every adapter."""

from __future__ import annotations

import pytest

from engine import cypher
from engine.errors import InvalidInputError
from engine.normalize import normalize_label


def test_labels_are_validated_before_they_reach_a_query() -> None:
    text = cypher.load("set_entity_labels", "neo4j")
    assert "SET e:Person" in cypher.with_label(text, "Person")
    for bad in ["Person`) DETACH DELETE e //", "person", "Person\n", "Entity", "History", ""]:
        with pytest.raises(InvalidInputError):
            cypher.with_label(text, bad)
    with pytest.raises(InvalidInputError):
        cypher.with_rel_type(cypher.load("merge_fact_relationships", "neo4j"), "FRIEND_OF\n")


def test_a_type_that_would_shadow_graphmems_own_labels_is_no_type() -> None:
    assert normalize_label("history") is None
    assert normalize_label("Episode") is None
    assert normalize_label("sports team") == "SportsTeam"
