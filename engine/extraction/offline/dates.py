"""When a clause says something happened, as a date: relative dates read against the message.

A clause's date is a spaCy DATE entity hanging off its verb ("yesterday", "last week", "two
days ago", "in May", "on Monday", "in June 2022"), or, when the verb has none, off the verb of
its complement, the phrase the fact's object is made of: the parser hangs "last month" in "I
started learning the guitar last month" on "learning", and "last year" in "I decided to visit
Paris last year" on "visit". Never off a clause that states a fact of its own (a relative or
adverbial clause, a coordinated verb): that date is its fact's. Relative dates need the
message's time; dates with a year do not. Past-tense clauses (the tense of the fact's verb)
look back ("in May" said in August is this May, said in March last May), others look ahead. The
result is midnight UTC of the day meant: "last week" and "last month" are the same day a week
or a month before, "last year" the same date a year before, "last weekend" the Saturday before,
"in May" and "June 2022" the first of the month, "in 2022" the first of January; and the unit
it is known to (`Dated`): "yesterday", "on Monday", "8 May 2023" a day; "last week", "two
weeks ago", "last weekend" a week; "last month", "in May", "June 2022" a month; "last year",
"in 2022", "two years ago" a year. The date stays the one above (time windows and ranking
read it); the unit says which part of it was said.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple

from dateutil import parser as dateparser

from engine.times import DAY, TimeUnit

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_MONTHS = {m.casefold(): i for i, m in enumerate(calendar.month_name) if m}
_DAYS = {d.casefold(): i for i, d in enumerate(calendar.day_name)}
_NUMBERS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple": 2,
    "a couple": 2, "a couple of": 2, "couple of": 2, "few": 3, "a few": 3,
}  # fmt: skip
_DAY_OFFSETS = {
    "today": 0, "tonight": 0, "this morning": 0, "this afternoon": 0, "this evening": 0,
    "yesterday": -1, "last night": -1, "day before yesterday": -2, "tomorrow": 1,
    "day after tomorrow": 2,
}  # fmt: skip
_AGO = re.compile(r"(\d+|[a-z]+(?: [a-z]+)*?) (day|week|month|year)s? ago")
_LAST = re.compile(r"(last|this past|past|next) (week|weekend|month|year)")
_WEEKDAY = re.compile(r"(?:(last|this past|next|this|on) )?([a-z]+day)")
_MONTH = re.compile(r"(?:(last|next|this|in|early|late|mid) )?([a-z]+)")
_YEAR = re.compile(r"\b(19|20)\d{2}\b")
_PAST_TAGS = frozenset({"VBD", "VBN"})
_PAST_AUX = frozenset({"did", "was", "were", "had", "'d"})
_DATE_PREPOSITIONS = frozenset({"in", "on", "during", "since", "last", "this", "by", "at"})
# A date with a year is read with each: a month or day it leaves out reads differently in
# each (December has every day a text can give, so a day without its month still reads).
_ABSOLUTE_DEFAULTS = (datetime(2000, 1, 1), datetime(2000, 12, 2))


class Dated(NamedTuple):
    """A date a phrase gives: `at`, midnight UTC of the day meant (see the module docstring),
    and `unit`, how precisely the phrase gives it."""

    at: datetime
    unit: TimeUnit


def clause_date(verb: Token, sent_at: datetime | None) -> Dated | None:
    """The date `verb`'s clause gives, resolved against `sent_at`; None when it gives none.

    The first DATE that resolves, on the verb, then down its complements; a DATE that names
    no day ("every day") does not hide the next ("kept running every day last week").
    """
    past = _is_past(verb)
    for head in _date_heads(verb):
        for span in _date_spans(head):
            found = resolve_date(span.text, sent_at, past=past)
            if found is not None:
                return found
    return None


def resolve_date(text: str, sent_at: datetime | None, *, past: bool = True) -> Dated | None:
    """A date phrase as midnight UTC of the day it means and the unit it is known to (see the
    module docstring).

    >>> resolve_date("last year", datetime(2023, 5, 8, 13, 56, tzinfo=UTC))
    Dated(at=datetime.datetime(2022, 5, 8, 0, 0, tzinfo=datetime.timezone.utc), unit='year')
    """
    phrase = " ".join(text.casefold().replace(",", " ").split()).removeprefix("the ")
    if _YEAR.search(phrase):
        return _absolute(phrase)
    if sent_at is None:
        return None
    day = _midnight(sent_at)
    for read in (_offset_day, _ago, _last, _weekday, _month):
        found = read(phrase, day, past)
        if found is not None:
            return found
    return None


def _date_heads(verb: Token) -> Iterator[Token]:
    """`verb`, then the verbs of its complements, depth first: an open clausal complement
    ("started learning", "decided to visit") or a gerund object. Not a ccomp, relcl, advcl or
    conj: those are clauses of their own, read as facts with their own dates."""
    yield verb
    for child in verb.children:
        if child.pos_ == "VERB" and (child.dep_ == "xcomp" or _gerund_object(child)):
            yield from _date_heads(child)


def _gerund_object(tok: Token) -> bool:
    return tok.dep_ == "dobj" and tok.tag_ == "VBG"


def _date_spans(verb: Token) -> Iterator[Span]:
    """The DATE entities on the verb itself or on one of its prepositions."""
    for child in verb.children:
        tokens = [child]
        if child.dep_ == "prep" and child.lower_ in _DATE_PREPOSITIONS:
            tokens = [c for c in child.children if c.dep_ == "pobj"]
        for tok in tokens:
            if tok.ent_type_ == "DATE":
                yield next(e for e in tok.doc.ents if e.start <= tok.i < e.end)


def _is_past(verb: Token) -> bool:
    aux = {c.lower_ for c in verb.children if c.dep_ in ("aux", "auxpass")}
    return verb.tag_ in _PAST_TAGS or bool(aux & _PAST_AUX)


def _midnight(when: datetime) -> datetime:
    moment = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _absolute(phrase: str) -> Dated | None:
    """A date with a year ("June 2022", "8 May 2023"); the first of what it leaves out, known
    to what it gives."""
    words = phrase.removeprefix("in ").removeprefix("on ")
    try:
        found, other = (dateparser.parse(words, default=d) for d in _ABSOLUTE_DEFAULTS)
    except (ValueError, OverflowError):
        return None
    at = found.replace(hour=0, minute=0, second=0, microsecond=0, tzinfo=UTC)
    unit: TimeUnit = "year" if found.month != other.month else DAY
    return Dated(at, "month" if unit == DAY and found.day != other.day else unit)


def _offset_day(phrase: str, day: datetime, past: bool) -> Dated | None:
    offset = _DAY_OFFSETS.get(phrase)
    return Dated(day + timedelta(days=offset), DAY) if offset is not None else None


def _ago(phrase: str, day: datetime, past: bool) -> Dated | None:
    match = _AGO.fullmatch(phrase)
    if match is None:
        return None
    count = int(match[1]) if match[1].isdigit() else _NUMBERS.get(match[1])
    return _shift(day, match[2], -count) if count is not None else None


def _last(phrase: str, day: datetime, past: bool) -> Dated | None:
    match = _LAST.fullmatch(phrase)
    if match is None:
        return None
    step = 1 if match[1] == "next" else -1
    if match[2] == "weekend":  # its Saturday, or its Sunday: known to the week
        return Dated(_next_weekday(day, calendar.SATURDAY, forward=step > 0), "week")
    return _shift(day, match[2], step)


def _weekday(phrase: str, day: datetime, past: bool) -> Dated | None:
    match = _WEEKDAY.fullmatch(phrase)
    weekday = _DAYS.get(match[2]) if match else None
    if match is None or weekday is None:
        return None
    forward = match[1] == "next" or (match[1] != "last" and not past)
    return Dated(_next_weekday(day, weekday, forward=forward), DAY)


def _month(phrase: str, day: datetime, past: bool) -> Dated | None:
    match = _MONTH.fullmatch(phrase)
    month = _MONTHS.get(match[2]) if match else None
    if match is None or month is None:
        return None
    if match[1] == "last" or (match[1] != "next" and past):
        later = month > day.month or (match[1] == "last" and month == day.month)
        year = day.year - 1 if later else day.year
    else:
        earlier = month < day.month or (match[1] == "next" and month == day.month)
        year = day.year + 1 if earlier else day.year
    return Dated(day.replace(year=year, month=month, day=1), "month")


def _next_weekday(day: datetime, weekday: int, *, forward: bool) -> datetime:
    """The nearest `weekday` strictly after (`forward`) or before `day`."""
    if forward:
        return day + timedelta(days=(weekday - day.weekday() - 1) % 7 + 1)
    return day - timedelta(days=(day.weekday() - weekday - 1) % 7 + 1)


def _shift(day: datetime, unit: str, count: int) -> Dated:
    """`count` days, weeks, months or years from `day`, known to that unit."""
    if unit == "day":
        return Dated(day + timedelta(days=count), DAY)
    if unit == "week":
        return Dated(day + timedelta(weeks=count), "week")
    months = count * (12 if unit == "year" else 1)
    index = day.year * 12 + day.month - 1 + months
    year, month = divmod(index, 12)
    last = calendar.monthrange(year, month + 1)[1]
    shifted = day.replace(year=year, month=month + 1, day=min(day.day, last))
    return Dated(shifted, "year" if unit == "year" else "month")
