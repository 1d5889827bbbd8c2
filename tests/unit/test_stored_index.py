"""A user's message index read back from its stored form ranks exactly as the index it was
stored from: the same scores, the same session neighbours, the same columns, whether stored
whole or in parts stored at different times; anything that is not an index of this format
reads as none."""

from __future__ import annotations

import itertools
import random
from dataclasses import replace

import numpy as np
import pytest

from engine.retrieval import stored_index, stored_relations
from engine.retrieval.lexical import LexicalIndex, stems
from engine.retrieval.stored_index import decode, decode_into, encode, finish
from engine.retrieval.terms import words
from engine.retrieval.tuning import BM25
from engine.store.base import EpisodeText

WORDS = "kayak lake harbour sister market pottery bowl puppy hiking boots paint lighthouse".split()
QUERIES = ["kayak on the lake", "my sister's puppy", "pottery bowl market", "nothing like it"]


def _messages(rng: random.Random, count: int, first: int = 0) -> list[EpisodeText]:
    out = []
    for i in range(first, first + count):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
        speaker = rng.choice(["Kate", "Sam", None])
        ts = float(rng.randint(0, 50))  # ties: the uid then orders a session
        source = rng.choice([None, "chat.json"])
        undated = i % 11 == 0
        out.append(
            EpisodeText(f"m{i:04d}", f"s{i % 7}", speaker, "user", text, ts, source, undated)
        )
    return out


def _index(rng: random.Random) -> LexicalIndex:
    """A load's blocks (two pages) and a write's per-term postings, as a search has them."""
    index = LexicalIndex()
    index.add(_messages(rng, 150))
    index.add(_messages(rng, 90, first=150))
    index.add(_messages(rng, 5, first=240))
    return index


def _ranking(index: LexicalIndex) -> list[np.ndarray]:
    return [index.with_neighbours(index.scores(stems(words(q)), BM25()), 0.3) for q in QUERIES]


@pytest.fixture
def index() -> LexicalIndex:
    return _index(random.Random(5))


def test_a_stored_index_ranks_as_the_one_stored(index: LexicalIndex) -> None:
    read = decode(encode(index))
    assert read is not None
    assert all(np.array_equal(a, b) for a, b in zip(_ranking(read), _ranking(index), strict=True))
    assert any(scores.max() > 0 for scores in _ranking(read))
    for name in ("uids", "session_ids", "speakers", "roles", "sources", "position", "sessions"):
        assert getattr(read, name) == getattr(index, name), name
    for name in ("times", "undated", "lengths", "prev", "next"):
        assert list(getattr(read, name)) == list(getattr(index, name)), name
    assert read.total_length == index.total_length


def test_it_holds_no_message_text_until_read(index: LexicalIndex) -> None:
    read = decode(encode(index))
    assert read is not None
    assert "kayak" not in encode(index)  # the terms are in it, the text is not
    assert read.unread(["m0003", "m0240", "unknown"]) == ["m0003", "m0240"]
    read.read({"m0003": index.contents[3] or ""})
    assert read.unread(["m0003", "m0240"]) == ["m0240"]
    assert read.doc(3) == index.doc(3)


def test_messages_added_after_it_is_read_join_their_sessions_in_order(
    index: LexicalIndex,
) -> None:
    read = decode(encode(index))
    assert read is not None
    later = _messages(random.Random(9), 80, first=245)
    read.add(later)
    index.add(later)
    assert list(read.prev) == list(index.prev) and list(read.next) == list(index.next)
    assert all(np.array_equal(a, b) for a, b in zip(_ranking(read), _ranking(index), strict=True))


def _same(read: LexicalIndex, index: LexicalIndex) -> None:
    assert all(np.array_equal(a, b) for a, b in zip(_ranking(read), _ranking(index), strict=True))
    for name in ("uids", "session_ids", "speakers", "roles", "sources", "position", "sessions"):
        assert getattr(read, name) == getattr(index, name), name
    for name in ("times", "undated", "lengths", "prev", "next"):
        assert list(getattr(read, name)) == list(getattr(index, name)), name
    assert read.total_length == index.total_length


def _joined(parts: list[str]) -> LexicalIndex:
    read = LexicalIndex()
    assert all(decode_into(read, part) for part in parts)
    finish(read)
    return read


@pytest.mark.parametrize("size", [1, 37, 100, 245])
def test_an_index_stored_in_parts_ranks_as_the_one_stored(index: LexicalIndex, size: int) -> None:
    bounds = [*range(0, len(index), size), len(index)]
    parts = [encode(index, a, b) for a, b in itertools.pairwise(bounds)]
    _same(_joined(parts), index)


def test_parts_stored_before_later_messages_came_keep_up_with_them(index: LexicalIndex) -> None:
    """An earlier part is not stored again: the later messages of its sessions, some of them
    older than its own (a message dated into the past), take their places among its own."""
    stored = [encode(index, 0, 100)]
    late = _messages(random.Random(11), 60, first=245)
    late = [replace(m, ts=-1.0) if i % 3 == 0 else m for i, m in enumerate(late)]  # the oldest
    index.add(late[:30])
    stored.append(encode(index, 100, 275))
    index.add(late[30:])
    stored.append(encode(index, 275, len(index)))
    _same(_joined(stored), index)


def test_parts_of_two_processes_that_numbered_later_messages_otherwise_agree(
    index: LexicalIndex,
) -> None:
    """A process that read the first part and the other messages in another order stores
    the later parts under its own numbers: the first part's links into them are not used."""
    first = encode(index, 0, 100)
    reader = _joined([first])
    later = [index.doc(d) for d in range(100, len(index))]
    reader.add(random.Random(4).sample(later, len(later)))
    _same(_joined([first, encode(reader, 100, len(reader))]), reader)


def test_a_part_out_of_place_is_refused(index: LexicalIndex) -> None:
    read = LexicalIndex()
    assert not decode_into(read, encode(index, 100, 200))  # not the first part
    assert decode_into(read, encode(index, 0, 100))
    assert not decode_into(read, encode(index, 0, 100))  # the same messages again
    assert not decode_into(read, encode(index, 150, 200))  # a gap
    assert len(read) == 100 and decode_into(read, encode(index, 100, 245))


@pytest.mark.parametrize(
    "data",
    ["", "not base64 at all!", "AAAA", encode(_index(random.Random(1)))[:-40]],
    ids=["empty", "not-base64", "short", "truncated"],
)
def test_what_is_not_a_stored_index_reads_as_none(data: str) -> None:
    assert decode(data) is None


def test_an_index_of_other_terms_reads_as_none(
    index: LexicalIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = encode(index)
    monkeypatch.setattr(stored_index, "TERMS_VERSION", stored_index.TERMS_VERSION + 1)
    assert decode(data) is None


def test_relation_vectors_read_back_as_stored() -> None:
    texts = ["lives in", "plays in club", "play in club"]
    vectors = np.random.default_rng(3).random((3, 8), dtype=np.float32)
    read = stored_relations.decode(stored_relations.encode(texts, vectors))
    assert read is not None
    assert read[0] == texts and np.array_equal(read[1], vectors)


@pytest.mark.parametrize("data", ["", "not base64!", "AAAA"], ids=["empty", "not-base64", "short"])
def test_what_is_not_stored_relation_vectors_reads_as_none(data: str) -> None:
    assert stored_relations.decode(data) is None
