"""Inputs that reach a query, a model or a setting: each one checked whole, bounded, and never
echoed back when it may be a secret."""

from __future__ import annotations

import pytest

from engine import cypher
from engine.errors import InvalidInputError
from engine.snapshot import RelationshipRecord

TRAILING = ["FRIEND_OF\n", "FRIEND_OF\r\n", "FRIEND_OF\n MATCH (n) DETACH DELETE n"]


@pytest.mark.parametrize("rel_type", TRAILING)
def test_a_relationship_type_is_checked_whole(rel_type: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        cypher.with_rel_type("MERGE (s)-[r:__REL_TYPE__]->(o)", rel_type)
    assert "UPPER_SNAKE_CASE" in str(caught.value)


@pytest.mark.parametrize("rel_type", TRAILING)
def test_an_imported_relationship_type_is_checked_whole(rel_type: str) -> None:
    with pytest.raises(ValueError, match="relationship type"):
        RelationshipRecord(type=rel_type)
