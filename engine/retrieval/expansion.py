"""Leg 1: the depth-2 neighbourhood of the anchors, ranked by how well each path (one edge or
a two-hop chain from an anchor) explains the question's words."""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.retrieval.anchors import Anchor
from engine.retrieval.predicates import WordMatch
from engine.store.base import ExpandedEdge, GraphStore


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
    hub_scan: int = 500
    hub_degree: int = 100  # a middle node with more edges than this is a hub (see `through_hub`)


def continue_through(match: WordMatch, top: int = 3, share: float = 0.6) -> list[str]:
    """The predicates a two-hop path may start with: the `top` best for the question, any
    scoring at least `share` of the best one (all of them when the question names no relation),
    and the first predicates of chains that beat every single edge. A chain through an
    irrelevant first edge (a genre hub, a year) is never expanded."""
    single = match.single()
    ranked = sorted(single, key=lambda p: -single[p])
    best = single[ranked[0]] if ranked else 0.0
    starts = match.chain_starts()
    return [p for i, p in enumerate(ranked) if i < top or single[p] >= share * best or p in starts]


def through_hub(degree: int, hub_degree: int) -> float:
    """The share of a chain's relevance kept when its middle node has `degree` edges: a chain
    through a hub (the speaker of a chat, who is the subject of nearly every fact) says little
    about the anchor; one through a film or a person with a few dozen edges keeps it all."""
    return 1.0 if degree <= hub_degree else 1.0 / (1.0 + math.log(degree / hub_degree))


def expand(
    store: GraphStore,
    user_id: str,
    anchors: list[Anchor],
    match: WordMatch,
    settings: ExpansionSettings,
    include_invalid: bool = False,
) -> tuple[list[ExpansionHit], list[ExpandedEdge]]:
    """Ranked hits (best first) and every edge retrieved (the candidate subgraph)."""
    if not anchors:
        return [], []
    single = match.single()
    edges = store.expand(
        user_id,
        [a.entity.uid for a in anchors],
        weights=single,
        fanout=settings.fanout,
        depth=settings.depth,
        include_invalid=include_invalid,
        expand_via=continue_through(match),
        hub_scan=settings.hub_scan,
    )[: settings.max_edges]
    by_uid = {e.uid: e for e in edges}
    strength = {a.entity.uid: a.score for a in anchors}
    chains: dict[tuple[str, str, bool], float] = {}
    hits = []
    for edge in edges:
        via = by_uid.get(edge.via) if edge.via else None
        if via is None:
            relevance = single.get(edge.predicate, 0.0)
        else:
            back = via.predicate == edge.predicate and via.outgoing != edge.outgoing
            key = (via.predicate, edge.predicate, back)
            if key not in chains:
                chains[key] = match.path(key[:2], out_and_back=back)
            hub = through_hub(edge.via_degree, settings.hub_degree)
            relevance = chains[key] * hub if chains[key] > 0 else chains[key]
        hits.append(ExpansionHit(edge.uid, relevance * strength.get(edge.anchor, 1.0), edge))
    hits = _without_bridges(hits)
    hits.sort(key=lambda h: (-h.score, h.edge.hop, -h.edge.mentions, -h.edge.far_mentions, h.uid))
    return hits, edges


def _without_bridges(hits: list[ExpansionHit]) -> list[ExpansionHit]:
    """Drop a first edge that a chain through it explains the question better than: it is a
    bridge to the answer, not the answer (the chain's hit carries the path)."""
    best_after: dict[str, float] = {}
    for hit in hits:
        if hit.edge.via is not None:
            best_after[hit.edge.via] = max(best_after.get(hit.edge.via, -1e9), hit.score)
    return [h for h in hits if h.edge.via is not None or best_after.get(h.uid, -1e9) <= h.score]
