"""Facts and the messages they came from, ranked together.

A search returns two lists, kept apart because they answer differently: facts are claims the
graph holds (short, deduplicated, joined into paths), episodes are the messages themselves
(the evidence, with who said it and when). They reinforce each other through provenance: a
message behind a well-ranked fact moves up, and a fact whose source message the episode leg
found moves up.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Mapping
from collections.abc import Set as AbstractSet

from engine.models import Leg, ScoredEpisode, ScoredFact, Snippet, from_epoch
from engine.retrieval.episodes import EpisodeHit
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.tuning import EpisodeParams

Window = tuple[float | None, float | None]  # since, until (epoch seconds)


def fuse_provenance(
    facts: list[ScoredFact],
    hits: list[EpisodeHit],
    index: LexicalIndex | None,
    params: EpisodeParams,
    window: Window = (None, None),
    clear: AbstractSet[str] = frozenset(),
) -> tuple[list[ScoredFact], list[ScoredEpisode]]:
    """Facts with their source messages, and messages with the support of the facts: a
    message only the facts bring is listed when it was said in `window` (an undated one
    never is, with a bound), as the episode leg's own are. A message behind a fact of `clear`
    (see `clear_matches`) scores at least `clear_vote`, whatever the legs' agreement."""
    found = _normalised({h.uid: h.score for h in hits})
    backing = _fact_support(facts)
    sure = {uid for hit in facts if hit.fact.uid in clear for uid in hit.fact.episodes}
    for hit in facts:
        hit.sources = [snippet(index, uid) for uid in hit.fact.episodes if has_text(index, uid)]
        behind = max((found.get(u, 0.0) for u in hit.fact.episodes), default=0.0)
        hit.score *= 1.0 + params.episode_vote * behind
    facts.sort(key=lambda s: -s.score)
    vote = (
        params.fact_vote * agreement(facts, hits, params.agreement_facts) ** params.agreement_power
    )
    votes = {u: vote * s for u, s in backing.items()}
    for uid in sure:  # at least `clear_vote` in all: one the episode leg ranks higher stays
        votes[uid] = max(votes[uid], params.clear_vote - found.get(uid, 0.0))
    if index is not None and window != (None, None):
        votes = {u: s for u, s in votes.items() if u in found or _said(index, u, window)}
    episodes = _episodes(found, votes, index)
    return facts, episodes


def clear_matches(
    facts: Mapping[str, float], messages: Mapping[str, float], params: EpisodeParams
) -> set[str]:
    """Of the `clear_facts` facts nearest the question (their cosines, nearest first), those
    nearer it than the nearest of `messages` by `clear_margin`: a short fact that says what
    the question asks, where no message comes as close. A few at most: where every fact is
    that near (long messages embed farther), the messages are still the episode leg's."""
    best = max(messages.values(), default=None)
    if best is None:
        return set()
    nearest = itertools.islice(facts.items(), params.clear_facts)
    return {uid for uid, cosine in nearest if cosine - best >= params.clear_margin}


def agreement(facts: list[ScoredFact], hits: list[EpisodeHit], top: int) -> float:
    """The share of the `top` facts' source messages that the episode leg found too (among
    its best 2 * `top`): the fact legs vote on messages only as far as the other leg confirms
    them, so a graph leg that is confidently wrong (a loose chat predicate matching the
    question) cannot win."""
    behind = {uid for hit in facts[:top] for uid in hit.fact.episodes}
    if not behind:
        return 0.0
    return len(behind & {h.uid for h in hits[: 2 * top]}) / len(behind)


def _normalised(scores: dict[str, float]) -> dict[str, float]:
    best = max(scores.values(), default=0.0)
    return {u: s / best for u, s in scores.items()} if best > 0 else {}


def _fact_support(facts: list[ScoredFact]) -> dict[str, float]:
    """Each source message's best fact, scaled to the best fact's score."""
    best = facts[0].score if facts and facts[0].score > 0 else 1.0
    support: dict[str, float] = defaultdict(float)
    for hit in facts:
        for uid in hit.fact.episodes:
            support[uid] = max(support[uid], hit.score / best)
    return support


def _episodes(
    found: dict[str, float], votes: dict[str, float], index: LexicalIndex | None
) -> list[ScoredEpisode]:
    out = []
    for uid in found.keys() | votes.keys():
        if not has_text(index, uid):
            continue
        legs: list[Leg] = []
        if uid in found:
            legs.append("episodes")
        if uid in votes:
            legs.append("facts")
        score = found.get(uid, 0.0) + votes.get(uid, 0.0)
        out.append(ScoredEpisode(episode=snippet(index, uid), score=score, legs=legs))
    out.sort(key=lambda s: (-s.score, s.episode.uid))
    return out


def said_in(index: LexicalIndex, doc: int, window: Window) -> bool:
    """Whether message `doc` of `index` was said in `window` (an undated one never is known
    to be, when the window has a bound)."""
    since, until = window
    if since is None and until is None:
        return True
    if index.undated[doc]:
        return False
    ts = index.times[doc]
    return (since is None or ts >= since) and (until is None or ts <= until)


def _said(index: LexicalIndex, uid: str, window: Window) -> bool:
    doc = index.position.get(uid)
    return doc is not None and said_in(index, doc, window)


def has_text(index: LexicalIndex | None, uid: str) -> bool:
    """Whether the message of `uid` can be shown: indexed and its text read (a message
    deleted since the index was read has none)."""
    if index is None or (d := index.position.get(uid)) is None:
        return False
    return index.contents[d] is not None


def snippet(index: LexicalIndex | None, uid: str) -> Snippet:
    assert index is not None  # callers check `has_text` first
    doc = index.doc(index.position[uid])
    return Snippet(
        uid=doc.uid,
        speaker=doc.speaker,
        role=doc.role,
        ts=None if doc.undated else from_epoch(doc.ts),
        session_id=doc.session_id,
        source=doc.source,
        text=doc.content,
    )
