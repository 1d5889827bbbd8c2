"""A found question is followed by the next message of its session, where a conversation
answers it (engine/retrieval/replies.py)."""

from __future__ import annotations

from engine.models import ScoredEpisode
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.provenance import snippet
from engine.retrieval.replies import replies_to, with_replies
from engine.store.base import EpisodeText

ALL_TIME = (None, None)


def _index() -> LexicalIndex:
    index = LexicalIndex()
    said = [
        ("q", "Audrey: what pastries did you get at the cafe?", "s1", 10.0),
        ("a", "Croissants, muffins and tarts!", "s1", 11.0),
        ("z", "Let's go kayaking soon. Are you free on Sunday?", "s1", 12.0),  # s1's last
        ("where", "你下一站去哪里\uff1f", "s2", 20.0),  # a full-width question mark
        ("kyoto", "京都。", "s2", 21.0),
        ("undated", "Lisbon.", "s3", 0.0),
        ("ask", "When do you leave?", "s3", -1.0),
    ]
    index.add(
        [EpisodeText(u, s, None, "user", c, ts, undated=u == "undated") for u, c, s, ts in said]
    )
    return index


def _hit(index: LexicalIndex, uid: str, score: float) -> ScoredEpisode:
    return ScoredEpisode(episode=snippet(index, uid), score=score, legs=["episodes"])


def _shown(episodes: list[ScoredEpisode]) -> list[tuple[str, float, str | None]]:
    return [(e.episode.uid, e.score, e.reply_to) for e in episodes]


def test_a_question_found_brings_its_reply_right_behind_it() -> None:
    index = _index()
    found = [_hit(index, "q", 0.9), _hit(index, "z", 0.5)]
    replies = replies_to(found, index, limit=10, window=ALL_TIME)
    shown = with_replies(found, index, replies)
    assert _shown(shown) == [("q", 0.9, None), ("a", 0.9, "q"), ("z", 0.5, None)]
    assert shown[1].legs == ["reply"]


def test_a_reply_found_lower_moves_up_and_one_found_higher_stays() -> None:
    index = _index()
    lower = [_hit(index, "q", 0.9), _hit(index, "z", 0.5), _hit(index, "a", 0.2)]
    shown = with_replies(lower, index, replies_to(lower, index, 10, ALL_TIME))
    assert _shown(shown) == [("q", 0.9, None), ("a", 0.9, "q"), ("z", 0.5, None)]
    assert shown[1].legs == ["episodes", "reply"]
    higher = [_hit(index, "a", 0.9), _hit(index, "q", 0.5)]
    kept = with_replies(higher, index, replies_to(higher, index, 10, ALL_TIME))
    assert _shown(kept) == [("a", 0.9, None), ("q", 0.5, None)]


def test_no_reply_past_a_session_s_end_beyond_the_limit_or_outside_the_window() -> None:
    index = _index()
    assert replies_to([_hit(index, "where", 0.9)], index, 10, ALL_TIME) == {"where": "kyoto"}
    late = [_hit(index, "z", 0.9), _hit(index, "q", 0.5)]
    assert replies_to(late, index, limit=1, window=ALL_TIME) == {}
    assert replies_to(late, index, limit=2, window=ALL_TIME) == {"q": "a"}
    assert replies_to(late, index, limit=2, window=(None, 10.5)) == {}
    asked = [_hit(index, "ask", 0.9)]
    assert replies_to(asked, index, 10, ALL_TIME) == {"ask": "undated"}
    assert replies_to(asked, index, 10, window=(-5.0, None)) == {}  # undated: never inside


def test_a_reply_whose_text_is_not_read_is_left_out() -> None:
    index = _index()
    found = [_hit(index, "q", 0.9)]
    replies = replies_to(found, index, 10, ALL_TIME)
    index.contents[index.position["a"]] = None  # an index read from the store, text unread
    assert _shown(with_replies(found, index, replies)) == [("q", 0.9, None)]


def test_a_question_in_the_last_place_gives_it_up_when_its_reply_would_be_cut() -> None:
    index = _index()
    found = [_hit(index, "z", 0.9), _hit(index, "q", 0.5), _hit(index, "kyoto", 0.3)]
    cut = with_replies(found, index, replies_to(found, index, 2, ALL_TIME), limit=2)
    assert [e.episode.uid for e in cut] == ["z", "kyoto"]  # z asks too, but has no reply
    room = with_replies(found, index, replies_to(found, index, 3, ALL_TIME), limit=3)
    assert [e.episode.uid for e in room] == ["z", "q", "a", "kyoto"]
