"""A question naming one speaker while another speaker's facts are nearer what it asks
(engine/retrieval/premise.py): the names compared, the name taken out, the margin."""

from __future__ import annotations

from engine.models import Fact, Premise, SearchResult
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.premise import Plan, plan, premise
from engine.retrieval.terms import words
from engine.store.base import EpisodeText

MARGIN = 0.12


def _index(*speakers: str | None) -> LexicalIndex:
    index = LexicalIndex()
    said = [EpisodeText(f"e{i}", "s1", who, "user", "Hello there", float(i)) for i, who in
            enumerate(speakers)]  # fmt: skip
    index.add(said)
    return index


def _fact(subject: str, obj: str, score: float) -> tuple[Fact, float]:
    fact = Fact(
        uid=f"{subject}-{obj}", user_id="u", subject=subject, predicate="DID", object=obj,
        subject_uid=subject.lower(), object_uid=obj.lower(), text=f"{subject} did {obj}",
    )  # fmt: skip
    return fact, score


PLAN = Plan("Caroline", frozenset({"melanie"}), "what did realize after her race")


def _plan(query: str, index: LexicalIndex | None) -> Plan | None:
    return plan(words(query), index)


def test_a_query_naming_one_speaker_word_for_word_is_planned_against_the_others() -> None:
    index = _index("Caroline", "Melanie", "Dr. Ruiz", None)
    found = _plan("What did caroline realize after Caroline's race?", index)
    others = frozenset({"melanie", "dr. ruiz"})
    assert found == Plan("Caroline", others, "what did realize after race")
    ruiz = _plan("What did Dr. Ruiz say?", index)
    assert ruiz == Plan("Dr. Ruiz", frozenset({"caroline", "melanie"}), "what did say")
    assert _plan("What did Caroline and Melanie paint?", index) is None  # two named
    assert _plan("What did Mel paint?", index) is None  # named otherwise: no one
    assert _plan("What did Carolineville paint?", index) is None
    assert _plan("What did Caroline paint?", _index("Caroline", None)) is None  # no one else
    assert _plan("What did Caroline paint?", _index(None, None)) is None  # no speakers
    assert _plan("What did Caroline paint?", None) is None  # no message index


def test_the_name_and_its_possessive_are_taken_out() -> None:
    index = _index("Caroline", "Melanie")
    asked = _plan(
        "What did Caroline realize after Caroline's race? caroline\u2019s CAROLINE", index
    )
    assert asked is not None and asked.asked == "what did realize after race"
    assert _plan("Is Carolineville far?", index) is None  # a longer word is not the name


def test_another_speakers_fact_nearer_by_the_margin_says_whose_the_memory_is() -> None:
    near = [_fact("Melanie", "race", 0.90), _fact("Caroline", "painting", 0.80)]
    assert premise(PLAN, near, MARGIN) == Premise(named="Caroline", matches="Melanie")
    close = [_fact("Melanie", "race", 0.90), _fact("caroline", "run", 0.86)]  # 0.08 in cosine
    assert premise(PLAN, close, MARGIN) is None
    own_first = [_fact("Caroline", "race", 0.91), _fact("Melanie", "race", 0.90)]
    assert premise(PLAN, own_first, MARGIN) is None
    as_object = [_fact("race", "Melanie", 0.90), _fact("Caroline", "painting", 0.80)]
    assert premise(PLAN, as_object, MARGIN) == Premise(named="Caroline", matches="Melanie")


def test_with_no_fact_of_the_named_speaker_read_the_farthest_read_stands_for_theirs() -> None:
    near = [_fact("Melanie", "race", 0.90), _fact("weather", "rain", 0.86)]
    assert premise(PLAN, near, MARGIN) is None  # 0.08 nearer than the farthest
    far = [_fact("Melanie", "race", 0.90), _fact("weather", "rain", 0.80)]
    assert premise(PLAN, far, MARGIN) == Premise(named="Caroline", matches="Melanie")


def test_a_fact_of_both_speakers_is_the_named_ones_and_others_are_no_speakers() -> None:
    joint = [_fact("Melanie", "Caroline", 0.95), _fact("Melanie", "race", 0.90)]
    assert premise(PLAN, joint, MARGIN) is None
    stranger = [_fact("Bob", "race", 0.95), _fact("Caroline", "art", 0.70)]
    assert premise(PLAN, stranger, MARGIN) is None
    assert premise(PLAN, [], MARGIN) is None


def test_the_speakers_of_an_index_are_counted_again_after_new_messages() -> None:
    index = LexicalIndex()
    index.add([EpisodeText("a", "s1", "Caroline", "user", "Hi there", 1.0)])
    assert index.speakers_by_key() == {"caroline": "Caroline"}
    index.add([EpisodeText("b", "s1", "Melanie", "user", "Hello", 2.0)])
    index.add([EpisodeText("c", "s1", None, "assistant", "Hi", 3.0)])
    assert index.speakers_by_key() == {"caroline": "Caroline", "melanie": "Melanie"}


def test_the_block_opens_with_the_note_unless_a_name_is_unknown() -> None:
    note = Premise(named="Caroline", matches="Melanie")
    result = SearchResult(query="q", user_id="u", premise=note)
    assert result.context().startswith(
        "Note: the memories nearest this question are about Melanie, not Caroline."
    )
    unknown = SearchResult(query="q", user_id="u", premise=note, unknown_names=["Bob"])
    assert unknown.context().startswith("Nothing stored mentions Bob")
    assert "Melanie" not in unknown.context()
