"""The offline extractor on chat: speakers, third-person statements, dates read against the
message's time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.extraction.offline import OfflineExtractor
from engine.extraction.offline.dates import resolve_date
from engine.extraction.schema import ChatMessage, Extraction

pytestmark = pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")

MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def day(year: int, month: int, date: int) -> datetime:
    return datetime(year, month, date, tzinfo=UTC)


def extract(
    ex: OfflineExtractor, *messages: ChatMessage, user_name: str | None = None
) -> Extraction:
    outcome = ex.extract(list(messages), [], user_name=user_name)
    assert outcome.error is None, outcome.error
    return outcome.extraction


def triples(extraction: Extraction) -> set[tuple[str, str, str]]:
    return {(f.source, f.predicate, f.target) for f in extraction.facts}


# -- speakers -----------------------------------------------------------------------------------


def test_each_named_speaker_is_their_own_person(extractor: OfflineExtractor) -> None:
    found = extract(
        extractor,
        ChatMessage(name="Maria", content="I love chess."),
        ChatMessage(name="John", content="My dog is called Rex."),
        ChatMessage(content="I like tea."),
    )
    assert triples(found) == {
        ("Maria", "LOVES", "chess"),
        ("John", "HAS_DOG", "Rex"),
        ("USER", "LIKES", "tea"),
    }
    types = {e.name: e.type for e in found.entities}
    assert types["Maria"] == types["John"] == types["USER"] == "Person"


@pytest.mark.parametrize("name", ["Alice", "alice", "USER", "", "  "])
def test_a_speaker_who_is_the_user_speaks_for_user(extractor: OfflineExtractor, name: str) -> None:
    found = extract(extractor, ChatMessage(name=name, content="I like tea."), user_name="Alice")
    assert triples(found) == {("USER", "LIKES", "tea")}


def test_assistant_lines_are_not_read_even_with_a_name(extractor: OfflineExtractor) -> None:
    found = extract(extractor, ChatMessage(role="assistant", name="Bot", content="I like tea."))
    assert found.facts == []


def test_the_speakers_my_and_me_inside_a_fact_are_said_by_name(
    extractor: OfflineExtractor,
) -> None:
    found = extract(
        extractor,
        ChatMessage(name="Caroline", content="My friends help with my transition."),
        ChatMessage(name="Caroline", content="Pottery is a great outlet for people like me."),
        ChatMessage(name="Melanie", content="Pottery is a great outlet for people like me."),
        ChatMessage(content="Pottery is a great outlet for people like me."),
        ChatMessage(name="Caroline", content="I watched Despicable Me with my sister Anna."),
        ChatMessage(name="Caroline", content="I love My Neighbor Totoro."),
    )
    assert {
        ("Caroline's friends", "HELPS_WITH", "Caroline's transition"),
        ("Pottery", "IS", "great outlet for people like Caroline"),
        ("Pottery", "IS", "great outlet for people like Melanie"),  # not the same people
        ("Pottery", "IS", "great outlet for people like USER"),  # shown with the user's name
        ("Caroline", "WATCHES", "Despicable Me"),  # a title keeps its words
        ("Caroline", "LOVES", "My Neighbor Totoro"),
    } <= triples(found)
    assert not [f for f in found.facts if {"my", "me"} & set(f"{f.source} {f.target}".split())]


def test_the_one_spoken_to_is_not_a_subject(extractor: OfflineExtractor) -> None:
    said = [
        "Hey Caroline, since we last chatted, I've had a lot of things happening to me.",
        "Caroline, I ran a charity race last Saturday.",
    ]
    found = extract(extractor, *(ChatMessage(name="Melanie", content=text) for text in said))
    assert triples(found) == {
        ("Melanie", "HAS", "lot of things happening to Melanie"),
        ("Melanie", "RUNS", "charity race"),
    }
    both = extract(extractor, ChatMessage(name="Melanie", content="Caroline and I ran a race."))
    assert triples(both) == {("Caroline", "RUNS", "race"), ("Melanie", "RUNS", "race")}


def test_a_named_speaker_naming_themself(extractor: OfflineExtractor) -> None:
    found = extract(extractor, ChatMessage(name="Mel", content="My name is Melanie."))
    assert triples(found) == {("Mel", "HAS_NAME", "Melanie")}


# -- beyond the first person --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Kate works as a teacher assistant in Berlin",
            {("Kate", "WORKS_AS", "teacher assistant"), ("Kate", "WORKS_IN", "Berlin")},
        ),
        ("We went to Lisbon in May", {("Sam", "GOES_TO", "Lisbon")}),
        (
            "My sister Anna moved to Oslo",
            {("Sam", "HAS_SISTER", "Anna"), ("Anna", "MOVES_TO", "Oslo")},
        ),
        ("Caroline's dog is called Max", {("Caroline", "HAS_DOG", "Max")}),
        ("Melanie painted a lake last week", {("Melanie", "PAINTS", "lake")}),
        ("Jon is a dancer", {("Jon", "IS", "dancer")}),
        (
            "My brother works at a bank in Boston",
            {("Sam's brother", "WORKS_AT", "bank"), ("Sam's brother", "WORKS_IN", "Boston")},
        ),
    ],
)
def test_third_person_and_descriptive_statements(
    extractor: OfflineExtractor, text: str, expected: set[tuple[str, str, str]]
) -> None:
    message = ChatMessage(name="Sam", content=text)
    found = triples(extract(extractor, message))
    assert expected <= found, found


def test_a_place_on_an_object_needs_a_named_place(extractor: OfflineExtractor) -> None:
    found = triples(extract(extractor, ChatMessage(content="I work at a bakery in the morning")))
    assert found == {("USER", "WORKS_AT", "bakery")}


# -- dates --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a support group yesterday.", day(2023, 5, 7)),
        ("Two days ago I adopted a cat.", day(2023, 5, 6)),
        ("A few days ago I joined a choir.", day(2023, 5, 5)),
        ("Last week Melanie painted a lake.", day(2023, 5, 1)),
        ("I visited Rome last month.", day(2023, 4, 8)),
        ("We went to Lisbon in May.", day(2023, 5, 1)),
        ("We went to Lisbon in June.", day(2022, 6, 1)),  # past tense: last June
        ("I'm going to Paris in June.", day(2023, 6, 1)),
        ("On Monday I visited my mom.", day(2023, 5, 1)),
        ("I will visit Rome on Friday.", day(2023, 5, 12)),
        ("I adopted a puppy last weekend.", day(2023, 5, 6)),
        ("I moved to Boston in June 2022.", day(2022, 6, 1)),
        ("I like pottery.", None),
    ],
)
def test_a_clause_date_becomes_valid_at(
    extractor: OfflineExtractor, text: str, expected: datetime | None
) -> None:
    found = extract(extractor, ChatMessage(name="Caroline", content=text, ts=MAY_8))
    assert found.facts
    assert {f.valid_at for f in found.facts} == {expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I started learning the guitar last month.", day(2023, 4, 8)),
        ("I decided to visit Paris last year.", day(2022, 5, 8)),
        ("I began painting again two weeks ago.", day(2023, 4, 24)),
        ("I finally got to see the concert yesterday.", day(2023, 5, 7)),
        ("I decided to start learning the piano last month.", day(2023, 4, 8)),  # a chain
        ("I started learning the guitar in June.", day(2022, 6, 1)),  # the fact's verb's tense
        # "these days" names no day: it does not hide the date after it
        ("These days I am trying to read more books since last month.", day(2023, 4, 8)),
    ],
)
def test_a_date_on_the_verb_of_the_object_phrase_dates_the_fact(
    extractor: OfflineExtractor, text: str, expected: datetime
) -> None:
    found = extract(extractor, ChatMessage(name="Kate", content=text, ts=MAY_8))
    assert found.facts
    assert {f.valid_at for f in found.facts} == {expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I moved to Lisbon and started a job last week.",
            {"MOVES_TO": None, "STARTS": day(2023, 5, 1)},
        ),
        (
            "I met a guy who started a bakery last year.",
            {"MEETS": None, "STARTS": day(2022, 5, 8)},
        ),
        (
            "I said that I adopted a cat last week.",
            {"ADOPTS": day(2023, 5, 1)},
        ),
    ],
)
def test_a_date_of_a_clause_with_a_fact_of_its_own_stays_there(
    extractor: OfflineExtractor, text: str, expected: dict[str, datetime | None]
) -> None:
    found = extract(extractor, ChatMessage(name="Kate", content=text, ts=MAY_8))
    assert {f.predicate: f.valid_at for f in found.facts} == expected


@pytest.mark.parametrize(
    ("text", "unit"),
    [
        ("I went to a support group yesterday.", "day"),
        ("On Monday I visited my mom.", "day"),
        ("Two days ago I adopted a cat.", "day"),
        ("I moved to Boston on 8 May 2023.", "day"),
        ("Last week Melanie painted a lake.", "week"),
        ("I began painting again two weeks ago.", "week"),
        ("I visited Rome last month.", "month"),
        ("We went to Lisbon in May.", "month"),
        ("I moved to Boston in June 2022.", "month"),
        ("I adopted a dog a month ago.", "month"),
        ("I moved to Lisbon last year.", "year"),
        ("I decided to visit Paris last year.", "year"),
        ("I moved to Boston in 2022.", "year"),
        ("I adopted a dog two years ago.", "year"),
    ],
)
def test_a_clause_date_says_how_precisely_it_is_known(
    extractor: OfflineExtractor, text: str, unit: str
) -> None:
    """ "last year" is known to the year: the fact keeps the date it always had (a year
    before the message) and says it is a year, not that day."""
    found = extract(extractor, ChatMessage(name="Kate", content=text, ts=MAY_8))
    assert found.facts
    assert {(f.valid_at is not None, f.valid_unit) for f in found.facts} == {(True, unit)}


def test_an_undated_fact_has_no_unit(extractor: OfflineExtractor) -> None:
    found = extract(extractor, ChatMessage(name="Kate", content="I like pottery.", ts=MAY_8))
    assert [(f.valid_at, f.valid_unit) for f in found.facts] == [(None, None)]


def test_relative_dates_need_the_message_time(extractor: OfflineExtractor) -> None:
    undated = extract(extractor, ChatMessage(content="I went to Rome yesterday."))
    dated = extract(extractor, ChatMessage(content="I moved to Boston in June 2022."))
    assert [f.valid_at for f in undated.facts] == [None]
    assert [f.valid_at for f in dated.facts] == [day(2022, 6, 1)]


def test_a_relation_named_in_passing_is_not_dated(extractor: OfflineExtractor) -> None:
    message = ChatMessage(content="My sister Anna moved to Oslo last month.", ts=MAY_8)
    dated = {f.predicate: f.valid_at for f in extract(extractor, message).facts}
    assert dated == {"HAS_SISTER": None, "MOVES_TO": day(2023, 4, 8)}


@pytest.mark.parametrize(
    ("phrase", "past", "expected"),
    [
        ("today", True, day(2023, 5, 8)),
        ("the day before yesterday", True, day(2023, 5, 6)),
        ("tomorrow", False, day(2023, 5, 9)),
        ("3 weeks ago", True, day(2023, 4, 17)),
        ("a year ago", True, day(2022, 5, 8)),
        ("last year", True, day(2022, 5, 8)),
        ("next month", False, day(2023, 6, 8)),
        ("last Monday", True, day(2023, 5, 1)),
        ("next Monday", True, day(2023, 5, 15)),
        ("Sunday", True, day(2023, 5, 7)),
        ("last May", True, day(2022, 5, 1)),
        ("next May", False, day(2024, 5, 1)),
        ("March", False, day(2024, 3, 1)),
        ("2021", True, day(2021, 1, 1)),
        ("8 May, 2023", True, day(2023, 5, 8)),
        ("the other day", True, None),
        ("summer", True, None),
    ],
)
def test_resolve_date(phrase: str, past: bool, expected: datetime | None) -> None:
    found = resolve_date(phrase, MAY_8, past=past)
    assert (found.at if found else None) == expected


def test_month_ends_are_clamped() -> None:
    march_31 = datetime(2023, 3, 31, 9, tzinfo=UTC)
    assert resolve_date("last month", march_31) == (day(2023, 2, 28), "month")
    assert resolve_date("a month ago", datetime(2024, 3, 31, tzinfo=UTC)) == (
        day(2024, 2, 29),
        "month",
    )


# -- verbs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("I'm hoping to attend the conference.", ("Kate", "HOPES_TO_ATTEND", "conference")),
        ("I was coping with stress.", ("Kate", "COPES_WITH", "stress")),
        ("I'm taping the show.", ("Kate", "TAPES", "show")),
        ("I hoped for rain.", ("Kate", "HOPES_FOR", "rain")),
        ("I'm shopping for shoes.", ("Kate", "SHOPS_FOR", "shoes")),
        ("I'm visiting Rome.", ("Kate", "VISITS", "Rome")),
    ],
)
def test_a_verb_that_drops_its_silent_e_keeps_it_in_its_predicate(
    extractor: OfflineExtractor, text: str, fact: tuple[str, str, str]
) -> None:
    """The tagger's lemmatizer reads "hoping" as "hop" (both are verbs it knows); a single
    consonant after a single vowel would have been doubled for "hop" ("hopping")."""
    found = extract(extractor, ChatMessage(role="user", content=text, name="Kate", ts=MAY_8))
    assert fact in triples(found)
