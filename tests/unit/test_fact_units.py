"""A fact's `valid_unit` says how precisely its `valid_at` is known: no time, no unit.

Every door (the CLI's and MCP's JSON, `model_dump`) shows the `Fact` model, so the model holds
the rule, also for a store that kept a unit on a fact with no time (a hand edit, an import).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.models import Fact
from engine.transfer.snapshot import FactRecord

SUBJECT, OBJECT = {"name": "Ann", "uid": "s"}, {"name": "Rome", "uid": "o"}
PROPS = {"uid": "f", "user_id": "u", "predicate": "LIVES_IN", "text": "Ann lives in Rome"}
MAY_1 = datetime(2024, 5, 1, tzinfo=UTC)


def fact(**fields: object) -> Fact:
    ends = {"subject": "Ann", "object": "Rome", "subject_uid": "s", "object_uid": "o"}
    return Fact.model_validate(PROPS | ends | fields)


def test_a_fact_with_no_time_has_no_unit() -> None:
    assert fact().valid_unit is None
    assert fact().model_dump(mode="json")["valid_unit"] is None
    assert fact(valid_unit="year").valid_unit is None


def test_a_fact_with_a_time_and_no_unit_is_known_to_the_day() -> None:
    assert fact(valid_at=MAY_1).valid_unit == "day"
    assert fact(valid_at=MAY_1, valid_unit="year").valid_unit == "year"


@pytest.mark.parametrize("stored", [None, "day", "year", "fortnight"])
def test_a_stored_unit_without_a_time_reads_as_none(stored: str | None) -> None:
    read = Fact.from_props(PROPS | {"valid_unit": stored}, SUBJECT, OBJECT)
    assert read.valid_at is None and read.valid_unit is None


def test_a_stored_time_without_a_unit_reads_as_a_day() -> None:
    read = Fact.from_props(PROPS | {"valid_at": MAY_1.timestamp()}, SUBJECT, OBJECT)
    assert read.valid_unit == "day"


def test_an_export_record_keeps_no_unit_without_a_time() -> None:
    """An import writes what its records hold: a unit with no time is not written."""
    ends = {"uid": "f", "subject_uid": "s", "object_uid": "o", "predicate": "LIVES_IN"}
    record = FactRecord.model_validate(ends | {"text": "Ann lives in Rome", "valid_unit": "year"})
    timed = FactRecord.model_validate(ends | {"text": "x", "valid_at": 1.0, "valid_unit": "year"})
    assert (record.valid_unit, timed.valid_unit) == (None, "year")
