"""The paths an expansion walks (`Reach`) and how they become ranked hits: one hit per path
end, aggregated over the paths arriving there, discounted through hubs; twins read once."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from engine.retrieval.predicates import NOTHING, RelationMatch, base_relation
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import Neighbour

HUB_DEPTH = 2  # a hub anchor's first relation is chosen by the paths of two hops through it


@dataclass(frozen=True, slots=True)
class ExpandedEdge:
    """One typed fact relationship reached from an anchor; `hop` is 1, 2 or 3."""

    anchor: str
    uid: str
    predicate: str
    hop: int
    near: str  # uid of the node closer to the anchor
    far: str  # uid of the node further away
    far_name: str
    far_mentions: int
    outgoing: bool  # the relationship points from `near` to `far`
    mentions: int = 0  # of the fact
    step: str | None = None  # the relation the walk took it as, when not its own (`walked_as`)


@dataclass(frozen=True, slots=True)
class ExpansionHit:
    uid: str
    score: float
    edge: ExpandedEdge
    # its score counting every way that leads to it, the path's best way included: an answer
    # many paths arrive at makes the expansion surer (`fusion.confidence`)
    support: float
    paths: int = 1  # how many paths reached the node this fact leads to
    relations: tuple[str, ...] = ()  # the relation path it ends


@dataclass(slots=True)
class Reach:
    """The paths of one relation sequence from one anchor that end at one node."""

    anchor: str
    relations: tuple[str, ...]
    edges: tuple[ExpandedEdge, ...]  # the first path found
    degree: int = 0  # mentions of the node reached: how many edges it likely has
    paths: int = 1
    hub: float = 1.0  # product of `through_hub` over the path's middle nodes
    # the anchor's neighbours the paths leave it by: how many separate ways lead here
    starts: frozenset[str] = frozenset()


def through_hub(degree: int, hub_degree: int) -> float:
    """The share of a path's relevance kept when a middle node has `degree` edges of the types
    walked: a path through a hub (the speaker of a chat, who is the subject of nearly every
    fact) says little about the anchor; one through a film or a person keeps it all."""
    return 1.0 if degree <= hub_degree else 1.0 / (1.0 + math.log(degree / hub_degree))


def edge_of(
    anchor: str, n: Neighbour, hop: int, twins: Mapping[str, str] | None = None
) -> ExpandedEdge:
    """The edge the walk took along `n`; with `twins`, taken as the relation `walked_as`
    says."""
    return ExpandedEdge(
        anchor=anchor,
        uid=n.uid,
        predicate=n.predicate,
        hop=hop,
        near=n.near,
        far=n.far,
        far_name=n.far_name,
        far_mentions=n.far_mentions,
        outgoing=n.outgoing,
        mentions=n.mentions,
        step=walked_as(n, base_relation(n.predicate), twins) if twins else None,
    )


def arrived_at_subject(edge: ExpandedEdge) -> bool:
    """Whether the walk along `edge` arrived at its relation's subject: it went against the
    relation's direction (an `_INVERSE` twin's turned round), the relation it was taken as."""
    return not _forwards(edge, edge.step or base_relation(edge.predicate))


def walked_as(n: Neighbour, relation: str, twins: Mapping[str, str]) -> str | None:
    """The relation a step along `n`, a fact of `relation`, is taken as when not its own:
    read against its direction, the twin that stores it reversed when each is the other's
    ("X MEMBER_OF The Sters" read from the band is the step BAND_MEMBER), so that one step
    has one name, whichever of the two facts a pair has stored."""
    twin = twins.get(relation)
    if twin is None or twins.get(twin) != relation or _forwards(n, relation):
        return None
    return twin


def best_first(steps: dict[str, float]) -> list[str]:
    return sorted(steps, key=lambda b: (-steps[b], b))


def degree_by_relation(read: list[Neighbour], base: Callable[[str], str | None]) -> list[Neighbour]:
    """A typed read's degree per relation: a path through a club to its one coach does not
    pass through the club's hundred players, however many of them the same read returned.
    A node whose read was cut to a sample (fewer returned than it holds) counts each of its
    relations in the same proportion."""
    relation = {p: base(p) for p in {n.predicate for n in read}}
    count = Counter((n.near, relation[n.predicate]) for n in read)
    returned = Counter(n.near for n in read)
    out = []
    for n in read:
        share = max(1.0, n.degree / returned[n.near])
        degree = round(count[(n.near, relation[n.predicate])] * share)
        # `replace` costs more than the rest of the walk's bookkeeping: only where it changes
        out.append(n if degree == n.degree else replace(n, degree=degree))
    return out


def read_whole(degree: Mapping[str, int], hub_degree: int, open_edges: int) -> list[str]:
    """The nodes read whole: not hubs, the smallest first, while they fit in `open_edges`."""
    whole: list[str] = []
    budget = open_edges
    for node in sorted(degree, key=lambda n: degree[n]):
        if degree[node] > hub_degree or degree[node] > budget:
            break
        whole.append(node)
        budget -= max(degree[node], 1)
    return whole


def most_promising(
    degree: dict[str, int], priority: Mapping[str, tuple[float, int]], n: int
) -> dict[str, int]:
    """The `n` nodes of `degree` at the best paths (`priority`: the best path's score there
    and the paths that reach it), the most mentioned first among equals."""
    if len(degree) <= n:
        return degree
    ranked = sorted(degree, key=lambda node: (priority[node], degree[node], node), reverse=True)
    return {node: degree[node] for node in ranked[:n]}


def two_hops(
    match: RelationMatch, after: Mapping[str, Sequence[Mapping[str, int] | None]]
) -> dict[str, float]:
    """For each relation of `after`, the best path of one or two hops from a hub through the
    neighbours reached along it, by the relations met at each (with their edges there): those
    that lead on (back along the relation only if it has more than the one edge the walk came
    by); a neighbour that is a hub itself (None: its relations are not read) counts what the
    relation can reach at best. Every path is scored in one pass."""
    steps = {
        base: [
            (base, step)
            for types in ends
            for rel_type, edges in (types or {}).items()
            if (step := match.base(rel_type)) is not None and (step != base or edges > 1)
        ]
        for base, ends in after.items()
    }
    match.paths([(base,) for base in after] + [p for ps in steps.values() for p in ps])
    hoped = match.outlooks([((b,), None) for b, ends in after.items() if None in ends], HUB_DEPTH)
    value = {base: max(match.paths([(base,), *paths])) for base, paths in steps.items()}
    for (base,), _ in hoped:
        value[base] = max(value[base], hoped[((base,), None)].best)
    return value


def visits(reach: Reach, node: str) -> bool:
    return any(e.near == node or e.far == node for e in reach.edges)


def one_per_pair(
    read: list[Neighbour],
    base: Callable[[str], str | None],
    twins: Mapping[str, str] | None = None,
) -> list[Neighbour]:
    """One relationship per neighbour and step: a fact and its twin stored the other way
    round are one step, whether the twin is X_INVERSE, the same predicate both ways, or a
    relation another stores reversed under a name of its own (`twins`: "Y PARENTS X" read
    from X is the step "X CHILDREN Y"). The one pointing away from the node under its plain
    name is kept."""
    best: dict[tuple[str, str | None], Neighbour] = {}
    for n in read:
        step = base(n.predicate)
        twin = twins.get(step) if twins and step is not None else None
        if twin is not None and not _forwards(n, step):
            step = twin
        kept = best.get((n.far, step))
        if kept is None or _plainer(n, kept, base):
            best[(n.far, step)] = n
    return list(best.values())


def _forwards(n: Neighbour | ExpandedEdge, relation: str | None) -> bool:
    """The fact points away from the node read, by its relation's plain name."""
    return n.outgoing == (n.predicate == relation)


def _plainer(a: Neighbour, b: Neighbour, base: Callable[[str], str | None]) -> bool:
    plain_a, plain_b = a.predicate == base(a.predicate), b.predicate == base(b.predicate)
    return (plain_a, a.outgoing) > (plain_b, b.outgoing)


def rank(
    reaches: list[Reach],
    match: RelationMatch,
    strength: dict[str, float],
    params: ExpansionParams,
) -> list[ExpansionHit]:
    """One hit per path end: the last fact of the path, scored by how well its relations
    explain the question (times the anchor's strength and the hub discount). Among the ends of
    one relation path, those many paths arrive at through different neighbours of the anchor
    come first (the clubs of many players from a country; the positions of one club's players
    all come through the one club, and count once): the best keeps the path's score, one
    reached once loses up to `many_paths` of it. Between paths the relations decide, not the
    number of ways: the hundred members of a society lead to every city, its founder to one.
    A fact on the way to a better path is a bridge, not a hit; so is one on the way to a path
    explaining the question as well, hop cost aside, and the asked kind better ("which country
    is X's team based in": the team's city is on the way to its country). Past a path's first
    `per_path` hits, the rest count at `later_share` of their score. A first step passed
    over counts as well when its own path is nearly as good (`_answer_on_the_way`)."""
    many_paths = params.many_paths
    widest: dict[tuple[str, tuple[str, ...]], int] = defaultdict(lambda: 1)
    for reach in reaches:
        key = (reach.anchor, reach.relations)
        widest[key] = max(widest[key], len(reach.starts))
    best: dict[str, ExpansionHit] = {}
    bridge_score: dict[str, float] = defaultdict(lambda: NOTHING)
    # per fact on the way: (words explained, hop cost aside; asked kind explained) of each path
    further: dict[str, list[tuple[float, float]]] = defaultdict(list)
    kinds: dict[tuple[tuple[str, ...], bool | None], float] = {}  # see `_kind`
    hop_cost = match.params.extra_hop_cost
    through: dict[tuple[str, str], float] = {}  # (anchor, neighbour): the best path beyond
    scores: dict[tuple[str, ...], float] = {}
    for reach in reaches:
        if reach.relations not in scores:
            scores[reach.relations] = match.path(reach.relations)
        score = scores[reach.relations] * strength.get(reach.anchor, 1.0) * reach.hub
        ways = math.log(max(1, len(reach.starts)))
        most = math.log(widest[(reach.anchor, reach.relations)])
        support = score * (1.0 + many_paths * ways)
        if most:
            score *= 1.0 - many_paths * (1.0 - ways / most)
        last = reach.edges[-1]
        current = best.get(last.uid)
        if current is None or score > current.score:
            best[last.uid] = ExpansionHit(
                last.uid, score, last, support, reach.paths, reach.relations
            )
        for edge in reach.edges[:-1]:
            bridge_score[edge.uid] = max(bridge_score[edge.uid], score)
        kind = _kind(match, reach.relations, reach.edges[-1], kinds) if match.asks_kind else 0.0
        if kind > 0:
            explains = scores[reach.relations] + hop_cost * (len(reach.relations) - 1)
            for edge in reach.edges[:-1]:
                further[edge.uid].append((explains, kind))
        if len(reach.relations) > 1:  # every path here, not only the first, leaves by a start
            for start in reach.starts:
                way = (reach.anchor, start)
                through[way] = max(through.get(way, NOTHING), score)
    hits = []
    for h in best.values():
        beyond = bridge_score[h.uid]  # the best path going on from it
        if h.edge.hop == 1:
            beyond = max(beyond, through.get((h.edge.anchor, h.edge.far), NOTHING))
        if beyond > h.score:
            hits += _answer_on_the_way(h, beyond, params)
        elif not _answered_further(h, further.get(h.uid, []), scores[h.relations], match, kinds):
            hits.append(h)
    hits.sort(key=lambda h: (-h.score, h.edge.hop, -h.edge.mentions, -h.edge.far_mentions, h.uid))
    return _one_per_node(_few_per_path(hits, params.per_path, params.later_share))


def _answer_on_the_way(
    hit: ExpansionHit, beyond: float, params: ExpansionParams
) -> list[ExpansionHit]:
    """A first step a better path went on from, kept when its own path explains the question
    nearly as well (`answer_near` of the better one), at `answer_share` of its score: "King
    Leopold's Ghost written by Adam Hochschild" answers "what movies did Adam Hochschild
    write", though the path on to the film's actors scored more by the word "movies"
    (MetaQA's and bench-hub's first-hop answers). A member of a society on the way to the
    disciplines its members work in is far below the path beyond: still passed over."""
    if hit.edge.hop > 1 or hit.score < params.answer_near * beyond:
        return []
    share = params.answer_share
    return [replace(hit, score=hit.score * share, support=hit.support * share)]


def _kind(
    match: RelationMatch,
    relations: tuple[str, ...],
    last: ExpandedEdge | None,
    known: dict[tuple[tuple[str, ...], bool | None], float],
) -> float:
    """How well a path's last relation names the asked kind where the path arrived (`last`,
    the path's last edge; None: at either end of it)."""
    key = (relations, None if last is None else arrived_at_subject(last))
    if key not in known:
        known[key] = match.kind_explained(*key)
    return known[key]


def _answered_further(
    hit: ExpansionHit,
    further: list[tuple[float, float]],
    score: float,
    match: RelationMatch,
    kinds: dict[tuple[tuple[str, ...], bool | None], float],
) -> bool:
    """A path through `hit` explains the question as well (hop cost aside) and the asked kind,
    where it arrives, better than `hit`'s path does at either end: `hit` is on the way to the
    answer."""
    if not further:
        return False
    params = match.params
    explains = score + params.extra_hop_cost * (len(hit.relations) - 1)
    kind = _kind(match, hit.relations, None, kinds)
    return any(e >= explains and k > kind + params.kind_further for e, k in further)


def _few_per_path(hits: list[ExpansionHit], per_path: int, share: float) -> list[ExpansionHit]:
    """A result shows ten facts: one path's many answers (the fifty players from a country)
    count at `share` of their score past their first `per_path`, so the best of the paths
    behind them come first when nearly as good (`hits` best first)."""
    count: Counter[tuple[str, tuple[str, ...]]] = Counter()
    later: set[str] = set()
    for hit in hits:
        key = (hit.edge.anchor, hit.relations)
        count[key] += 1
        if count[key] > per_path:
            later.add(hit.uid)
    if not later or share == 1.0:
        return hits
    return sorted(hits, key=lambda h: -h.score * (share if h.uid in later else 1.0))


def _one_per_node(hits: list[ExpansionHit]) -> list[ExpansionHit]:
    """The first hit leading to each node keeps its place; later ones to the same node (other
    paths there) follow every first one, so the answers reached stay diverse."""
    firsts: list[ExpansionHit] = []
    rest: list[ExpansionHit] = []
    seen: set[str] = set()
    for hit in hits:
        (rest if hit.edge.far in seen else firsts).append(hit)
        seen.add(hit.edge.far)
    return firsts + rest
