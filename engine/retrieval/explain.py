"""`search(..., explain=True)`: each hit with its rank and score in every leg that found it
and what fused them (the anchor and relation path of an expansion hit, the fusion's inputs,
the boosts). Built from what the search already holds: no read, nothing done when off."""

from __future__ import annotations

from dataclasses import dataclass

from engine.models import Explanation, Fact, LegRank, ScoredEpisode, ScoredFact
from engine.retrieval.anchors import Anchor
from engine.retrieval.episodes import EpisodeHit
from engine.retrieval.reach import ExpansionHit


@dataclass(frozen=True, slots=True)
class Found:
    """What the legs of one search found, in their orders, and what fused them."""

    expansion: list[ExpansionHit]  # the hits the fusion read
    semantic: list[tuple[Fact, float]]  # with (1 + cos) / 2
    episodes: list[EpisodeHit]
    anchors: list[Anchor]
    fused: dict[str, float]  # the facts' reciprocal-rank fusion
    confidence: float  # the expansion's, as the fusion weighed it
    episode_vote: float  # a fact's gain per unit of its best message's (scaled) score


def explain(facts: list[ScoredFact], episodes: list[ScoredEpisode], found: Found) -> None:
    """Set `explanation` on every hit."""
    expansion = {h.uid: (rank, h) for rank, h in enumerate(found.expansion, start=1)}
    semantic = {
        f.uid: LegRank(rank=r, score=2 * s - 1) for r, (f, s) in enumerate(found.semantic, 1)
    }
    messages = {h.uid: LegRank(rank=r, score=h.score) for r, h in enumerate(found.episodes, 1)}
    best = max((h.score for h in found.episodes), default=0.0)
    scaled = {uid: leg.score / best for uid, leg in messages.items()} if best > 0 else {}
    names = {a.entity.uid: a.entity.name for a in found.anchors}
    for hit in facts:
        hit.explanation = _fact(hit, expansion.get(hit.fact.uid), semantic, scaled, names, found)
    for episode in episodes:
        uid = episode.episode.uid
        legs = {"episodes": messages[uid]} if uid in messages else {}
        provenance = None if episode.reply_to else episode.score - scaled.get(uid, 0.0)
        episode.explanation = Explanation(legs=legs, provenance=provenance)


def _fact(
    hit: ScoredFact,
    reached: tuple[int, ExpansionHit] | None,
    semantic: dict[str, LegRank],
    scaled: dict[str, float],
    names: dict[str, str],
    found: Found,
) -> Explanation:
    uid = hit.fact.uid
    legs: dict[str, LegRank] = {}
    if uid in semantic:
        legs["semantic"] = semantic[uid]
    behind = max((scaled.get(u, 0.0) for u in hit.fact.episodes), default=0.0)
    provenance = 1.0 + found.episode_vote * behind
    fused = found.fused.get(uid)
    boost = hit.score / provenance / fused if fused else None
    if reached is not None:
        legs["expansion"] = LegRank(rank=reached[0], score=reached[1].score)
    out = Explanation(
        legs=legs, fused=fused, confidence=found.confidence, boost=boost, provenance=provenance
    )
    if reached is not None:
        expansion = reached[1]
        out.anchor = names.get(expansion.edge.anchor, expansion.edge.anchor)
        out.relations = list(expansion.relations) or [expansion.edge.predicate]
        out.paths = expansion.paths
    return out
