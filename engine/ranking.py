"""The numbers of a search a user can reason about, in one frozen object: `RankingParams`.

Twelve numbers in three groups: how many anchors a search starts from, how far and how wide
the walk reads (`depth` and the read limits), and how the legs are fused (the vector leg's
size, reciprocal-rank fusion's k, the graph leg's weight, salience and its half-life).
`Settings.ranking` holds one, so a user can change any of them:

    Memory(ranking={"fusion": {"rrf_k": 50}})
    GRAPHMEM_RANKING__FUSION__RRF_K=50

Every other number (costs, shares, samples, latency bounds) is private and frozen in
`engine.retrieval.tuning`, with the reason for its value; `Tuning.of(settings)` puts these
twelve in their places there. A change of a default must keep
tests/integration/test_golden_ranking.py passing or update its golden file on purpose
(`GRAPHMEM_UPDATE_GOLDEN=1`).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

# validated like settings (an unknown name or a value out of range is an error)
_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True, config=_STRICT)
class AnchorLimits:
    """The entities a search starts from."""

    # anchors kept at most: a question names a few things
    limit: int = Field(default=5, ge=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class ExpansionLimits:
    """How far and how wide the walk from the anchors reads."""

    # the longest relation path walked, in hops ("where was the coach of X's club born": 3)
    depth: int = Field(default=3, ge=1, le=3)
    # edges of any type read around a hub anchor, as context
    fanout: int = Field(default=50, ge=1)
    # edges read in all by one search, every hop together
    max_edges: int = Field(default=4000, ge=1)
    # edges of the question's relation types read per node past the anchors: bounds a hub's cost
    hub_scan: int = Field(default=500, ge=1)
    # ... and per anchor: all members of a hub the question asks about (a group, a country)
    anchor_scan: int = Field(default=2000, ge=1)
    # a node with more edges is a hub: read by type, and a path through it counts for less
    hub_degree: int = Field(default=100, ge=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class FusionWeights:
    """How the legs' orders are fused, and how much salience counts."""

    # facts the vector leg offers
    semantic_k: int = Field(default=30, ge=1)
    # reciprocal-rank fusion's k, at the published default (Cormack et al., 2009)
    rrf_k: int = Field(default=60, ge=1)
    # the graph leg's weight against the vector leg's (1) when its path explains the question
    expansion_weight: float = Field(default=2.0, ge=0)
    # facts mentioned often and recently gain up to this share of their score
    salience_weight: float = Field(default=0.1, ge=0)
    # recency halves every this many days, in ranking and in `top_entities`
    half_life_days: float = Field(default=30.0, gt=0)


@dataclass(frozen=True, slots=True, config=_STRICT)
class RankingParams:
    """The public numbers of a search (see the module docstring)."""

    anchors: AnchorLimits = Field(default_factory=AnchorLimits)
    expansion: ExpansionLimits = Field(default_factory=ExpansionLimits)
    fusion: FusionWeights = Field(default_factory=FusionWeights)
