"""A dual search does not walk along relations that are one-offs of a graph of hundreds of facts
(what an offline extractor makes of a chat: the semantic leg finds those facts by their own
text); it walks where the graph is small, where a relation the question names holds many facts,
and in the expansion mode."""

from __future__ import annotations

import pytest

from engine.memory import Memory
from engine.models import SearchResult
from engine.retrieval.tuning import ExpansionParams

PARAMS = ExpansionParams()
ALICE = [("Alice", "LIKES_TO_PAINT", "Watercolours"), ("Alice", "WENT_HIKING_IN", "the Alps")]
OTHERS = [(f"Person {i}", f"MENTIONED_ITEM_{i}", f"Item {i}") for i in range(PARAMS.one_off_graph)]
PAINTERS = [(f"Painter {i}", "LIKES_TO_PAINT", f"Subject {i}") for i in range(PARAMS.one_off_facts)]
QUESTION = "What does Alice like to paint?"


def _walked(result: SearchResult) -> bool:
    return any("expansion" in hit.legs for hit in result.facts)


def _answered(result: SearchResult) -> bool:
    return any(hit.fact.object == "Watercolours" for hit in result.facts)


@pytest.fixture
def chat_like(memory: Memory) -> Memory:
    memory.add_facts(ALICE + OTHERS, user_id="u")
    return memory


def test_no_walk_along_one_offs_of_a_large_graph(chat_like: Memory) -> None:
    dual = chat_like.search(QUESTION, user_id="u")
    assert _answered(dual) and not _walked(dual)
    walk = chat_like.search(QUESTION, user_id="u", mode="expansion")
    assert _answered(walk) and _walked(walk)


def test_a_relation_written_since_the_count_is_walked(chat_like: Memory) -> None:
    assert not _walked(chat_like.search(QUESTION, user_id="u"))
    chat_like.add_facts(PAINTERS, user_id="u")
    dual = chat_like.search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_a_relation_of_many_facts_is_walked(memory: Memory) -> None:
    memory.add_facts(ALICE + OTHERS + PAINTERS, user_id="u")
    dual = memory.search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_a_small_graph_is_walked(memory: Memory) -> None:
    memory.add_facts(ALICE + OTHERS[:10], user_id="u")
    dual = memory.search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)
