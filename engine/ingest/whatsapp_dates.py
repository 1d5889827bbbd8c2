"""The dates and times of a WhatsApp export, read in the order its phone wrote them.

An export writes dates in its phone's locale: `12/31/23` (US), `31/12/2023` (UK), `31.12.23`,
`2023-12-31`, and times as `21:15`, `9:15 PM` or `21:15:03`. A slash or dash date whose first
two numbers are both 12 or less reads either way, so the order is told from the whole file: a
first number above 12 says day first, a second above 12 month first, and where no number says
it, the order under which the messages run forward in time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from typing import Literal

from engine.errors import InvalidInputError

Order = Literal["day", "month"]
DATE = r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}"
TIME = r"\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:[ \u202f\u00a0]?[AaPp]\.?[ \u202f\u00a0]?[Mm]\.?)?"
_NUMBERS = re.compile(r"\d+")
_CLOCK = re.compile(r"(\d{1,2})[:.](\d{2})(?:[:.](\d{2}))?\W*(?:([AaPp])\.?\W*[Mm]\.?)?")


@dataclass(frozen=True, slots=True)
class DateOrder:
    """How a file's dates are read, and why where its dates' numbers did not say."""

    order: Order
    guessed: str | None = None  # why, where no date's numbers told the order


def date_order(dates: list[str]) -> DateOrder:
    """The order of `dates` (all of one file, in file order).

    Raises:
        InvalidInputError: dates that need both orders (a 31/12 and a 12/31).
    """
    parts = [[int(n) for n in _NUMBERS.findall(d)] for d in dates if not _fixed(d)]
    day_first = any(p[0] > 12 for p in parts)
    month_first = any(p[1] > 12 for p in parts)
    if day_first and month_first:
        raise InvalidInputError(
            "the dates read neither day first nor month first throughout (one has a first "
            "number above 12, another a second): is the file two exports joined?"
        )
    if day_first or month_first or not parts:
        return DateOrder("month" if month_first else "day")
    orders: tuple[Order, ...] = ("month", "day")
    forward = [order for order in orders if _runs_forward(dates, order)]
    both = "every date reads day first and month first (no number above 12): read"
    if len(forward) == 1:
        why = f"{both} {forward[0]} first, the one order in which the messages run forward"
        return DateOrder(forward[0], why)
    return DateOrder("month", f"{both} month first, as phones set to US English write them")


def message_time(date: str, clock: str, order: DateOrder) -> datetime:
    """The moment a message header names, naive as the file writes it, taken as UTC.

    Raises:
        InvalidInputError: a date or time that does not exist (a 30 February, a 25:00).
    """
    a, b, c = (int(n) for n in _NUMBERS.findall(date))
    if re.match(r"\d{4}", date):
        year, month, day = a, b, c
    elif "." in date or order.order == "day":
        year, month, day = c, b, a
    else:
        year, month, day = c, a, b
    year += 2000 if year < 100 else 0
    hour, minute, second = _clock(clock)
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:
        raise InvalidInputError(f"no such time: {date}, {clock} ({exc})") from exc


def has_seconds(clock: str) -> bool:
    match = _CLOCK.match(clock)
    return match is not None and match[3] is not None


def _clock(clock: str) -> tuple[int, int, int]:
    match = _CLOCK.match(clock)
    if match is None:
        raise InvalidInputError(f"no such time: {clock}")
    hour, minute, second = int(match[1]), int(match[2]), int(match[3] or 0)
    if match[4] is not None:
        if not 1 <= hour <= 12:
            raise InvalidInputError(f"no such time: {clock}")
        hour = hour % 12 + (12 if match[4] in "Pp" else 0)
    return hour, minute, second


def _fixed(date: str) -> bool:
    """A date only one order reads: dotted (day first) or year first."""
    return "." in date or re.match(r"\d{4}", date) is not None


def _runs_forward(dates: list[str], order: Order) -> bool:
    try:
        days = [message_time(d, "0:00", DateOrder(order)) for d in dates]
    except InvalidInputError:
        return False
    return all(x <= y for x, y in pairwise(days))
