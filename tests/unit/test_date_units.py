"""How precisely a date phrase gives its date: "last year" is a year, not the day a year ago.

`resolve_date` keeps the date it always gave (time filters and ranking read it) and says the
unit it is known to beside it, so nothing shows a day the message never said.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.extraction.offline.dates import Dated, resolve_date

MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def day(year: int, month: int, date: int) -> datetime:
    return datetime(year, month, date, tzinfo=UTC)


@pytest.mark.parametrize(
    ("phrase", "past", "at", "unit"),
    [
        ("yesterday", True, day(2023, 5, 7), "day"),
        ("today", True, day(2023, 5, 8), "day"),
        ("tomorrow", False, day(2023, 5, 9), "day"),
        ("on Monday", True, day(2023, 5, 1), "day"),
        ("last Friday", True, day(2023, 5, 5), "day"),
        ("two days ago", True, day(2023, 5, 6), "day"),
        ("8 May 2023", True, day(2023, 5, 8), "day"),
        ("May 8, 2023", True, day(2023, 5, 8), "day"),
        ("last week", True, day(2023, 5, 1), "week"),
        ("two weeks ago", True, day(2023, 4, 24), "week"),
        ("a few weeks ago", True, day(2023, 4, 17), "week"),
        ("last weekend", True, day(2023, 5, 6), "week"),  # a Saturday or a Sunday: its week
        ("last month", True, day(2023, 4, 8), "month"),
        ("a month ago", True, day(2023, 4, 8), "month"),
        ("next month", False, day(2023, 6, 8), "month"),
        ("in May", True, day(2023, 5, 1), "month"),
        ("last May", True, day(2022, 5, 1), "month"),
        ("June 2022", True, day(2022, 6, 1), "month"),
        ("in June 2022", True, day(2022, 6, 1), "month"),
        ("last year", True, day(2022, 5, 8), "year"),
        ("two years ago", True, day(2021, 5, 8), "year"),
        ("in 2022", True, day(2022, 1, 1), "year"),
        ("2021", True, day(2021, 1, 1), "year"),
    ],
)
def test_a_phrase_gives_its_date_and_how_precisely_it_is_known(
    phrase: str, past: bool, at: datetime, unit: str
) -> None:
    assert resolve_date(phrase, MAY_8, past=past) == Dated(at, unit)  # type: ignore[arg-type]


@pytest.mark.parametrize("phrase", ["the other day", "summer", "every day"])
def test_a_phrase_that_names_no_date_gives_none(phrase: str) -> None:
    assert resolve_date(phrase, MAY_8) is None


def test_a_relative_phrase_needs_the_message_time_and_an_absolute_one_does_not() -> None:
    assert resolve_date("last year", None) is None
    assert resolve_date("in 2022", None) == Dated(day(2022, 1, 1), "year")
