"""An unusable fact given to `add_facts` is refused naming the field: pydantic's message
alone ("Extra inputs are not permitted", "Input should be a valid string") did not say
which field, nor which fields a fact has."""

from __future__ import annotations

import pytest

from engine.add.facts import validate_facts
from engine.config import Settings
from engine.errors import InvalidInputError

BAD = {
    "unknown field": (
        {"subject": "A", "predicate": "KNOWS", "object": "B", "since": "2020-01-01"},
        "'since' is not a field of a fact (subject, predicate, object, text, subject_type, "
        "object_type, valid_at, confidence)",
    ),
    "invalid_at": (
        {"subject": "A", "predicate": "KNOWS", "object": "B", "invalid_at": "2020-01-01"},
        "'invalid_at' is not a field of a fact",
    ),
    "missing object": ({"subject": "A", "predicate": "KNOWS"}, "object: Field required"),
    "number object": (("A", "KNOWS", 5), "object: Input should be a valid string"),
    "confidence": (
        {"subject": "A", "predicate": "KNOWS", "object": "B", "confidence": 2},
        "confidence: Input should be less than or equal to 1",
    ),
    "bad time": (
        {"subject": "A", "predicate": "KNOWS", "object": "B", "valid_at": "someday"},
        "valid_at 'someday' is not",
    ),
}


@pytest.mark.parametrize("fact, says", BAD.values(), ids=list(BAD))
def test_a_bad_fact_is_refused_naming_the_field(fact: object, says: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        validate_facts([("A", "KNOWS", "B"), fact], Settings())
    assert str(caught.value).startswith("fact #1: invalid fact ")
    assert says in str(caught.value), caught.value
