"""The dual retriever: anchoring, each leg, fusion, paths, validity, knowledge boosts."""

from __future__ import annotations

import pytest

from engine.retrieval.fusion import fuse_legs
from engine.retrieval.query import Query
from engine.retrieval.terms import asks_for_siblings, fulltext_terms, name_keys, words
from engine.retrieval.terms import name_match as name_match_with
from engine.retrieval.tuning import AnchorParams, FusionParams, NameParams

FUSION = FusionParams()


def name_match(name: str, query: list[str]) -> float:
    return name_match_with(name, query, NameParams())


def test_name_match_prefers_long_specific_names() -> None:
    query = words("what does Grégoire Colin appear in")
    assert name_match("Grégoire Colin", query) > 0.9
    assert name_match("Colin", query) < name_match("Grégoire Colin", query)
    assert name_match("In", query) < 0.5
    one_movie = words("who starred in the movie Ray")
    assert name_match("Movie Movie", one_movie) < 0.5  # each word of a name needs its own
    scattered = words("what were the release dates of G.W. Bailey starred movies")
    assert name_match("Date Movie", scattered) < 0.5 < name_match("G.W. Bailey", scattered)
    swapped = words("Women Without Men, when was it released")
    assert name_match("Men Without Women", swapped) < name_match("Women Without Men", swapped)
    assert name_match("蜘蛛侠", words("蜘蛛侠是谁?")) > 0.8
    assert Query.parse("蜘蛛侠是谁?", 64).fulltext == ["蜘蛛", "蛛侠", "侠是", "是谁"]


def test_a_number_the_question_names_weighs_as_a_short_word() -> None:
    """ "number 9": the value is the anchor, however short (a one-letter word is not)."""
    question = words("which clubs have a player wearing number 9")
    assert name_match("9", question) >= AnchorParams().min_score
    assert name_match("x", words("which clubs have a player wearing x")) < 0.3


def test_numbers_are_searched_by_name_but_not_matched_to_relations() -> None:
    query = Query.parse("What did Sam buy on December 4, 2023 for Apollo 13?", 64)
    assert {"4", "2023", "13"} <= set(query.fulltext)
    assert query.relational == ["sam", "buy", "december", "apollo"]


@pytest.mark.parametrize(
    ("question", "held"),
    [
        ("what languages are the movies that share actors with Up in the Air in", "up in the air"),
        ("Who starred in Joe's first film?", "joe"),  # a possessive, then the next word
        ("who wrote Mr. Smith Goes to Washington.", "mr. smith goes to washington"),
        ("«Amélie» — who directed it?", "amélie"),
    ],
)
def test_a_name_held_word_for_word_is_a_key_to_look_up(question: str, held: str) -> None:
    keys = name_keys(question, 6, 256)
    assert held in keys
    assert "" not in keys and len(keys) == len(set(keys))


def test_the_keys_looked_up_are_bounded() -> None:
    text = " ".join(f"w{i}" for i in range(500))
    keys = name_keys(text, 6, 256)
    assert len(keys) == 256 and all(len(k.split()) <= 6 for k in keys)
    assert name_keys("  ?! ", 6, 256) == []


@pytest.mark.parametrize(
    ("question", "siblings"),
    [
        ("films with the same director as Heat", True),
        ("who co-wrote films with Ann", True),
        ("who starred together with Ann", True),
        ("who shares a team with Gril Son", True),
        ("who are the teammates of Gril Son", False),  # paid on one benchmark family only
        ("who is Ann's brother", False),  # ... likewise
        ("which teams does Gril Son play for", False),
        ("what is the ultimate goal of Sam", False),
    ],
)
def test_cue_words_ask_for_siblings(question: str, siblings: bool) -> None:
    assert asks_for_siblings(words(question)) is siblings


@pytest.mark.parametrize(
    ("question", "name", "siblings"),
    [
        ("who directed Same Time Next Year", "same time next year", False),
        ("who starred together with Ann", "together", True),  # the film "Together", astray
        ("who shares a team with Ann", "ann", True),
    ],
)
def test_a_cue_inside_a_name_of_several_words_is_no_cue(
    question: str, name: str, siblings: bool
) -> None:
    tokens = words(question)
    span = frozenset(i for i, w in enumerate(tokens) if w in name.split())
    assert asks_for_siblings(tokens, [span]) is siblings


def test_fusion_rewards_agreement_only_where_the_expansion_is_unsure() -> None:
    expansion = ["a", "b", "c"]
    unsure = fuse_legs(expansion, ["b", "d"], {"a", "b", "c"}, 0.2, FUSION)
    assert max(unsure, key=unsure.__getitem__) == "b"
    assert unsure["a"] > unsure["c"]
    assert unsure["d"] == pytest.approx(1 / 62)
    sure = fuse_legs(expansion, ["c", "d"], {"a", "b", "c"}, 1.0, FUSION)
    assert sorted(sure, key=lambda u: -sure[u]) == ["a", "b", "c", "d"]
    trusting_one = fuse_legs(expansion, [], {"a", "b", "c"}, 1.0, FUSION, trusted=1)
    assert trusting_one["b"] == pytest.approx(0.5 * sure["b"])


def test_a_bridge_gets_the_semantic_vote_only_as_far_as_the_expansion_is_unsure() -> None:
    """ "films written by X" matches "who directed the films written by X" best, but it is the
    way to the answer, not the answer."""
    args = (["answer"], ["bridge", "answer"], {"answer"})
    half = fuse_legs(*args, 0.5, FUSION, bridges=frozenset({"bridge"}))
    assert half["bridge"] == pytest.approx(0.5 / 61)
    assert fuse_legs(*args, 1.0, FUSION, bridges=frozenset({"bridge"}))["bridge"] == 0.0
    assert fuse_legs(*args, 0.5, FUSION)["bridge"] == pytest.approx(1 / 61)


def test_words_joined_by_underscores_are_words_and_a_fulltext_term_as_written() -> None:
    assert words("Paul_McCartney's dad") == ["paul", "mccartney", "s", "dad"]
    for text in ["Paul_McCartney's dad", "paul mccartney's dad"]:
        assert "paul_mccartney" in fulltext_terms(text, words(text), ["paul", "mccartney", "dad"])
