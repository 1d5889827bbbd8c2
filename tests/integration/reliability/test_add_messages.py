"""What `add` keeps of a message (issue 48 M8, M9, L1; Build 6-7): the text as written, a
message said again as a new episode, a failed extraction retried and dead-lettered, and the
number of messages per call and per prompt bounded. The real store, embedder and HTTP."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.errors import LimitExceededError
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, http_error, tool_call
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.helpers import extraction, llm_memory

T = 1_700_000_000.0  # an explicit time


@pytest.fixture
def store(shared_store: GraphStore) -> GraphStore:
    return shared_store


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, llm: ScriptedLLM, tmp_path: Path
) -> Iterator[Memory]:
    with llm_memory(store, embedder, llm, tmp_path, max_messages_per_prompt=3) as memory:
        yield memory


def _episodes(mem: Memory, user: str, uids: list[str]) -> list[tuple[str, str]]:
    return sorted((e.content, e.status) for e in mem.reads.episodes_by_uids(user, uids))


def test_a_message_is_stored_as_written_and_found(mem: Memory, tally: Tally) -> None:
    user = "verbatim"
    mem.delete_all(user)
    text = "Recipe for the x² cake:\n    1. flour\n\n    2. ﬁgs  (fresh)\tonly"
    added = mem.add(text, user)
    assert _episodes(mem, user, added.episode_uids) == [(text, "ok")]
    found = mem.search("recipe cake flour figs", user, mode="episodes").episodes
    assert [e.episode.text for e in found][:1] == [text]
    assert "\n" not in found[0].episode.line()  # a context line stays one line
    # the same message, laid out otherwise, at the same explicit time: the same message
    again = mem.add(" ".join(text.split()), user, ts=T)
    assert mem.add(text, user, ts=T).episodes_skipped == 1 and again.episode_uids
    tally.cases += 3


def test_a_message_said_again_without_a_time_is_a_new_episode(mem: Memory, tally: Tally) -> None:
    user = "headache"
    mem.delete_all(user)
    monday = mem.add("I have a headache again", user)
    friday = mem.add("I have a headache again", user)
    assert friday.episodes_skipped == 0 and friday.episode_uids != monday.episode_uids
    assert mem.stats(user).episodes == 2
    twice = mem.add([{"role": "user", "content": "ok"}, {"role": "user", "content": "ok"}], user)
    assert len(twice.episode_uids) == 2
    # with an explicit time, the same message is the same message
    assert mem.add("I have a headache again", user, ts=T).episode_uids
    assert mem.add("I have a headache again", user, ts=T).episodes_skipped == 1
    assert mem.stats(user).episodes == 5
    tally.cases += 3


@pytest.mark.parametrize("ts", [None, T])
def test_a_failed_message_is_dead_lettered_and_retried_when_added_again(
    mem: Memory, llm: ScriptedLLM, tmp_path: Path, tally: Tally, ts: float | None
) -> None:
    user = f"retry-{ts is None}"
    mem.delete_all(user)
    llm.script(http_error(400, "bad request"))
    failed = mem.add("My sister Ann lives in Oslo", user, ts=ts)
    assert failed.extraction_error and _episodes(mem, user, failed.episode_uids)[0][1] == "failed"
    lines = (tmp_path / "dead_letters.jsonl").read_text(encoding="utf-8").splitlines()
    letters = [json.loads(line) for line in lines]
    assert [(d["record"]["content"], d["user_id"]) for d in letters] == [
        ("My sister Ann lives in Oslo", user)
    ]
    llm.script(tool_call(extraction([("Ann", "LIVES_IN", "Oslo")])))
    again = mem.add("My sister Ann lives in Oslo", user, ts=ts)
    assert again.extraction_error is None and again.facts_added == 1
    assert again.episode_uids == failed.episode_uids  # the failed episode, now extracted
    assert _episodes(mem, user, again.episode_uids) == [("My sister Ann lives in Oslo", "ok")]
    assert mem.stats(user).episodes == 1
    tally.cases += 2
    tally.faults += 1


def test_messages_per_add_and_per_prompt_are_bounded(
    store: GraphStore, embedder: Embedder, llm: ScriptedLLM, tmp_path: Path, tally: Tally
) -> None:
    user = "many-messages"
    with llm_memory(
        store, embedder, llm, tmp_path, max_messages_per_add=10, max_messages_per_prompt=4
    ) as mem:
        mem.delete_all(user)
        many = [{"role": "user", "content": f"message {i}"} for i in range(11)]
        with pytest.raises(LimitExceededError) as caught:
            mem.add(many, user)
        assert "max_messages_per_add" in str(caught.value)
        assert mem.stats(user).episodes == 0
        llm.requests.clear()
        result = mem.add(many[:10], user)
    prompts = [r["messages"][-1]["content"] for r in llm.requests]
    assert result.llm_calls == 3 and len(prompts) == 3  # 4 + 4 + 2
    assert ["message 0" in p for p in prompts] == [True, False, False]
    assert "message 9" in prompts[2] and len(result.episode_uids) == 10
    tally.cases += 2


@pytest.mark.parametrize("ts", [None, T])
def test_a_failed_add_without_a_source_is_replayed_onto_its_episode(
    mem: Memory, llm: ScriptedLLM, tmp_path: Path, tally: Tally, ts: float | None
) -> None:
    """`ingest(retry_failed=True)` finds the failed episode under the letter's checksum and
    extracts it in place: no second episode, the letter resolved."""
    user = f"replay-{ts is None}"
    mem.delete_all(user)
    llm.script(http_error(400, "bad request"))
    failed = mem.add("My brother Tom lives in Rome", user, ts=ts)
    llm.script(tool_call(extraction([("Tom", "LIVES_IN", "Rome")])))
    replayed = mem.ingest([], user_id=user, retry_failed=True)
    assert failed.extraction_error and replayed.dead_letters_retried == 1
    assert (replayed.messages_added, replayed.dead_letters_resolved) == (1, 1)
    assert _episodes(mem, user, failed.episode_uids) == [("My brother Tom lives in Rome", "ok")]
    assert mem.stats(user).episodes == 1
    assert [(f.subject, f.object) for f in mem.get_all(user)] == [("Tom", "Rome")]
    assert not (tmp_path / "dead_letters.jsonl").exists()
    tally.cases += 1
    tally.faults += 1
