"""Multi-hop: the paths joining two anchors inside the retrieved subgraph (networkx)."""

from __future__ import annotations

from itertools import combinations, pairwise

import networkx as nx

from engine.store.base import ExpandedEdge


def joining_paths(
    anchor_uids: list[str], edges: list[ExpandedEdge], max_len: int = 4
) -> list[list[str]]:
    """For each pair of anchors, the edge uids of a shortest path between them, if any."""
    graph = nx.MultiGraph()
    for edge in edges:
        graph.add_edge(edge.near, edge.far, key=edge.uid)
    paths: list[list[str]] = []
    for a, b in combinations(anchor_uids, 2):
        if a not in graph or b not in graph:
            continue
        try:
            nodes = nx.shortest_path(graph, a, b)
        except nx.NetworkXNoPath:
            continue
        if len(nodes) - 1 <= max_len:
            paths.append([next(iter(graph.get_edge_data(u, v))) for u, v in pairwise(nodes)])
    return paths
