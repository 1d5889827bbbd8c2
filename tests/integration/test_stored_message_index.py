"""A user's message index is stored with the data once a process has built it, so that the
next process's first search of that user reads it instead of every message (issue 51).

Two `Memory` objects over one store stand for two processes. What the second one finds is
what the first found; messages written since the index was stored are found too; a deleted
message's terms leave the store with it; each user's index is that user's alone. On every
adapter that runs here, with the real embedding model.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.retrieval.stored_index import decode
from engine.retrieval.tuning import STORE_AFTER
from engine.store.base import GraphStore
from engine.store.message_index import MessageIndexes

WAIT_S = 20.0
TOPICS = ["kayaking on the lake", "the pottery class", "my sister's puppy", "the harbour market"]


def _chat(count: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Message {i}: we talked about {TOPICS[i % 4]} on day {i}."}
        for i in range(count)
    ]


def _memory(store: GraphStore, embedder: Embedder, data_dir: Path) -> Memory:
    return Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=data_dir)


def _stored_index(store: GraphStore, user_id: str, other_than: str | None = None) -> str | None:
    """The stored index's data, other than `other_than`, once the background write is done
    (None if none comes)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        stored = MessageIndexes(store).stored(user_id)
        if stored is not None and stored.data != other_than:
            return stored.data
        time.sleep(0.05)
    return None


def _found(memory: Memory, query: str, user_id: str) -> list[tuple[str, str]]:
    result = memory.search(query, user_id=user_id, mode="episodes", limit=5)
    return [(hit.episode.uid, hit.episode.text) for hit in result.episodes]


@pytest.fixture
def first(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Iterator[Memory]:
    """A process that wrote alice's chat and searched it once: her index is stored."""
    memory = _memory(store, embedder, tmp_path / "first")
    memory.add(_chat(STORE_AFTER + 6), user_id="alice", session_id="s1", ts=1_700_000_000)
    memory.add("I keep bees on the roof", user_id="bob")
    memory.search("kayaking", user_id="alice", mode="episodes")
    assert _stored_index(store, "alice") is not None
    yield memory
    memory.close()


@pytest.fixture
def second(
    first: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> Iterator[Memory]:
    memory = _memory(store, embedder, tmp_path / "second")
    yield memory
    memory.close()


def _no_full_read(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("read every message although an index is stored")

    monkeypatch.setattr(memory.retriever.reads, "episode_texts", refuse)


def test_the_next_process_finds_what_the_first_found_without_reading_every_message(
    first: Memory, second: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_full_read(second, monkeypatch)
    for query in ("kayaking on the lake", "pottery class day 7", "puppy"):
        found = _found(second, query, "alice")
        assert found and found == _found(first, query, "alice")
        assert all(text.startswith("Message ") for _, text in found)


def test_messages_written_since_the_index_was_stored_are_found(
    first: Memory, second: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    first.add("Yesterday I saw a heron by the reservoir", user_id="alice", session_id="s2")
    _no_full_read(second, monkeypatch)
    found = _found(second, "heron reservoir", "alice")
    assert found[0][1] == "Yesterday I saw a heron by the reservoir"


def test_a_deleted_message_leaves_the_stored_index_with_its_terms(
    first: Memory, second: Memory, store: GraphStore
) -> None:
    uid, text = _found(first, "pottery class day 5", "alice")[0]
    assert text.startswith("Message 5:")
    first.delete_episode(uid, user_id="alice")
    assert MessageIndexes(store).stored("alice") is None
    assert uid not in {u for u, _ in _found(second, "pottery class day 5", "alice")}
    data = _stored_index(store, "alice")  # the second process stored its index again
    assert data is not None and uid not in _decoded_uids(data)


def _decoded_uids(data: str) -> list[str]:
    index = decode(data)
    assert index is not None
    return index.uids


def test_a_damaged_index_is_read_past_and_stored_again(
    first: Memory, second: Memory, store: GraphStore
) -> None:
    params = {"user_id": "alice", "uids": [], "format": 1, "data": "not an index"}
    store.run("set_message_index", params, read_only=False)
    assert _found(second, "kayaking on the lake", "alice") == _found(
        first, "kayaking on the lake", "alice"
    )
    assert _stored_index(store, "alice", other_than="not an index") is not None


def test_each_user_has_an_index_of_their_own(first: Memory, second: Memory) -> None:
    for query in ("kayaking on the lake", "bees on the roof"):
        assert [text for _, text in _found(second, query, "bob")] == ["I keep bees on the roof"]
    assert MessageIndexes(second.store).stored("bob") is None  # one message: not worth it


def test_deleting_a_user_deletes_their_stored_index(first: Memory, store: GraphStore) -> None:
    first.delete_all("alice")
    assert store.run("get_message_index", {"user_id": "alice"})[0][1] is None
