"""Multi-anchor questions: the nodes connected to every named anchor, and the paths joining them.

"Which member of group X is from country Y" names two anchors; its answer is a node next to
both, which expanding each anchor on its own and fusing the two does not find. The hop-1
neighbourhoods the expansion read are intersected (plain sets: cheaper than a graph library
for one hop); longer joins between two anchors come from a shortest path (networkx) over
everything the expansion read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import combinations, pairwise

import networkx as nx

from engine.retrieval.predicates import NOTHING, RelationMatch
from engine.retrieval.reach import ExpandedEdge


@dataclass(frozen=True, slots=True)
class Join:
    """A node one hop from several anchors, and the fact joining it to each of them."""

    node: str
    score: float
    edges: tuple[ExpandedEdge, ...]  # in the anchors' order

    def walk(self) -> tuple[list[str], list[str]]:
        """Node uids (first anchor, the node, the other anchors) and the joining edge uids."""
        first, *rest = self.edges
        return [first.anchor, self.node, *(e.anchor for e in rest)], [e.uid for e in self.edges]


def common_neighbours(
    anchors: list[str], edges: list[ExpandedEdge], relevance: Mapping[str, float]
) -> list[Join]:
    """Nodes one hop from two or more anchors, best first: scored by the sum over the anchors
    of the relevance of the predicate joining them (each must be positive: a join through
    relations the question does not ask about is a coincidence, not an answer)."""
    if len(anchors) < 2:
        return []
    best: dict[str, dict[str, ExpandedEdge]] = defaultdict(dict)
    for edge in edges:
        if edge.hop != 1 or edge.far in anchors or relevance.get(edge.predicate, 0.0) <= 0:
            continue
        kept = best[edge.far].get(edge.anchor)
        if kept is None or relevance[edge.predicate] > relevance[kept.predicate]:
            best[edge.far][edge.anchor] = edge
    joins = []
    for node, by_anchor in best.items():
        if len(by_anchor) >= 2:
            chosen = tuple(by_anchor[a] for a in anchors if a in by_anchor)
            score = sum(relevance[e.predicate] for e in chosen)
            joins.append(Join(node, score, chosen))
    joins.sort(key=lambda j: (-len(j.edges), -j.score, j.node))
    return joins


def may_share(anchors: list[str], whole: Mapping[str, frozenset[str]]) -> bool:
    """Whether two of `anchors` may have a neighbour in common: those read `whole` have
    only the neighbours read (the anchors aside), the others may have any."""
    unread = sum(a not in whole for a in anchors)
    if unread >= 2:
        return True
    named = set(anchors)
    seen = Counter(n for a in anchors if a in whole for n in whole[a] - named)
    return bool(seen) if unread else any(count > 1 for count in seen.values())


def best_join(reached: Iterable[tuple[str, tuple[str, ...], str]], match: RelationMatch) -> float:
    """The best score of a node one hop from two anchors (`reached`: the walk's first hop,
    as node, relations, anchor), its two relations read as one path in either order but for
    the hop cost (each is one hop from its anchor): "who works at X and holds Y citizenship"
    is answered there, and a continuation must beat it to be walked."""
    by_node: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for node, relations, anchor in reached:
        by_node[node][anchor].add(relations[0])
    pairs: set[tuple[str, str]] = set()
    for ends in by_node.values():
        for x in ends.values():
            pairs |= {(a, b) for y in ends.values() if y is not x for a in x for b in y}
    one_hop = match.params.extra_hop_cost
    return max((match.path((a, b)) + one_hop for a, b in pairs), default=NOTHING)


def joining_paths(
    anchor_uids: list[str], edges: list[ExpandedEdge], max_len: int
) -> list[tuple[list[str], list[str]]]:
    """For each pair of anchors, a shortest path between them of at most `max_len` edges,
    if any: its node uids in walking order and the uids of the edges between them."""
    graph = nx.MultiGraph()
    for edge in edges:
        graph.add_edge(edge.near, edge.far, key=edge.uid)
    paths: list[tuple[list[str], list[str]]] = []
    for a, b in combinations(anchor_uids, 2):
        if a not in graph or b not in graph:
            continue
        try:
            nodes = nx.shortest_path(graph, a, b)
        except nx.NetworkXNoPath:
            continue
        if len(nodes) - 1 <= max_len:
            uids = [next(iter(graph.get_edge_data(u, v))) for u, v in pairwise(nodes)]
            paths.append((nodes, uids))
    return paths
