"""The fusion of the fact legs, its steps in order:

1. `confidence` and `trusted`: how far the expansion's best path explains the question, and
   how many of its hits it vouches for;
2. `ranked`: reciprocal-rank fusion of the expansion's and the semantic leg's orders
   (`fuse_legs`), the best `pool_size` kept;
3. `scored`: each fused fact boosted by its salience (`knowledge_boost`), best first, each
   relation between two entities once (`without_twins`).

The retriever then keeps the facts in the asked time window and ranks them with the episode
leg's messages by provenance (`retrieval.provenance`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Set as AbstractSet

from engine.knowledge import DAY_S, salience
from engine.models import Fact, Leg, ScoredFact
from engine.normalize import entity_key
from engine.retrieval.predicates import base_relation
from engine.retrieval.reach import ExpansionHit
from engine.retrieval.tuning import FusionParams

Semantic = list[tuple[Fact, float]]  # the semantic leg's facts, nearest first, with (1 + cos) / 2


def pool_size(limit: int, params: FusionParams) -> int:
    """Facts fused for a result of `limit`."""
    return max(limit * params.pool_per_result, params.min_pool)


def confidence(hits: list[ExpansionHit], params: FusionParams) -> float:
    """How well the expansion's best path explains the question's words, and by how many ways
    its answers are reached, in [0, 1]: when no predicate matches them ("what pet ..." against
    LIKES, OWNS), its order is only the anchor's neighbourhood, and its vote counts for little."""
    top = max((h.support for h in hits), default=0.0)
    return min(1.0, max(0.0, top / params.confident_path))


def trusted(hits: list[ExpansionHit], params: FusionParams) -> int:
    """How many of the expansion's hits it fully vouches for: when its best path clearly
    explains the question, those within `trusted_share` of it (the rest are mere neighbours
    of the anchor); otherwise all of them, whose vote then carries little weight anyway."""
    if confidence(hits, params) < 1.0:
        return len(hits)
    return sum(1 for h in hits if h.score >= params.trusted_share * hits[0].score)


def ranked(
    limit: int,
    hits: list[ExpansionHit],
    semantic: Semantic,
    bridges: AbstractSet[str],
    params: FusionParams,
) -> dict[str, float]:
    """The fact legs fused: the best uids and their scores, best first."""
    pool = pool_size(limit, params)
    fused = fuse_legs(
        [h.uid for h in hits[:pool]],
        [f.uid for f, _ in semantic],
        {h.uid for h in hits},
        confidence(hits, params),
        params,
        trusted=trusted(hits, params),
        bridges=bridges,
    )
    return {u: fused[u] for u in sorted(fused, key=lambda u: -fused[u])[:pool]}


def scored(
    limit: int,
    fused: dict[str, float],
    facts: dict[str, Fact],
    hits: list[ExpansionHit],
    semantic: Semantic,
    params: FusionParams,
    anchored: AbstractSet[str] = frozenset(),
) -> list[ScoredFact]:
    """The `fused` facts with knowledge boosts (salience against the most mentioned of the
    legs' facts; `anchored_boost` for a fact about one of the `anchored` entities), best
    first, each relation once."""
    near = {f.uid for f, _ in semantic}
    legs_facts = [facts[u] for u in near | fused.keys() if u in facts]
    max_mentions = max((f.mentions for f in legs_facts), default=1)
    in_leg: dict[Leg, set[str]] = {
        "expansion": {h.uid for h in hits[: pool_size(limit, params)]},
        "semantic": near,
    }
    hop = {h.uid: h.edge.hop for h in hits}
    out = []
    for uid, score in fused.items():
        fact = facts.get(uid)
        if fact is None:
            continue
        boost = knowledge_boost(fact, max_mentions, params)
        if fact.subject_uid in anchored or fact.object_uid in anchored:
            boost *= params.anchored_boost
        which: list[Leg] = [leg for leg, uids in in_leg.items() if uid in uids]
        out.append(ScoredFact(fact=fact, score=score * boost, hop=hop.get(uid), legs=which))
    out.sort(key=lambda s: -s.score)
    return without_twins(out)


def fuse_legs(
    expansion: list[str],
    semantic: list[str],
    reached: set[str],
    confidence: float,
    params: FusionParams,
    trusted: int | None = None,
    bridges: AbstractSet[str] = frozenset(),
) -> dict[str, float]:
    """Reciprocal-rank fusion (weight / (k + rank), rank from 1, k = `params.rrf_k`) of the
    two legs' orders.

    The expansion leg weighs `expansion_weight * confidence`, `confidence` in [0, 1] being
    how well its best path explains the question. On a fact the expansion `reached`, the
    semantic leg's vote counts only as much as the expansion is unsure (1 - confidence^4, 4
    being `doubt_power`:
    nothing when its best path explains the question fully, nearly all when it explains
    little): a sentence that looks like the question ("films written by X" for "who directed
    the films written by X") must not lift the bridge above the answer the path leads to,
    while "what should I avoid cooking for Alice?" still finds her allergy. Facts beyond the
    expansion's reach get the semantic vote whole: that is what the semantic leg adds.
    Past the first `trusted` expansion facts (those nearly as good as its best), the
    expansion votes at `tail_vote` strength. `bridges` are facts the expansion passed over
    on the way to a chain that explains the question better: the semantic vote on them
    counts only as much as the expansion is unsure (1 - confidence).
    """
    fused: dict[str, float] = defaultdict(float)
    unsure = 1.0 - confidence**params.doubt_power
    trusted = len(expansion) if trusted is None else trusted
    weight, k = params.expansion_weight, params.rrf_k
    for rank, uid in enumerate(expansion, start=1):
        vote = 1.0 if rank <= trusted else params.tail_vote
        fused[uid] += vote * weight * confidence / (k + rank)
    for rank, uid in enumerate(semantic, start=1):
        share = unsure if uid in reached else 1.0 - confidence if uid in bridges else 1.0
        fused[uid] += share / (k + rank)
    return dict(fused)


def knowledge_boost(fact: Fact, max_mentions: int, params: FusionParams) -> float:
    """A factor >= 1: facts mentioned often and recently count a little more (by
    `engine.knowledge.salience`, against the most mentioned fact of the candidates)."""
    age_days = None
    if fact.last_seen is not None:
        age_days = max(0.0, time.time() - fact.last_seen.timestamp()) / DAY_S
    known = salience(fact.mentions, max_mentions, age_days, params.half_life_days)
    return 1.0 + params.salience_weight * known


def without_twins(scored: list[ScoredFact]) -> list[ScoredFact]:
    """Each relation between two entities once: a fact stored both ways (X and X_INVERSE, or
    any two facts joining the same two entities in opposite directions, like MEMBER_OF and
    HAS_MEMBER) says one thing, so the later of the two is dropped (`scored` is best first)."""
    taken: set[tuple[str, str, str]] = set()
    out = []
    for hit in scored:
        fact = hit.fact
        s, o, base = (
            entity_key(fact.subject),
            entity_key(fact.object),
            base_relation(fact.predicate),
        )
        if (s, o, base) in taken or (o, s, base) in taken or (o, s, "") in taken:
            continue
        taken |= {(s, o, base), (s, o, "")}
        out.append(hit)
    return out
