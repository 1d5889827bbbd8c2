"""A fact's `valid_at` given to `add_facts` is read as every door reads a time: "2023" as
text was stored as 1970-01-01 00:33:43 (pydantic reads it as epoch seconds) where `update`,
`search` and the CLI refuse it, and "29.12.2023", which they read, was refused."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.add.facts import validate_facts
from engine.config import Settings
from engine.errors import InvalidInputError
from engine.times import parse_time

SETTINGS = Settings()


def _valid_at(value: object) -> float | None:
    fact = {"subject": "Dana", "predicate": "WORKS_AT", "object": "Acme", "valid_at": value}
    (clean,) = validate_facts([fact], SETTINGS)
    return clean.valid_at


@pytest.mark.parametrize(
    "value", ["2024-05-01", "2024-05-01T09:30+02:00", "29.12.2023", 1700000000, 1700000000000]
)
def test_valid_at_is_read_as_every_door_reads_a_time(value: object) -> None:
    when = parse_time(value, "valid_at")
    assert when is not None and _valid_at(value) == when.timestamp()


def test_a_naive_datetime_is_utc_and_none_is_undated() -> None:
    assert _valid_at(datetime(2019, 1, 1)) == datetime(2019, 1, 1, tzinfo=UTC).timestamp()
    assert _valid_at(None) is None


def test_a_bare_year_as_text_is_refused_not_read_as_1970() -> None:
    with pytest.raises(InvalidInputError, match=r"fact #0: .*'2023-01-01'"):
        _valid_at("2023")
