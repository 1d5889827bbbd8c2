"""Replies: a found message that asks a question is followed, in the result, by the message
after it in its session, where a conversation usually answers it ("What did you get?" is
found by its words; "Croissants, muffins and tarts!" is the answer, and shares none).

A reply found lower moves up behind its question; one found higher stays where it is. A
reply outside the search's time window, or whose text cannot be read, is left out.
"""

from __future__ import annotations

from engine.models import ScoredEpisode
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.provenance import Window, has_text, said_in, snippet

QUESTION_MARKS = ("?", "\uff1f", "\u061f")  # ASCII, full-width (CJK), Arabic


def asks(text: str) -> bool:
    return any(mark in text for mark in QUESTION_MARKS)


def replies_to(
    episodes: list[ScoredEpisode], index: LexicalIndex | None, limit: int, window: Window
) -> dict[str, str]:
    """The uid of the reply to each question among the first `limit` messages, by the
    question's uid (a reply in `window` only)."""
    if index is None:
        return {}
    out = {}
    for hit in episodes[:limit]:
        doc = index.position.get(hit.episode.uid)
        if doc is None or not asks(hit.episode.text):
            continue
        reply = index.next[doc]
        if reply >= 0 and said_in(index, reply, window):
            out[hit.episode.uid] = index.uids[reply]
    return out


def with_replies(
    episodes: list[ScoredEpisode],
    index: LexicalIndex | None,
    replies: dict[str, str],
    limit: int | None = None,
) -> list[ScoredEpisode]:
    """`episodes` with each question's reply right behind it, at the question's score. A
    question whose reply would fall past the first `limit` gives its place to the messages
    after it: shown without its answer it is seldom what was asked for (LoCoMo: a message in
    the last place was evidence a third as often as those around it)."""
    if not replies or index is None:
        return episodes
    found = {hit.episode.uid: hit for hit in episodes}
    placed: set[str] = set()
    out = []
    for hit in episodes:
        if hit.episode.uid in placed:
            continue
        out.append(hit)
        placed.add(hit.episode.uid)
        reply = replies.get(hit.episode.uid)
        if reply is None or reply in placed or not has_text(index, reply):
            continue
        shown = found.get(reply) or ScoredEpisode(episode=snippet(index, reply), score=0.0)
        shown.score = max(shown.score, hit.score)
        shown.legs, shown.reply_to = [*shown.legs, "reply"], hit.episode.uid
        out.append(shown)
        placed.add(reply)
    return out if limit is None else _answered_at_the_end(out, limit)


def _answered_at_the_end(episodes: list[ScoredEpisode], limit: int) -> list[ScoredEpisode]:
    """Without a question at place `limit` whose reply is at the next place (and is cut)."""
    while len(episodes) > limit and episodes[limit].reply_to == episodes[limit - 1].episode.uid:
        episodes = episodes[: limit - 1] + episodes[limit + 1 :]
    return episodes
