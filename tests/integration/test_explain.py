"""`search(..., explain=True)` (issue 52, M5): each hit says its rank and score in each leg
that found it, the anchor and relation path of an expansion hit, and the fusion's inputs;
nothing is explained (or read) when it is off."""

from __future__ import annotations

import pytest

from engine.memory import Memory

FACTS = [("Alice", "FRIEND_OF", "John"), ("John", "LIVES_IN", "Paris"), ("Bob", "LIKES", "tea")]


@pytest.fixture
def friends(memory: Memory) -> Memory:
    memory.add_facts(FACTS, user_id="u")
    memory.add("John told me he loves the museums of Paris.", user_id="u")
    return memory


def test_each_fact_says_its_legs_path_and_fusion(friends: Memory) -> None:
    result = friends.search("Where does Alice's friend live?", user_id="u", explain=True)
    assert result.facts
    for hit in result.facts:
        why = hit.explanation
        assert why is not None and set(why.legs) == set(hit.legs), (hit.legs, why)
        assert why.fused is not None and why.provenance is not None
        if why.fused > 0:  # a semantic vote the sure expansion overrules counts 0
            assert why.boost and why.fused * why.boost * why.provenance == pytest.approx(hit.score)
        assert all(leg.rank >= 1 for leg in why.legs.values())
    walked = [h for h in result.facts if "expansion" in h.legs]
    assert walked and all(h.explanation and h.explanation.anchor == "Alice" for h in walked)
    by_text = {h.fact.text: h.explanation for h in walked}
    lives = by_text["John lives in Paris"]
    assert lives is not None and lives.relations[-1] == "LIVES_IN" and len(lives.relations) == 2
    assert lives.confidence is not None and 0.0 <= lives.confidence <= 1.0
    semantic = [h for h in result.facts if "semantic" in h.legs]
    assert all(
        h.explanation.legs["semantic"].score == pytest.approx(h.similarity) for h in semantic
    )  # type: ignore[union-attr]


def test_each_message_says_its_rank_and_the_facts_vote(friends: Memory) -> None:
    result = friends.search("museums in Paris", user_id="u", explain=True)
    assert result.episodes
    for hit in result.episodes:
        why = hit.explanation
        assert why is not None and ("episodes" in why.legs) == ("episodes" in hit.legs)
        assert why.provenance is not None and why.provenance >= 0.0


def test_nothing_is_explained_when_off(friends: Memory) -> None:
    result = friends.search("Where does Alice's friend live?", user_id="u")
    assert result.facts and all(h.explanation is None for h in result.facts)
    assert all(h.explanation is None for h in result.episodes)
