"""The vectors of a user's relation names are stored once a search has embedded them, so the
next process's first search of that user embeds only its question (issue 51). Two `Memory`
objects over one store stand for two processes; on every adapter that runs here, with the
real embedding model."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.retrieval.background import BACKGROUND
from engine.store.base import GraphStore

WAIT_S = 20.0
FACTS = [
    ("Alice", "LIVES_IN", "Paris"),
    ("Alice", "WORKS_AT", "Acme"),
    ("Alice", "SISTER_OF", "Beth"),
    ("Beth", "PLAYS_IN_CLUB", "Rovers"),
    ("Acme", "LOCATED_IN", "Lyon"),
]


def _stored(store: GraphStore, user_id: str) -> str | None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        rows = store.run("get_relation_vectors", {"user_id": user_id})
        if rows and rows[0][1]:
            return str(rows[0][1])
        time.sleep(0.05)
    return None


class _Counting:
    """The embedder, with every text it is asked to embed noted."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder, self.texts = embedder, []

    def encode(self, texts: list[str], *args: object, **kwargs: object) -> object:
        self.texts += texts
        return self.embedder.encode(texts, *args, **kwargs)  # type: ignore[arg-type]

    def encode_one(self, text: str) -> object:
        return self.embedder.encode_one(text)


@pytest.fixture
def first(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Iterator[Memory]:
    memory = Memory(store=store, embedder=embedder, data_dir=tmp_path / "first")
    memory.add_facts(FACTS, user_id="alice")
    memory.search("Where does Alice's sister play?", user_id="alice")
    assert _stored(store, "alice") is not None
    yield memory
    memory.close()


def test_the_next_process_embeds_no_relation_name_and_ranks_the_same(
    first: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    second = Memory(store=store, embedder=embedder, data_dir=tmp_path / "second")
    counting = _Counting(embedder)
    second.retriever.scorer._embedder = counting  # type: ignore[assignment]
    question = "Which club does Alice's sister play in?"
    found = second.search(question, user_id="alice")
    assert "plays in club" not in counting.texts and "lives in" not in counting.texts
    expected = first.search(question, user_id="alice")
    assert [f.fact.text for f in found.facts] == [f.fact.text for f in expected.facts]
    assert found.facts and found.facts[0].fact.object == "Rovers"
    second.close()


def test_vectors_of_another_model_are_not_used(
    first: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    data = _stored(store, "alice")
    params = {"user_id": "alice", "model": "another-model@384", "data": data}
    store.run("set_relation_vectors", params, read_only=False)
    second = Memory(store=store, embedder=embedder, data_dir=tmp_path / "second")
    counting = _Counting(embedder)
    second.retriever.scorer._embedder = counting  # type: ignore[assignment]
    second.search("Which club does Alice's sister play in?", user_id="alice")
    assert "plays in club" in counting.texts
    second.close()


def test_each_user_has_their_own_and_deleting_the_user_deletes_them(
    first: Memory, store: GraphStore
) -> None:
    first.add_facts([("Carl", "OWNS", "Boat")], user_id="carl")
    first.search("What does Carl own?", user_id="carl")
    assert _stored(store, "carl") is not None
    first.delete_all("alice")
    assert not store.run("get_relation_vectors", {"user_id": "alice"})
    assert store.run("get_relation_vectors", {"user_id": "carl"})


def test_they_wait_for_the_vector_indexes_to_be_built(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write while FalkorDB builds a vector index waits for the build's batch, and every read
    sent after it waits for the write: a search during the build stores nothing, the first
    one after it stores them."""
    memory = Memory(store=store, embedder=embedder, data_dir=tmp_path / "warming")
    memory.add_facts(FACTS, user_id="warming")
    monkeypatch.setattr(store, "warming", lambda: ["Fact"])
    memory.search("Where does Alice's sister play?", user_id="warming")
    BACKGROUND.drain()  # what a search stores is written in the background
    assert not store.run("get_relation_vectors", {"user_id": "warming"})
    monkeypatch.setattr(store, "warming", lambda: [])
    memory.search("Where does Alice live?", user_id="warming")
    assert _stored(store, "warming") is not None
    memory.close()
