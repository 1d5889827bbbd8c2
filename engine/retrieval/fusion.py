"""Reciprocal-rank fusion of the legs, then boosts from the entity knowledge store."""

from __future__ import annotations

import math
import time
from collections import defaultdict

from engine.models import Fact


def reciprocal_rank_fusion(
    legs: list[list[str]], k: int = 60, weights: list[float] | None = None
) -> dict[str, float]:
    """Sum of weight / (k + rank) over the legs that returned each uid (rank from 1)."""
    fused: dict[str, float] = defaultdict(float)
    for ranked, weight in zip(legs, weights or [1.0] * len(legs), strict=True):
        for rank, uid in enumerate(ranked, start=1):
            fused[uid] += weight / (k + rank)
    return dict(fused)


def knowledge_boost(
    fact: Fact, max_mentions: int, half_life_days: float, weight: float = 0.1
) -> float:
    """A factor >= 1: facts mentioned often and recently count a little more."""
    frequency = math.log1p(fact.mentions) / math.log1p(max(max_mentions, 1))
    recency = 0.0
    if fact.last_seen is not None:
        age_days = max(0.0, time.time() - fact.last_seen.timestamp()) / 86400.0
        recency = 0.5 ** (age_days / half_life_days)
    return 1.0 + weight * (frequency + recency) / 2.0
