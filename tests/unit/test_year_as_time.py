"""A bare year typed as a time (`--since 2023`, MCP's `"until": "2023"`, `ts="2023"`) is
refused, naming what it would have meant: read as epoch seconds it was 33 minutes into 1970,
and every window it bounded held nothing, or everything, without a word. A number stays epoch
seconds, as documented (`ts=1000.0 + i` in a script)."""

from __future__ import annotations

import pytest

from engine.errors import InvalidInputError
from engine.times import parse_time


@pytest.mark.parametrize("value", ["2023", " 1999 "])
def test_a_year_typed_alone_is_refused_with_the_full_date_to_write(value: str) -> None:
    year = value.strip()
    with pytest.raises(InvalidInputError) as refused:
        parse_time(value, "since")
    assert str(refused.value) == (
        f"since {year!r} would be read as {year} seconds after 1970-01-01: for the year, "
        f"write a full date ('{year}-01-01')"
    )


@pytest.mark.parametrize(
    "value, year", [(2023, 1970), (1000.0, 1970), ("999", 1970), ("10000", 1970), (1.7e9, 2023)]
)
def test_numbers_and_other_numeric_text_are_epoch_seconds(value: object, year: int) -> None:
    when = parse_time(value, "since")
    assert when is not None and when.year == year
