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
from engine.retrieval import episodes
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.stored_index import decode_into, finish
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


def _parts(store: GraphStore, user_id: str) -> list[str]:
    """The data of the user's stored index parts, in order."""
    indexes = MessageIndexes(store)
    stored = indexes.stored(user_id)
    parts = [indexes.part(user_id, n) for n, _ in stored.parts] if stored is not None else []
    return [part[1] for part in parts if part is not None]


def _stored_index(
    store: GraphStore, user_id: str, other_than: list[str] | None = None, parts: int = 1
) -> list[str] | None:
    """The data of the stored index's `parts` parts, other than `other_than`, once the
    background writes are done (None if none come)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        stored = _parts(store, user_id)
        if len(stored) == parts and stored != other_than:
            return stored
        time.sleep(0.05)
    return None


def _found(memory: Memory, query: str, user_id: str) -> list[tuple[str, str]]:
    result = memory.search(query, user_id=user_id, mode="episodes", limit=5)
    return [(hit.episode.uid, hit.episode.text) for hit in result.episodes]


@pytest.fixture
def first(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Iterator[Memory]:
    """A process that wrote alice's chat and searched it once: her index is stored."""
    with _memory(store, embedder, tmp_path / "first") as memory:
        memory.add("I keep bees on the roof", user_id="bob")
        _chat_searched(memory, STORE_AFTER + 6, parts=1)
        yield memory


@pytest.fixture
def second(
    first: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> Iterator[Memory]:
    with _memory(store, embedder, tmp_path / "second") as memory:
        yield memory


def _chat_searched(memory: Memory, count: int, parts: int) -> None:
    """Alice's chat of `count` messages written and searched: her index stored in `parts`."""
    memory.add(_chat(count), user_id="alice", session_id="s1", ts=1_700_000_000)
    memory.search("kayaking", user_id="alice", mode="episodes")
    assert _stored_index(memory.store, "alice", parts=parts) is not None


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


def _decoded_uids(parts: list[str]) -> list[str]:
    index = LexicalIndex()
    assert all(decode_into(index, part) for part in parts)
    finish(index)
    return index.uids


def test_a_damaged_index_is_read_past_and_stored_again(
    first: Memory, second: Memory, store: GraphStore
) -> None:
    MessageIndexes(store).store_part("alice", 0, [], 1, "not an index", last=True)
    assert _found(second, "kayaking on the lake", "alice") == _found(
        first, "kayaking on the lake", "alice"
    )
    assert _stored_index(store, "alice", other_than=["not an index"]) is not None


def test_each_user_has_an_index_of_their_own(first: Memory, second: Memory) -> None:
    for query in ("kayaking on the lake", "bees on the roof"):
        assert [text for _, text in _found(second, query, "bob")] == ["I keep bees on the roof"]
    assert MessageIndexes(second.store).stored("bob") is None  # one message: not worth it


def test_deleting_a_user_deletes_their_stored_index(first: Memory, store: GraphStore) -> None:
    first.delete_all("alice")
    assert store.run("get_message_index", {"user_id": "alice"})[0][2] == []


@pytest.fixture
def in_parts(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Memory]:
    """A process that wrote alice's chat of 150 messages and searched it once: her index is
    stored in four parts of 40, 40, 40 and 30."""
    monkeypatch.setattr(episodes, "PART_MESSAGES", 40)
    with _memory(store, embedder, tmp_path / "first") as memory:
        _chat_searched(memory, 150, parts=4)
        yield memory


@pytest.fixture
def reader(
    in_parts: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> Iterator[Memory]:
    """The next process."""
    with _memory(store, embedder, tmp_path / "reader") as memory:
        yield memory


def test_an_index_stored_in_parts_is_read_whole(
    in_parts: Memory, reader: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_full_read(reader, monkeypatch)
    for query in ("kayaking on the lake", "pottery class day 61", "puppy day 3"):
        found = _found(reader, query, "alice")
        assert found and found == _found(in_parts, query, "alice")


def test_new_messages_store_the_last_part_again_and_leave_the_others(
    in_parts: Memory, reader: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    before = _parts(store, "alice")
    in_parts.add(_chat(STORE_AFTER), user_id="alice", session_id="s2")
    _found(reader, "harbour market", "alice")  # reads 4 parts and the new messages: stores
    after = _stored_index(store, "alice", parts=6)
    assert after is not None and after[:3] == before[:3] and after[3] != before[3]
    third = _memory(store, embedder, tmp_path / "third")
    try:
        assert len(_decoded_uids(after)) == 150 + STORE_AFTER
        assert _found(third, "harbour market day 63", "alice") == _found(
            in_parts, "harbour market day 63", "alice"
        )
    finally:
        third.close()


def test_a_damaged_part_keeps_those_before_it_and_is_stored_again(
    in_parts: Memory, reader: Memory, store: GraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _parts(store, "alice")
    MessageIndexes(store).store_part("alice", 2, [], 1, "not an index", last=False)
    read: list[int] = []
    texts = reader.retriever.episode_leg.stored.texts  # type: ignore[union-attr]

    def counted(user_id: str, uids: list[str], terms_v: int) -> object:
        read.append(len(uids))
        return texts(user_id, uids, terms_v)

    _no_full_read(reader, monkeypatch)
    monkeypatch.setattr(reader.retriever.episode_leg.stored, "texts", counted)
    found = _found(reader, "pottery class day 61", "alice")  # the rest ties: in any order
    assert found[0] == _found(in_parts, "pottery class day 61", "alice")[0]
    assert found[0][1].startswith("Message 61:")
    assert sum(read) == 70  # the messages of the damaged part and the one after it
    damaged = [*before[:2], "not an index", before[3]]
    after = _stored_index(store, "alice", other_than=damaged, parts=4)
    assert after is not None and after[:2] == before[:2]
    assert sorted(_decoded_uids(after)) == sorted(_decoded_uids(before))
