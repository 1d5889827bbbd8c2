"""Leg 1: the depth-2 neighbourhood of the anchors, ranked by how well each path reads as an
answer to the query."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from engine.retrieval.anchors import Anchor
from engine.retrieval.predicates import PredicateScorer
from engine.store.base import ExpandedEdge, GraphStore

HOP2_PENALTY = 0.03  # a two-hop chain must read clearly better than the edge it extends


@dataclass(frozen=True, slots=True)
class ExpansionHit:
    uid: str
    score: float
    edge: ExpandedEdge


@dataclass(frozen=True, slots=True)
class ExpansionSettings:
    depth: int = 2
    fanout: int = 50
    max_edges: int = 2000


def expand(
    store: GraphStore,
    user_id: str,
    anchors: list[Anchor],
    query: np.ndarray[Any, Any],
    predicates: list[str],
    scorer: PredicateScorer,
    settings: ExpansionSettings,
    include_invalid: bool = False,
) -> tuple[list[ExpansionHit], list[ExpandedEdge]]:
    """Ranked hits (best first) and every edge retrieved (the candidate subgraph)."""
    if not anchors:
        return [], []
    weights = scorer.single(query, predicates)
    edges = store.expand(
        user_id,
        [a.entity.uid for a in anchors],
        weights=weights,
        fanout=settings.fanout,
        depth=settings.depth,
        include_invalid=include_invalid,
    )[: settings.max_edges]
    by_uid = {e.uid: e for e in edges}
    pairs = sorted({(by_uid[e.via].predicate, e.predicate) for e in edges if e.via in by_uid})
    chain = scorer.chains(query, pairs)
    strength = {a.entity.uid: a.score for a in anchors}
    hits = []
    for edge in edges:
        if edge.hop == 1 or edge.via not in by_uid:
            relevance = weights.get(edge.predicate, 0.0)
        else:
            relevance = chain[(by_uid[edge.via].predicate, edge.predicate)] - HOP2_PENALTY
        hits.append(ExpansionHit(edge.uid, relevance * strength.get(edge.anchor, 1.0), edge))
    hits.sort(key=lambda h: (-h.score, h.edge.hop, -h.edge.far_mentions, h.uid))
    return hits, edges
