"""The episode leg: messages found by their words and meaning, with speakers, times, sessions,
and the facts behind them; on the real embedded store and the real embedding model."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.prompt_block import estimate_tokens
from engine.retrieval.background import BACKGROUND
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer

MAY_1 = datetime(2023, 5, 1, 10, 0, tzinfo=UTC)
JUNE_1 = datetime(2023, 6, 1, 10, 0, tzinfo=UTC)
CHAT = [  # (session, when, speaker, text)
    ("s1", MAY_1, "Maria", "Hey John! How was your weekend?"),
    ("s1", MAY_1, "John", "Great, I went kayaking on the lake with my brother."),
    ("s1", MAY_1, "Maria", "Nice. I donated my old bike to the community shelter."),
    ("s2", JUNE_1, "John", "Did you finish the pottery class?"),
    ("s2", JUNE_1, "Maria", "Yes! I made a blue bowl for my mother."),
    ("s2", JUNE_1, "John", "My sister Lena just adopted a puppy called Biscuit."),
]


@pytest.fixture(scope="module")
def chat(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[Memory]:
    store = FalkorDBStore.embedded(falkordb_server, "episode_leg_tests")
    memory = Memory(store=store, embedder=embedder, extractor=OfflineExtractor())
    memory.reset()
    for index, (session, when, speaker, text) in enumerate(CHAT):
        memory.add(
            [{"role": "user", "content": text, "name": speaker}],
            user_id="pair",
            session_id=session,
            ts=when.timestamp() + index,
            source=f"turn{index}",
        )
    memory.add("I collect old maps of Lisbon", user_id="other")
    yield memory
    memory.reset()
    store.close()


def test_a_message_is_found_by_its_words_with_speaker_time_and_session(chat: Memory) -> None:
    result = chat.search("What did Maria donate to the shelter?", user_id="pair")
    top = result.episodes[0].episode
    assert top.text == CHAT[2][3]
    assert (top.speaker, top.session_id, top.source) == ("Maria", "s1", "turn2")
    assert top.ts.date() == MAY_1.date()
    assert "episodes" in result.episodes[0].legs


def test_facts_carry_the_messages_they_came_from(chat: Memory) -> None:
    result = chat.search("Who adopted a puppy?", user_id="pair")
    with_sources = [hit for hit in result.facts if hit.sources]
    assert with_sources, [h.fact.text for h in result.facts]
    assert all(s.source and s.source.startswith("turn") for h in with_sources for s in h.sources)


def test_since_and_until_keep_messages_of_that_window(chat: Memory) -> None:
    later = chat.search("bowl pottery kayaking", user_id="pair", since=JUNE_1)
    assert later.episodes and all(e.episode.ts >= JUNE_1 for e in later.episodes)
    earlier = chat.search("bowl pottery kayaking", user_id="pair", until=JUNE_1)
    assert earlier.episodes and all(e.episode.ts < JUNE_1 for e in earlier.episodes)
    assert all(
        (h.fact.valid_at or h.fact.first_seen) < JUNE_1  # type: ignore[operator]
        for h in earlier.facts
    )


def test_episodes_mode_and_context_with_dates(chat: Memory) -> None:
    result = chat.search("kayaking on the lake", user_id="pair", mode="episodes")
    assert result.facts == [] and result.episodes[0].episode.source == "turn1"
    context = chat.search("kayaking on the lake", user_id="pair").context(max_tokens=400)
    assert "Messages:" in context
    assert "[2023-05-01] John: Great, I went kayaking" in context


def test_a_budget_asks_for_the_hits_that_fill_it(chat: Memory) -> None:
    """`max_tokens` on search: more hits than `limit` when the budget holds them, and the
    result's block fits it; nothing of another user comes with the larger search."""
    small = chat.search("family", user_id="pair", limit=2)
    large = chat.search("family", user_id="pair", limit=2, max_tokens=200)
    assert len(small.episodes) == 2 and len(large.episodes) == len(CHAT)
    block = large.context()
    assert sum(estimate_tokens(line) for line in block.splitlines()) <= 200
    assert "Lisbon" not in block and large.max_tokens == 200


def test_no_user_sees_another_users_messages(chat: Memory) -> None:
    assert all(e.episode.source != "turn2" for e in chat.search("bike", user_id="other").episodes)
    found = chat.search("maps of Lisbon", user_id="pair").episodes
    assert all("Lisbon" not in e.episode.text for e in found)


@contextmanager
def held(store: FalkorDBStore, statement: str) -> Iterator[threading.Event]:
    """The store's `statement` waits until the block ends; the event tells it was asked."""
    asked, go, run = threading.Event(), threading.Event(), store.run

    def slow(name: str, params: dict[str, object], **kwargs: object) -> object:
        if name == statement:
            asked.set()
            go.wait(timeout=10)
        return run(name, params, **kwargs)  # type: ignore[arg-type]

    store.run = slow  # type: ignore[assignment]
    try:
        yield asked
    finally:
        go.set()
        del store.run


def test_another_process_writes_are_seen_after_the_refresh(
    chat: Memory, embedder: Embedder
) -> None:
    leg = chat.retriever.episode_leg
    assert chat.search("telescope", user_id="late").episodes == []
    writer = Memory(store=chat.store, embedder=embedder, extractor=OfflineExtractor())
    writer.add("I bought a telescope for stargazing", user_id="late")
    assert chat.search("telescope", user_id="late").episodes == []  # within refresh_s
    leg.params = replace(leg.params, refresh_s=0.0)
    try:
        with held(chat.store, "stamp_user_episodes") as count:  # the store is slow to count
            assert chat.search("telescope", user_id="late").episodes == []  # none waits for it
            assert count.wait(timeout=10)  # asked aside
        BACKGROUND.drain()
        assert chat.search("telescope", user_id="late").episodes
    finally:
        leg.params = replace(leg.params, refresh_s=30.0)


def test_a_message_another_process_deleted_is_not_shown_after_the_refresh(
    chat: Memory, embedder: Embedder
) -> None:
    """Another process deletes a message and writes one: the user holds as many messages as
    before, and once `refresh_s` has passed the search shows the new one, not the deleted."""
    leg = chat.retriever.episode_leg
    writer = Memory(store=chat.store, embedder=embedder, extractor=OfflineExtractor())
    code = writer.add("My locker code is 4417", user_id="swap", ts=MAY_1).episode_uids[0]
    writer.add("I adopted a kitten named Miso", user_id="swap", ts=MAY_1)
    assert "4417" in chat.search("locker code", user_id="swap").context()  # indexed here
    writer.delete_episode(code, "swap")
    writer.add("I repainted my kayak green", user_id="swap", ts=JUNE_1)
    leg.params = replace(leg.params, refresh_s=0.0)
    try:
        chat.search("kayak", user_id="swap")  # checked aside
        BACKGROUND.drain()
        shown = chat.search("locker code kayak", user_id="swap", mode="episodes").episodes
    finally:
        leg.params = replace(leg.params, refresh_s=30.0)
    texts = [hit.episode.text for hit in shown]
    assert any("kayak" in text for text in texts)
    assert not any("4417" in text for text in texts)


def test_a_question_found_is_followed_by_the_answer_that_shares_none_of_its_words(
    chat: Memory,
) -> None:
    result = chat.search("Was the pottery class finished?", user_id="pair", mode="episodes")
    sources = [hit.episode.source for hit in result.episodes]
    asked = sources.index("turn3")  # "Did you finish the pottery class?"
    reply = result.episodes[asked + 1]
    assert reply.episode.source == "turn4" and "reply" in reply.legs
    assert reply.reply_to == result.episodes[asked].episode.uid
    assert reply.score == result.episodes[asked].score
    assert "blue bowl" in result.context(max_tokens=60)
