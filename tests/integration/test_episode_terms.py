"""Each message's index terms are computed once, when it is written, and stored with it: a
user's first search reads them instead of tokenizing every message. Messages stored without
them (an older store) or under another version are indexed from their text, as before.
On the real embedded store and the real embedding model."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np
import pytest

from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.lexical import TERMS_VERSION, LexicalIndex, stored_terms
from engine.retrieval.tuning import BM25
from engine.store.base import EpisodeText
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer

MESSAGES = [
    "I went kayaking on the lake with my brother on Saturday.",
    "My sister Lena adopted a puppy called Biscuit.",
    "The pottery class ended; I made a blue bowl for my mother.",
    "Hiking boots are on sale at the market near the harbour.",
]


@pytest.fixture(scope="module")
def memory(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[Memory]:
    store = FalkorDBStore.embedded(falkordb_server, "episode_terms_tests")
    memory = Memory(store=store, embedder=embedder, extractor=OfflineExtractor())
    memory.reset()
    for at, text in enumerate(MESSAGES):
        memory.add(text, user_id="terms", session_id="s1", ts=1_700_000_000.0 + at)
    memory.add("I paint watercolours of lighthouses", user_id="neighbour")
    yield memory
    memory.reset()
    store.close()


def _stored(memory: Memory, user_id: str, version: int = TERMS_VERSION) -> list[str | None]:
    return memory.retriever.reads.episode_texts(user_id, version)[1]


def _strip_terms(memory: Memory, user_id: str) -> None:
    """Make the user's messages look as an older store wrote them: no stored terms."""
    graph = memory.store._graph  # type: ignore[attr-defined]
    graph.query("MATCH (p:Episode {user_id: $u}) REMOVE p.terms, p.terms_v", {"u": user_id})


def _fresh(leg: EpisodeLeg, user_id: str) -> LexicalIndex:
    leg.forget(user_id)
    return leg.index(user_id)


def _tokenized(index: LexicalIndex) -> LexicalIndex:
    """The same messages indexed from their text in process (what a load did before)."""
    out = LexicalIndex()
    out.add([index.doc(d) for d in range(len(index))])
    return out


def _postings(index: LexicalIndex) -> dict[str, list[tuple[int, int]]]:
    terms = {*index.postings, *(t for block in index.blocks for t in block.spans)}
    return {
        term: sorted(
            (int(d), int(c))
            for docs, tf in index.term_postings(term)
            for d, c in zip(docs, tf, strict=True)
        )
        for term in terms
    }


def test_a_batch_is_indexed_as_one_at_a_time_with_the_same_scores() -> None:
    rng = random.Random(3)
    vocabulary = [f"w{i}" for i in range(300)] + ["lake", "kayaking", "bowls"]
    docs = [
        EpisodeText(
            f"u{i:03}",
            f"s{i % 7}",
            None,
            "user",
            " ".join(rng.choices(vocabulary, k=rng.randint(1, 40))),
            float(i % 13),
        )
        for i in range(500)
    ]
    batch, single = LexicalIndex(), LexicalIndex()
    batch.add(docs[:200])
    batch.add(docs[200:])
    for doc in docs:
        single.add([doc])
    assert len(batch.blocks) == 2 and not single.blocks
    assert _postings(batch) == _postings(single)
    assert batch.prev == single.prev and batch.next == single.next
    assert batch.lengths == single.lengths
    for query in (["lake"], ["kayak", "bowl", "w7"], ["w1", "w2", "w3", "w300", "absent"]):
        assert np.array_equal(batch.scores(query, BM25()), single.scores(query, BM25()))
        assert batch.scores(query, BM25()).any()


def test_a_written_message_carries_its_terms(memory: Memory) -> None:
    texts, terms = memory.retriever.reads.episode_texts("terms", TERMS_VERSION)
    assert len(texts) == len(MESSAGES)
    assert terms == [stored_terms(t.speaker, t.content) for t in texts]
    assert "kayak" in " ".join(t or "" for t in terms).split()
    assert set(_stored(memory, "terms", TERMS_VERSION + 1)) == {None}  # another version: unread


def test_an_index_loaded_from_stored_terms_is_the_tokenized_one(memory: Memory) -> None:
    loaded = _fresh(memory.retriever.episode_leg, "terms")
    again = _tokenized(loaded)
    assert _postings(loaded) == _postings(again)
    assert loaded.lengths == again.lengths and loaded.total_length == again.total_length
    assert loaded.prev == again.prev and loaded.next == again.next


def test_messages_of_an_older_store_are_found_and_are_indexed_from_their_text(
    memory: Memory,
) -> None:
    leg = memory.retriever.episode_leg
    before = memory.search("kayak on the lake", user_id="terms").episodes
    _strip_terms(memory, "terms")
    assert set(_stored(memory, "terms")) == {None}
    leg.forget("terms")
    after = memory.search("kayak on the lake", user_id="terms").episodes
    assert [h.episode.uid for h in after] == [h.episode.uid for h in before]
    assert [h.score for h in after] == pytest.approx([h.score for h in before], rel=1e-9)
    assert after and "kayaking" in after[0].episode.text
    assert set(_stored(memory, "terms")) == {None}  # computed in process, not written back


def test_terms_of_another_version_are_not_trusted(memory: Memory) -> None:
    reads = memory.retriever.reads
    texts, _ = reads.episode_texts("terms", TERMS_VERSION)
    reads.set_episode_terms("terms", {t.uid: "zebra" for t in texts}, TERMS_VERSION - 1)
    index = _fresh(memory.retriever.episode_leg, "terms")
    assert "zebra" not in _postings(index) and "kayak" in _postings(index)


def test_storing_terms_touches_no_other_user(memory: Memory) -> None:
    reads = memory.retriever.reads
    neighbour, _ = reads.episode_texts("neighbour", TERMS_VERSION)
    reads.set_episode_terms("terms", {neighbour[0].uid: "zebra"}, TERMS_VERSION)
    assert _stored(memory, "neighbour") == [stored_terms(None, neighbour[0].content)]
    assert "zebra" not in _postings(_fresh(memory.retriever.episode_leg, "neighbour"))
