"""A dual search neither matches the question to the relations nor walks them in a chat's graph
of one-off relations (what an offline extractor makes of a chat: the semantic leg finds those
facts by their own text, the episode leg their messages); it walks where the graph is small,
where its relations hold many facts on average, where facts were loaded rather than said, and in
the expansion mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.extraction.schema import (
    ChatMessage,
    ExtractedFact,
    Extraction,
    ExtractionOutcome,
    KnownFact,
)
from engine.memory import Memory
from engine.models import SearchResult
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import GraphStore

PARAMS = ExpansionParams()
ALICE = [("Alice", "LIKES_TO_PAINT", "Watercolours"), ("Alice", "WENT_HIKING_IN", "the Alps")]
OTHERS = [(f"Person {i}", f"MENTIONED_ITEM_{i}", f"Item {i}") for i in range(PARAMS.one_off_graph)]
PAINTERS = [(f"Painter {i}", "LIKES_TO_PAINT", f"Subject {i}") for i in range(2)]
QUESTION = "What does Alice like to paint?"


def _walked(result: SearchResult) -> bool:
    return any("expansion" in hit.legs for hit in result.facts)


def _answered(result: SearchResult) -> bool:
    return any(hit.fact.object == "Watercolours" for hit in result.facts)


class SaidTriples:
    """Reads each message "subject | PREDICATE | object" as that fact."""

    name = "said-triples"

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome:
        facts = []
        for message in messages:
            s, p, o = (part.strip() for part in message.content.split("|"))
            facts.append(ExtractedFact(source=s, predicate=p, target=o, fact=f"{s} {p} {o}"))
        return ExtractionOutcome(extraction=Extraction(facts=facts))


def _said(facts: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    return [{"role": "user", "content": " | ".join(fact)} for fact in facts]


Memories = Callable[[], Memory]


@pytest.fixture
def memories(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Memories:
    """A new memory on the store each call: as another process, it counts the relations
    afresh (a memory that wrote keeps the counts it read before, for `search_refresh_s`)."""
    return lambda: Memory(
        store=store, embedder=embedder, data_dir=tmp_path, extractor=SaidTriples()
    )


def _chat(memories: Memories, facts: list[tuple[str, str, str]]) -> Memory:
    result = memories().add(_said(facts), user_id="u")
    assert result.facts_added == len(facts)
    return memories()


def test_no_walk_along_one_offs_of_a_large_graph(memories: Memories) -> None:
    chat = _chat(memories, ALICE + OTHERS)
    dual = chat.search(QUESTION, user_id="u")
    assert _answered(dual) and not _walked(dual)
    walk = chat.search(QUESTION, user_id="u", mode="expansion")
    assert _answered(walk) and _walked(walk)


def test_facts_written_without_a_message_since_the_count_are_walked(memories: Memories) -> None:
    chat = _chat(memories, ALICE + OTHERS)
    assert not _walked(chat.search(QUESTION, user_id="u"))
    chat.add(_said(PAINTERS), user_id="u")  # said: still a chat of one-offs
    assert not _walked(chat.search(QUESTION, user_id="u"))
    chat.add_facts([("Alice", "OWNS", "a cat")], user_id="u")
    dual = chat.search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_a_graph_whose_relations_hold_many_facts_is_walked(memories: Memories) -> None:
    many = [(f"Painter {i}", "LIKES_TO_PAINT", f"Subject {i}") for i in range(PARAMS.one_off_graph)]
    dual = _chat(memories, ALICE + many).search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_a_small_graph_is_walked(memories: Memories) -> None:
    dual = _chat(memories, ALICE + OTHERS[:10]).search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_facts_loaded_rather_than_said_are_walked(memory: Memory) -> None:
    """A knowledge base's rare relations: no message holds what they say."""
    memory.add_facts(ALICE + OTHERS, user_id="u")
    dual = memory.search(QUESTION, user_id="u")
    assert _answered(dual) and _walked(dual)


def test_the_anchors_facts_come_first_where_nothing_is_walked(memories: Memories) -> None:
    """Alice's facts before Bob's nearer-worded ones, as the walk's first hop from her would
    have put them."""
    bob = [("Bob", "LIKES_TO_PAINT", "Sunsets"), ("Bob", "REALLY_LIKES_TO_PAINT", "Boats")]
    dual = _chat(memories, ALICE + bob + OTHERS).search(QUESTION, user_id="u")
    assert not _walked(dual)
    assert [hit.fact.subject for hit in dual.facts[:3]] == ["Alice", "Alice", "Bob"]
