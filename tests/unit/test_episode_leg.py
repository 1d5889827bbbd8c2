"""The episode leg: messages found by their words and meaning, with speakers, times, sessions,
and the facts behind them; on the real embedded store and the real embedding model."""

from __future__ import annotations

from engine.retrieval.lexical import LexicalIndex, index_terms, stem
from engine.retrieval.tuning import BM25
from engine.store.base import EpisodeText


def doc(uid: str, content: str, session: str = "s", ts: float = 0.0) -> EpisodeText:
    return EpisodeText(uid, session, None, "user", content, ts)


def test_bm25_prefers_rare_words_and_short_messages() -> None:
    index = LexicalIndex()
    index.add(
        [
            doc("a", "the lake was cold and the lake was deep and the weather was grey today"),
            doc("b", "kayaking on the lake"),
            doc("c", "lake"),
        ]
    )
    scores = index.scores(index_terms("kayaking lake"), BM25())
    assert scores.argmax() == 1  # the only message with the rare word
    assert scores[2] > scores[0]  # the same word counts more in a short message


def test_neighbours_stay_inside_a_session_in_time_order() -> None:
    index = LexicalIndex()
    index.add(
        [doc("x2", "two", "s", 2.0), doc("y1", "other", "t", 1.0), doc("x1", "one", "s", 1.0)]
    )
    index.add([doc("x3", "three", "s", 3.0)])  # a later write links in place
    at = index.position
    assert index.prev[at["x2"]] == at["x1"] and index.next[at["x2"]] == at["x3"]
    assert index.prev[at["y1"]] == -1 and index.next[at["y1"]] == -1
    assert stem("kayaking") == stem("kayaks") == "kayak"
