"""A message's metadata is stored as standard JSON text, or refused naming what is wrong."""

from __future__ import annotations

import math

import pytest

from engine.add.messages import metadata_json
from engine.errors import InvalidInputError


def test_metadata_keeps_its_values_as_json_text() -> None:
    assert metadata_json({"b": 1.5, "a": ["x", None]}) == '{"a": ["x", null], "b": 1.5}'


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_a_number_json_cannot_write_is_refused(number: float) -> None:
    """NaN and Infinity would be stored, and exported, as JSON no other reader takes."""
    with pytest.raises(InvalidInputError, match=r"metadata.*Out of range float"):
        metadata_json({"score": number})
