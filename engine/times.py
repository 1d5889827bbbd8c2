"""One reading of a point in time for every door: `add`'s `ts`, `search`'s `since` and
`until`, and the chat-log readers (`engine.ingest.fields` may delegate here).

Accepted: a datetime (naive meaning UTC) or a date (its midnight, UTC); epoch seconds or
milliseconds as a number or numeric text, told apart by magnitude (from 1e11, about the year
5138 in seconds and 1973 in milliseconds, a number is milliseconds); ISO 8601 text
("2024-05-01", "2024-05-01T09:30:00+02:00", "...Z"); and dates as people write them when they
give a full date ("29.12.2023, 22:42:04" day first, "Dec 29, 2023 10:42 PM"). Anything else,
NaN and infinities included, is an `InvalidInputError` naming the field; so is a window
whose `since` is later than its `until` (`time_window`).

A fact's time also says how precisely it is known (`TimeUnit`): "last year" is stored as the
same date a year before and known to the year. A time with no unit (given by a caller, or
stored before units existed) is known to the day.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time, tzinfo
from typing import Annotated, Literal, get_args

from dateutil import parser as dateparser
from dateutil import tz
from pydantic import AfterValidator, BeforeValidator, Field, ValidationInfo

from engine.errors import InvalidInputError

TimeLike = datetime | date | float | int | str | None
TimeUnit = Literal["day", "week", "month", "year"]  # how precisely a fact's time is known
TIME_UNITS: tuple[TimeUnit, ...] = get_args(TimeUnit)
DAY: TimeUnit = "day"
_UNITS: dict[str, TimeUnit] = {unit: unit for unit in TIME_UNITS}

MS_FROM = 1e11  # a number this large or larger is epoch milliseconds
_MAX_MS = 1e14  # ... up to about the year 5138 again
NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")
_YEAR = re.compile(r"[12]\d{3}")  # four digits of text, 1000-2999: a year
DOTTED_DATE = re.compile(r"\b\d{1,2}\.\d{1,2}\.\d{2,4}\b")  # 29.12.2023: day first
_UTC_NAMES = frozenset({"UTC", "GMT", "UT", "Z"})
# Two defaults that differ in year, month and day: a text that leaves one of them out reads
# differently under each, so a time without a full date is caught rather than dated today.
FULL_DATE_DEFAULTS = (datetime(2000, 1, 1), datetime(2001, 2, 2))
_FORMS = (
    "a datetime, an ISO 8601 date or time ('2024-05-01', '2024-05-01T09:30:00Z') "
    "or epoch seconds or milliseconds"
)


def epoch(value: object, what: str) -> float | None:
    """`value` (see the module docstring) as epoch seconds; None for None and blank text.

    Raises:
        InvalidInputError: not a time; the message names `what` and the accepted forms.
    """
    when = parse_time(value, what)
    return when.timestamp() if when is not None else None


def time_window(since: object, until: object) -> tuple[float | None, float | None]:
    """`since` and `until` (see the module docstring) as epoch seconds, each None when not
    given: the window every door reads (`search`, `get_all`, `entity`, `top_entities`, the
    CLI, MCP). `since` equal to `until` is the one instant.

    Raises:
        InvalidInputError: either is not a time, or `since` is later than `until` (a window
            that holds nothing, most often given the wrong way round); the message names both.
    """
    start, end = parse_time(since, "since"), parse_time(until, "until")
    if start is not None and end is not None and start > end:
        raise InvalidInputError(
            f"since ({_iso(start)}) is later than until ({_iso(end)}): the window holds "
            "nothing; swap them"
        )
    return (None if start is None else start.timestamp(), None if end is None else end.timestamp())


# The embedded store (FalkorDB) gives a stored number back to 15 significant digits: a time
# of 2024 comes back to 10 us. Some window checks run in the store on the exact time, others
# in Python on the time given back.
_STORED_DIGITS = 15


def read_window(since: object, until: object) -> tuple[float | None, float | None]:
    """`time_window(since, until)` widened by the stored times' resolution (10 us for a time
    of our era), so every door keeps the same messages and facts at a bound: a time given to
    the microsecond (a Slack `ts`) and the time graphmem shows for it (read back from the
    store) both fall inside `since == until`.

    Raises:
        InvalidInputError: as `time_window`.
    """
    start, end = time_window(since, until)
    return (
        None if start is None else start - _resolution(start),
        None if end is None else end + _resolution(end),
    )


def as_of_window(
    since: object, until: object, as_of: object
) -> tuple[tuple[float | None, float | None], float | None]:
    """The window of a search asked `as_of` a time (`read_window`, its end no later than
    `as_of`: what was said and became true by then), and `as_of` as epoch seconds (None when
    not given).

    Raises:
        InvalidInputError: as `read_window`; `as_of` is not a time, or `since` is later.
    """
    at = parse_time(as_of, "as_of")
    if at is None:
        return read_window(since, until), None
    start, end = parse_time(since, "since"), parse_time(until, "until")
    if start is not None and start > at:
        raise InvalidInputError(
            f"since ({_iso(start)}) is later than as_of ({_iso(at)}): nothing said since then "
            "was known then"
        )
    return read_window(start, at if end is None or end > at else end), at.timestamp()


def _resolution(stamp: float) -> float:
    """The step of `stamp` at the store's significant digits."""
    if stamp == 0:
        return 0.0
    return 10.0 ** (math.floor(math.log10(abs(stamp))) + 1 - _STORED_DIGITS)


def _iso(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


def time_unit(value: object) -> TimeUnit:
    """A unit as a store holds it, read leniently: none (a fact stored before units existed)
    or one graphmem does not know (a property set by hand) is a day, as it always read."""
    return _UNITS.get(value, DAY) if isinstance(value, str) else DAY


def stored_unit(unit: TimeUnit | None) -> TimeUnit | None:
    """The unit as a fact's `valid_unit` property holds it: absent for a day, so a fact
    known to the day is stored as every fact was before units existed."""
    return None if unit is None or unit == DAY else unit


def _unit_of_its_time(unit: TimeUnit | None, info: ValidationInfo) -> TimeUnit | None:
    """None for a fact with no `valid_at` (also when a store kept a unit on it: a hand edit,
    an import); a day for one with a time and no unit."""
    return None if info.data.get("valid_at") is None else unit or DAY


def _unit_with_its_time(unit: TimeUnit | None, info: ValidationInfo) -> TimeUnit | None:
    """None on a record with no `valid_at`, so that no write keeps a unit without a time."""
    return None if info.data.get("valid_at") is None else unit


# A model's `valid_unit`, declared after its `valid_at`: how precisely that time is known.
FactUnit = Annotated[
    TimeUnit | None, AfterValidator(_unit_of_its_time), Field(validate_default=True)
]
# The same in an export record (None there: known to the day, as stored).
StoredUnit = Annotated[TimeUnit | None, AfterValidator(_unit_with_its_time)]


def _given_valid_at(value: object) -> datetime | None:
    return parse_time(value, "valid_at")


# A time a caller gives a model, read as every door reads one (`parse_time`: "2023" refused,
# not 33 minutes into 1970; "29.12.2023" read).
GivenValidAt = Annotated[datetime | None, BeforeValidator(_given_valid_at)]


def one_time(ts: TimeLike, timestamp: TimeLike) -> TimeLike:
    """`ts`, or `timestamp`, the alias other memories' users write.

    Raises:
        InvalidInputError: both are given, as different times.
    """
    if ts is None or timestamp is None:
        return ts if ts is not None else timestamp
    if epoch(ts, "ts") != epoch(timestamp, "timestamp"):
        raise InvalidInputError(f"ts and timestamp name one time: got {ts!r} and {timestamp!r}")
    return ts


def parse_time(value: object, what: str = "timestamp") -> datetime | None:
    """`value` (see the module docstring) as an aware UTC datetime, or None.

    Raises:
        InvalidInputError: not a time; the message names `what` and the accepted forms.

    >>> parse_time("29.12.2023, 22:42:04")
    datetime.datetime(2023, 12, 29, 22, 42, 4, tzinfo=datetime.timezone.utc)
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        return as_utc(value)
    if isinstance(value, date):
        return datetime.combine(value, time(), UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_number(float(value), what)
    if isinstance(value, str) and len(value) <= 100:
        text = value.strip()
        if _YEAR.fullmatch(text):  # typed as a year, not 33 minutes into 1970
            raise InvalidInputError(
                f"{what} {text!r} would be read as {text} seconds after 1970-01-01: for the "
                f"year, write a full date ('{text}-01-01')"
            )
        if NUMBER.fullmatch(text):
            return _from_number(float(text), what)
        try:
            return as_utc(datetime.fromisoformat(text))
        except ValueError:
            return _from_text(text, what)
    raise InvalidInputError(f"{what} {value!r:.80} is not a time: give {_FORMS}")


def as_utc(value: datetime) -> datetime:
    """`value` in UTC; a naive datetime is taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _from_number(number: float, what: str) -> datetime:
    if not math.isfinite(number) or abs(number) >= _MAX_MS:
        raise InvalidInputError(f"{what} {number!r} is out of range: give {_FORMS}")
    seconds = number / 1000.0 if abs(number) >= MS_FROM else number
    try:
        return datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise InvalidInputError(f"{what} {number!r} is out of range: give {_FORMS}") from exc


def _from_text(text: str, what: str) -> datetime:
    try:
        return full_date(text)
    except UnreadableTime as exc:
        if exc.partial:
            message = f"{what} {text!r} is not a full date (day, month and year)"
            raise InvalidInputError(message) from exc
        reason = exc.zone or f"give {_FORMS}"
        raise InvalidInputError(f"{what} {text!r} is not a time: {reason}") from exc


class UnreadableTime(ValueError):
    """`full_date` could not read a text: `partial` when it names no full date (day, month
    and year), `zone` when its time zone is unknown (what is wrong with it)."""

    def __init__(self, *, partial: bool = False, zone: str | None = None) -> None:
        super().__init__(zone or ("no full date" if partial else "not a time"))
        self.partial, self.zone = partial, zone


def full_date(text: str) -> datetime:
    """`text` read by dateutil as a point in time with its full date, in UTC (naive: UTC;
    dotted dates day first). Raises UnreadableTime."""
    dayfirst = DOTTED_DATE.search(text) is not None
    try:
        first, second = (
            dateparser.parse(text, dayfirst=dayfirst, default=d, tzinfos=tz_of)
            for d in FULL_DATE_DEFAULTS
        )
    except InvalidInputError as exc:  # tz_of: a zone it does not know
        raise UnreadableTime(zone=str(exc)) from exc
    except (ValueError, OverflowError) as exc:  # dateutil's ParserError is a ValueError
        raise UnreadableTime() from exc
    if first.date() != second.date():  # a part missing was filled from each default
        raise UnreadableTime(partial=True)
    return as_utc(first)


def tz_of(name: str | None, offset: int | None) -> tzinfo | None:
    if offset is not None:
        return tz.tzoffset(name, offset)
    if name is None or name.upper() in _UTC_NAMES:
        return tz.UTC if name else None
    raise InvalidInputError(f"unknown time zone {name!r}")
