"""The editing verbs of `Memory` (update, delete_episode, forget, delete_entity,
merge_entities, users) over the real embedded store, the real embedding model and the offline
extractor; every verb scoped by user."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine import (
    AsyncMemory,
    Deleted,
    InvalidInputError,
    Memory,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
    UserSummary,
)
from engine.add.messages import checksum
from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.models import REVALIDATED
from engine.store.base import GraphStore
from engine.store.reads import Reads
from engine.times import epoch

pytestmark = pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")
SECRET = "My password hint is my cat Felix. I live in Paris."


@pytest.fixture(scope="module")
def offline() -> OfflineExtractor:
    return OfflineExtractor()


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, offline: OfflineExtractor, tmp_path: Path
) -> Iterator[Memory]:
    yield Memory(store=store, embedder=embedder, extractor=offline, data_dir=tmp_path)


def _fact(mem: Memory, user: str, word: str) -> str:
    (uid,) = [f.uid for f in mem.get_all(user, include_invalid=True) if word in f.text]
    return uid


def _said(mem: Memory, user: str, query: str) -> str:
    result = mem.search(query, user_id=user)
    return " ".join(e.episode.text for e in result.episodes) + "\n" + result.context()


# -- users ----------------------------------------------------------------------------------


def test_users_lists_every_user_with_counts(mem: Memory) -> None:
    mem.add_facts([("Alice", "FRIEND_OF", "John"), ("John", "OWNS", "a dog")], user_id="alice")
    mem.add("I live in Paris.", user_id="bob")
    users = {u.user_id: u for u in mem.users()}
    assert users["alice"] == UserSummary(
        user_id="alice", entities=3, facts=2, valid_facts=2, episodes=0
    )
    assert users["bob"].episodes == 1 and users["bob"].facts >= 1
    assert [u.user_id for u in mem.users()] == sorted(users)


def test_the_same_words_twice_in_one_dated_call_are_two_messages(mem: Memory) -> None:
    """A "Yes", a question, "Yes" again: three messages, however the call is dated; the call
    added again stores nothing more."""
    said = [
        {"role": "user", "content": "Yes"},
        {"role": "assistant", "content": "Do you travel for work?"},
        {"role": "user", "content": "Yes"},
    ]
    first = mem.add(said, user_id="club", ts="2024-05-01T10:00:00Z")
    assert len(first.episode_uids) == 3 and first.episodes_skipped == 0
    again = mem.add(said, user_id="club", ts="2024-05-01T10:00:00Z")
    assert again.episode_uids == [] and again.episodes_skipped == 3
    assert mem.stats("club").episodes == 3


def test_the_same_words_by_another_speaker_in_another_call_are_another_message(
    mem: Memory, store: GraphStore
) -> None:
    """Ana says in a call of her own the words Maria said at the same time of the same chat:
    her message is stored too; either call added again stores nothing more."""
    maria = [{"role": "user", "name": "Maria", "content": "I adopted a dog."}]
    ana = [{"role": "user", "name": "Ana", "content": "I adopted a dog."}]
    when = {"user_id": "club", "session_id": "chat", "ts": "2024-05-01T10:00:00Z"}
    first = mem.add(maria, **when)
    added = mem.add(ana, **when)
    assert len(added.episode_uids) == 1 and added.episodes_skipped == 0
    for call in (maria, ana, maria + ana):
        again = mem.add(call, **when)
        assert again.episode_uids == [] and again.episodes_skipped == len(call)
    stored = Reads(store).episodes_by_uids("club", first.episode_uids + added.episode_uids)
    assert sorted(e.speaker or "" for e in stored) == ["Ana", "Maria"]
    assert mem.stats("club").episodes == 2


def test_a_message_stored_under_its_first_checksum_is_still_recognised(
    mem: Memory, store: GraphStore
) -> None:
    """A message stored under the checksum messages had before speakers were in their key is
    recognised when added again, and the same words by a named speaker are stored beside it."""
    when = {"user_id": "club", "session_id": "chat", "ts": "2024-05-01T10:00:00Z"}
    said = {"role": "user", "content": "Yes"}
    first = mem.add([said], **when)
    [episode] = Reads(store).episodes_by_uids("club", first.episode_uids)
    words = checksum("club", "chat", "user", "Yes", epoch(when["ts"], "ts"), None)
    assert episode.checksum == words
    named = mem.add([{**said, "name": "Ana"}], **when)
    assert len(named.episode_uids) == 1 and named.episodes_skipped == 0
    assert mem.add([said], **when).episodes_skipped == 1
    assert mem.add([said, {**said, "name": "Ana"}], **when).episodes_skipped == 2
    assert mem.stats("club").episodes == 2


# -- update ---------------------------------------------------------------------------------


def test_update_changes_text_and_ends_with_history(mem: Memory) -> None:
    mem.add_facts([("Alice", "LIVES_IN", "Paris")], user_id="alice")
    uid = _fact(mem, "alice", "Paris")
    fact = mem.update(
        uid, "alice", text="Alice lives in Paris, near the Louvre", valid_at="2020-01-01"
    )
    assert fact.text == "Alice lives in Paris, near the Louvre"
    assert fact.valid_at == datetime(2020, 1, 1, tzinfo=UTC)
    top = mem.search("Louvre", user_id="alice", limit=1).facts[0].fact
    assert top.uid == uid  # embedded again: the new words find it
    ended = mem.update(uid, "alice", invalid_at=datetime(2024, 5, 1))
    assert ended.invalid_at == datetime(2024, 5, 1, tzinfo=UTC)
    assert mem.get_all("alice") == []  # no longer current
    assert mem.search("Where does Alice live?", user_id="alice").facts == []
    events = [(h.event, h.detail) for h in mem.history(uid, "alice")]
    assert events[-2:] == [
        ("UPDATE", "Alice lives in Paris, near the Louvre"),
        ("INVALIDATE", None),
    ]


def test_a_fact_added_again_after_its_end_is_current_again_with_an_event(mem: Memory) -> None:
    mem.add_facts([("Dana", "WORKS_AT", "Acme")], user_id="alice")
    uid = _fact(mem, "alice", "Acme")
    mem.update(uid, "alice", invalid_at="2021-01-01")
    again = mem.add_facts([("Dana", "WORKS_AT", "Acme")], user_id="alice")
    assert (again.facts_added, again.facts_updated) == (0, 1)
    assert [f.invalid_at for f in mem.get_all("alice") if f.uid == uid] == [None]
    events = [(h.event, h.detail) for h in mem.history(uid, "alice")]
    assert events[-2:] == [("INVALIDATE", None), ("UPDATE", REVALIDATED)]
    mem.add_facts([("Dana", "WORKS_AT", "Acme")], user_id="alice")  # current: no event
    assert len(mem.history(uid, "alice")) == len(events)


def test_update_refuses_bad_input_and_other_users(mem: Memory) -> None:
    mem.add_facts([("Alice", "LIVES_IN", "Paris")], user_id="alice")
    uid = _fact(mem, "alice", "Paris")
    with pytest.raises(InvalidInputError, match="nothing to update"):
        mem.update(uid, "alice")
    with pytest.raises(InvalidInputError, match="ISO 8601"):
        mem.update(uid, "alice", valid_at="yesterday")
    with pytest.raises(InvalidInputError, match="before"):
        mem.update(uid, "alice", valid_at=2000.0, invalid_at=1000.0)
    with pytest.raises(NotFoundError):
        mem.update(uid, "mallory", text="Alice lives nowhere")
    assert mem.get_all("alice")[0].text == "Alice lives in Paris"
    mem.update(uid, "alice", invalid_at="2024-01-01")
    with pytest.raises(InvalidInputError, match="before it became true"):
        mem.update(uid, "alice", valid_at="2025-06-01")  # after the fact's own end
    (fact,) = mem.get_all("alice", include_invalid=True)
    assert fact.valid_at is None or fact.valid_at < fact.invalid_at  # type: ignore[operator]


# -- deleting messages and forgetting -------------------------------------------------------


def test_delete_episode_keeps_its_facts_and_hides_the_message(mem: Memory) -> None:
    added = mem.add(SECRET, user_id="u")
    (episode,) = added.episode_uids
    assert "password hint" in _said(mem, "u", "password hint")
    with pytest.raises(NotFoundError):
        mem.delete_episode(episode, "mallory")
    assert mem.delete_episode(episode, "u") == Deleted(episodes=[episode])
    assert SECRET not in _said(mem, "u", "password hint")
    facts = mem.get_all("u")
    assert len(facts) == len(added.fact_uids) and all(f.episodes == [] for f in facts)
    assert mem.stats("u").episodes == 0
    with pytest.raises(NotFoundError):
        mem.delete_episode(episode, "u")


def test_delete_leaves_the_message_but_forget_removes_it(mem: Memory) -> None:
    """A9: deleting the fact alone leaves the message that said it; `forget` removes both."""
    mem.add(SECRET, user_id="u")
    mem.add("My password hint is my cat Felix.", user_id="other")
    hint = _fact(mem, "u", "password")
    with pytest.raises(NotFoundError):
        mem.forget(hint, "other")
    forgotten = mem.forget(hint, "u")
    assert forgotten.facts == [hint] and len(forgotten.episodes) == 1
    said = _said(mem, "u", "What is my password hint?")
    assert "password" not in said
    assert hint not in [f.uid for f in mem.get_all("u", include_invalid=True)]
    assert mem.history(hint, "u") == []
    assert any("Paris" in f.text for f in mem.get_all("u"))  # the message's other facts stay
    assert "password hint" in _said(mem, "other", "password hint")  # another user's copy


# -- entities -------------------------------------------------------------------------------


def test_delete_entity_removes_its_facts(mem: Memory) -> None:
    mem.add_facts(
        [("Alice", "FRIEND_OF", "John"), ("John", "OWNS", "a dog"), ("Alice", "LIKES", "tea")],
        user_id="alice",
    )
    mem.add_facts([("John", "OWNS", "a cat")], user_id="bob")
    with pytest.raises(NotFoundError):
        mem.delete_entity("John", "mallory")
    deleted = mem.delete_entity("john", "alice")
    assert len(deleted.facts) == 2 and len(deleted.entities) == 1
    assert [f.text for f in mem.get_all("alice")] == ["Alice likes tea"]
    with pytest.raises(NotFoundError):
        mem.entity("John", "alice")
    assert mem.entity("John", "bob").facts  # bob's John is another entity
    assert mem.search("Who owns a dog?", user_id="alice").facts[0].fact.text == "Alice likes tea"


def test_merge_entities_moves_facts_names_and_mentions(mem: Memory) -> None:
    mem.add_facts(
        [
            ("Bob", "LIVES_IN", "Paris"),
            ("Bobby", "LIVES_IN", "Paris"),
            ("Bobby", "OWNS", "a boat"),
            ("Alice", "FRIEND_OF", "Bobby"),
            ("Bob", "KNOWS", "Bobby"),
        ],
        user_id="u",
    )
    bobby = mem.entity("Bobby", "u").entity
    kept = mem.merge_entities("Bob", "Bobby", "u")
    assert "Bobby" in kept.aliases and kept.mentions == 2 + 4  # Bob 2, Bobby 4
    assert mem.entity("Bobby", "u").entity.uid == kept.uid  # the old name finds Bob
    triples = sorted(f.triple for f in mem.get_all("u"))
    assert triples == [
        ("Alice", "FRIEND_OF", "Bob"),
        ("Bob", "LIVES_IN", "Paris"),
        ("Bob", "OWNS", "a boat"),
    ]
    lives = next(f for f in mem.get_all("u") if f.predicate == "LIVES_IN")
    assert lives.mentions == 2  # joined, not doubled
    assert mem.search("Who owns a boat?", user_id="u").facts[0].fact.subject == "Bob"
    assert [h.event for h in mem.history(kept.uid, "u")][-1] == "MERGE"
    with pytest.raises(NotFoundError):
        mem.entity(bobby.uid, "u")
    with pytest.raises(InvalidInputError, match="same entity"):
        mem.merge_entities("Bob", "Bobby", "u")


def test_the_users_own_entity_is_not_merged_away(mem: Memory) -> None:
    """Merged away, the user's own entity was deleted: "I" then named a new, empty one."""
    mem.add("I live in Oslo. My name is Yan.", user_id="u")
    mem.add_facts([("Yan Li", "WORKS_AT", "Acme")], user_id="u")
    me = mem.entity("Yan", "u").entity

    with pytest.raises(InvalidInputError, match=r"own entity .* merge the other way"):
        mem.merge_entities("Yan Li", "Yan", "u")
    assert mem.entity(me.uid, "u").facts  # still there
    kept = mem.merge_entities("Yan", "Yan Li", "u")
    assert kept.uid == me.uid and "Yan Li" in kept.aliases


def test_a_refused_delete_keeps_the_history_of_what_its_id_names(mem: Memory) -> None:
    """`delete` takes a fact's uid: given an entity's, it deletes nothing, the entity's
    change history neither."""
    mem.add_facts([("Bob", "KNOWS", "Bobby")], user_id="u")
    kept = mem.merge_entities("Bob", "Bobby", "u")
    history = mem.history(kept.uid, "u")
    assert [h.event for h in history][-1] == "MERGE"
    with pytest.raises(NotFoundError):
        mem.delete(kept.uid, "u")
    assert mem.history(kept.uid, "u") == history


def test_merge_keeps_an_invalidated_fact_invalid(mem: Memory) -> None:
    mem.add_facts([("Bobby", "LIVES_IN", "Rome")], user_id="u")
    mem.add_facts([("Bob", "LIKES", "tea")], user_id="u")
    mem.update(_fact(mem, "u", "Rome"), "u", invalid_at="2023-01-01")
    mem.merge_entities("Bob", "Bobby", "u")
    rome = [f for f in mem.get_all("u", include_invalid=True) if f.object == "Rome"]
    assert [(f.subject, f.is_valid) for f in rome] == [("Bob", False)]


# -- AsyncMemory ----------------------------------------------------------------------------


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def test_async_memory_has_every_public_method_of_memory() -> None:
    lifecycle = {"close", "aclose", "from_config"}
    assert _public(Memory) - lifecycle == _public(AsyncMemory) - lifecycle


def test_async_memory_runs_calls_off_the_event_loop(mem: Memory) -> None:
    async def scenario() -> tuple[list[str], int, Deleted]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        async with AsyncMemory(memory=mem) as amem:
            clock = asyncio.create_task(ticker())
            await amem.add_facts([("Alice", "LIVES_IN", "Paris")], user_id="alice")
            found, users = await asyncio.gather(
                amem.search("Where does Alice live?", user_id="alice"), amem.users()
            )
            clock.cancel()
            uid = found.facts[0].fact.uid
            gone = await amem.forget(uid, "alice")
        with pytest.raises(StoreUnavailableError, match="closed"):
            await amem.stats()
        return [u.user_id for u in users], ticks, gone

    users, ticks, gone = asyncio.run(scenario())
    assert users == ["alice"] and ticks > 0  # the loop ran while the calls did
    assert len(gone.facts) == 1
    assert mem.get_all("alice") == []  # a Memory passed in stays open after aclose


def test_async_memory_closes_the_memory_it_made(embedder: Embedder, tmp_path: Path) -> None:
    async def scenario() -> AsyncMemory:
        async with AsyncMemory(embedder=embedder, data_dir=tmp_path / "m") as amem:
            await amem.add_facts([("Alice", "LIVES_IN", "Paris")], user_id="alice")
            assert (await amem.stats("alice")).facts == 1
        return amem

    amem = asyncio.run(scenario())
    assert amem._pool._shutdown  # type: ignore[attr-defined]
    with pytest.raises(StoreError):
        amem.memory.stats()  # its store is closed


def test_closing_an_async_memory_lets_a_call_sent_end_whole_and_the_loop_run(
    embedder: Embedder, tmp_path: Path
) -> None:
    """A call its caller stopped awaiting (a timeout) still runs: the close waits for it to
    end whole (it closed the store under it: 1,000 of 4,000 facts stored), and the event
    loop runs on while it waits (the pool's shutdown held it for seconds)."""
    facts = [(f"Person {i}", "LIVES_IN", f"City {i}") for i in range(1500)]

    async def scenario() -> tuple[float, float]:
        gaps: list[float] = []

        async def ticker() -> None:
            last = time.perf_counter()
            while True:
                await asyncio.sleep(0.005)
                gaps.append(time.perf_counter() - last)
                last = time.perf_counter()

        clock = asyncio.create_task(ticker())
        async with AsyncMemory(embedder=embedder, data_dir=tmp_path / "m") as amem:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(amem.add_facts(facts, user_id="bob"), 0.05)
            gaps.clear()
            closing = time.perf_counter()
        closed = time.perf_counter() - closing
        clock.cancel()
        return max(gaps, default=0.0), closed

    longest_gap, closing = asyncio.run(scenario())
    assert longest_gap < closing / 2  # the loop ran while the close waited
    with Memory(embedder=embedder, data_dir=tmp_path / "m") as mem:
        assert mem.stats("bob").facts == len(facts)


def test_merge_moves_the_messages_that_mention_the_merged_entity(mem: Memory) -> None:
    said = mem.add("Bobby owns a boat.", user_id="u")
    mem.add_facts([("Bob", "LIKES", "tea")], user_id="u")
    assert mem.entity("Bobby", "u").episodes
    mem.merge_entities("Bob", "Bobby", "u")
    view = mem.entity("Bob", "u")
    assert [e.uid for e in view.episodes] == said.episode_uids
    assert mem.entity("Bobby", "u").entity.uid == view.entity.uid
