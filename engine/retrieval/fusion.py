"""Reciprocal-rank fusion of the legs, then boosts from the entity knowledge store
(`engine.knowledge`)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Set as AbstractSet

from engine.knowledge import DAY_S, salience
from engine.models import Fact, ScoredFact
from engine.normalize import entity_key
from engine.retrieval.predicates import base_relation
from engine.retrieval.tuning import FusionParams


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
