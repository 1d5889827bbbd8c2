"""Leg 1: walk from the anchors along the relations the question asks about, hop by hop.

Every path walked (one to three hops) is scored by how well its relations explain the question
(`RelationMatch.path`); which paths go on is decided hop by hop from what each can still reach
(`RelationMatch.outlook`), keeping the best few (a beam); a node one hop from two anchors
answers as a path through both, and only a continuation beating it is walked. A node with
few edges is read whole: cheap, and the graph itself says which relations go on from it. A
hub (more than `hub_degree` mentions) is read by relationship type, only the relations the
paths through it may continue with: its other edges are never touched, and every neighbour
the question's relation leads to is read (up to the scan caps), not the first few in storage
order. Paths arriving at the same node are aggregated: an answer reached by many paths
(through different neighbours of the anchor) ranks higher. A predicate and its `_INVERSE`
twin, or two relationships joining the same two entities both ways, are one step: read once,
counted once, returned once. A relation that another stores reversed under a name of its own
(PARENTS, CHILDREN) is walked forwards only where that twin joins the same two entities:
"X's parents" are not the people whose parent X is.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from engine.retrieval.anchors import Anchor
from engine.retrieval.edge_reads import EdgeRead, EdgeReads, Started
from engine.retrieval.paths import best_join
from engine.retrieval.predicates import NOTHING, Outlook, RelationMatch
from engine.retrieval.reach import (
    ExpandedEdge,
    ExpansionHit,
    Reach,
    arrived_at_subject,
    best_first,
    degree_by_relation,
    edge_of,
    most_promising,
    one_per_pair,
    rank,
    read_whole,
    through_hub,
    two_hops,
    visits,
)
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import Neighbour
from engine.store.reads import Reads

_Frontier = dict[tuple[str, tuple[str, ...], str], Reach]  # (node, relations, anchor)
_Ahead = dict[EdgeRead, Started | None]  # reads started before their turn


@dataclass(slots=True)
class Expansion:
    """What the walk read: ranked hits, every edge read, and the bridges passed over."""

    hits: list[ExpansionHit] = field(default_factory=list)
    edges: list[ExpandedEdge] = field(default_factory=list)
    bridges: set[str] = field(default_factory=set)
    reads: int = 0
    whole: dict[str, frozenset[str]] = field(default_factory=dict)  # anchor read whole: neighbours


def expand(
    reads: Reads,
    user_id: str,
    anchors: list[Anchor],
    match: RelationMatch,
    predicates: list[str],
    settings: ExpansionParams,
    include_invalid: bool = False,
    twins: Mapping[str, str] | None = None,
) -> Expansion:
    """Walk from `anchors` along the question's relations; ranked hits, best first. `twins`:
    the relations another stores reversed, and that twin (`RelationEnds.twins`)."""
    out = Expansion()
    if not anchors:
        return out
    walk = _Walk(reads, user_id, match, predicates, settings, include_invalid, out, twins)
    reaches = walk.run(anchors)
    out.reads = walk.io.count
    strength = {a.entity.uid: a.score for a in anchors}
    out.hits = rank(reaches, match, strength, settings)
    return out


class _Walk:
    """The hop-by-hop reads of one expansion."""

    def __init__(
        self,
        reads: Reads,
        user_id: str,
        match: RelationMatch,
        predicates: list[str],
        settings: ExpansionParams,
        include_invalid: bool,
        out: Expansion,
        twins: Mapping[str, str] | None = None,
    ) -> None:
        self.reads, self.user_id, self.match = reads, user_id, match
        self.twins = twins or {}
        self.settings, self.include_invalid, self.out = settings, include_invalid, out
        self.io = EdgeReads(reads, user_id, settings.max_edges, include_invalid)
        self.by_base: dict[str, list[str]] = defaultdict(list)
        for predicate in predicates:
            base = match.base(predicate)
            if base is not None:
                self.by_base[base].append(predicate)
        self.seen: set[str] = set()
        self.hubs: set[str] = set()  # anchors read by type
        self.first: set[str] = set()  # ... along these relations
        # the frontier's nodes, the most promising first: what a read of many nodes returns
        # is bounded by `max_edges`, and the nodes first in the read get it
        self.priority: dict[str, tuple[float, int]] = {}

    def run(self, anchors: list[Anchor]) -> list[Reach]:
        """Every path walked, hop by hop, the frontier narrowed to the promising ones."""
        frontier: _Frontier = {
            (a.entity.uid, (), a.entity.uid): Reach(a.entity.uid, (), (), a.entity.mentions)
            for a in anchors
        }
        walked: list[Reach] = []
        found = 0.0  # the best score of a path walked so far
        joined = NOTHING  # ... of a node next to two anchors, its two edges read as one path
        for hop in range(1, self.settings.depth + 1):
            reached = self._step(frontier, hop)
            walked += reached.values()
            if hop == 1 and len(anchors) > 1:
                joined = best_join(reached, self.match)
            top = max(self.match.paths({k[1] for k in reached}), default=NOTHING)
            found = max(found, joined, top)
            frontier = self._beam(reached, hop, found, joined, top)
            if not frontier:
                break
        return walked

    def _beam(
        self, reached: _Frontier, hop: int, found: float, joined: float, top: float
    ) -> _Frontier:
        """The paths worth another hop (`top`: the best score of those `reached`): those whose
        continuations can beat every path walked so far (`found`, the best score), at most the
        `beam` most promising and none more than `beam_margin` below the most promising; and the
        best path of this hop while a continuation comes within `beam_slack` of it, beats any node
        joining two anchors (`joined`) and its next step explains something the path does not
        (`beam_gain`) or goes back along the anchor's relation; for a question asking for a kind of
        thing, so do the paths within `beam_slack` of the best but one just gone back (the relation
        leading to that kind may be a hop further: "which country was X's wife born in")."""
        depth = self.settings.depth
        if hop >= depth or not self.match.asked:
            return {}
        walkable = {k: v for k, v in reached.items() if self._walkable(k, v)}
        ends = {k: (k[1], arrived_at_subject(v.edges[-1])) for k, v in walkable.items()}
        outlook = self.match.outlooks(ends.values(), depth)
        hop_cost = self.match.params.extra_hop_cost
        least = top - self.settings.beam_slack if self.match.kind_relation() else top

        def goes_on(relations: tuple[str, ...], o: Outlook) -> bool:
            ahead = max(o.via.values(), default=NOTHING)
            if ahead > found:
                return True
            # out and back along the anchor's relation asks for its siblings, which no word
            # may name ("the actor of X also starred in which films")
            back = len(relations) == 1 and any(
                self.match.back_along(relations[0], step) for step in o.via
            )
            gains = back or ahead > o.own - hop_cost + self.settings.beam_gain
            close = ahead > found - self.settings.beam_slack and ahead > joined
            best = o.own >= top or (o.own >= least and not self.match.goes_back(relations))
            return best and close and gains

        lead = max((o.best for o in outlook.values()), default=NOTHING)
        near = lead - self.settings.beam_margin
        going = [e for e, o in outlook.items() if o.steps and goes_on(e[0], o) and o.best >= near]
        going.sort(key=lambda e: -outlook[e].best)
        kept = set(going[: self.settings.beam])
        return {k: v for k, v in walkable.items() if ends[k] in kept}

    def _walkable(self, key: tuple[str, tuple[str, ...], str], reach: Reach) -> bool:
        """Not a loop, nor a hub anchor's context sample: only its chosen relations go on."""
        sample = len(key[1]) == 1 and reach.anchor in self.hubs and key[1][0] not in self.first
        return not sample and reach.edges[-1].near != key[0]

    def _step(self, frontier: _Frontier, hop: int) -> _Frontier:
        """Read the frontier's next edges and extend each path by them."""
        read = self._read_frontier(frontier, hop)
        nxt: _Frontier = {}
        steps: dict[str, list[Neighbour]] = {}  # a node's steps, for every path at it
        for (node, relations, anchor), reach in frontier.items():
            if node not in steps:
                steps[node] = one_per_pair(read.get(node, []), self.match.base, self.twins)
            for n in steps[node]:
                base = self.match.base(n.predicate)
                loop = n.far == n.near  # "Alice HAS_NAME Alice": an answer, not a way on
                if base is None or (not loop and (n.far == anchor or visits(reach, n.far))):
                    continue
                edge = edge_of(anchor, n, hop, self.twins)
                self._note(edge)
                hub = reach.hub * through_hub(n.degree if hop > 1 else 0, self.settings.hub_degree)
                key = (n.far, (*relations, edge.step or base), anchor)
                found = nxt.get(key)
                starts = reach.starts or frozenset((n.far,))
                if found is None:
                    chain = (*reach.edges, edge)
                    found = Reach(anchor, key[1], chain, n.far_mentions, reach.paths, hub)
                    found.starts = starts
                    nxt[key] = found
                else:
                    found.paths += reach.paths
                    found.starts = found.starts | starts
        return nxt

    def _read_frontier(self, frontier: _Frontier, hop: int) -> dict[str, list[Neighbour]]:
        """Ordinary nodes are read whole, the smallest first, while their edges fit in
        `open_edges`; hubs, and the nodes past that budget, only by the relation types their
        paths may continue with (a hub anchor also gives a context sample of any type); past
        the anchors, the `frontier_nodes` most promising nodes at most."""
        degree: dict[str, int] = {}
        steps: dict[str, dict[str, float]] = defaultdict(dict)
        for (node, relations, _), reach in frontier.items():
            degree[node] = reach.degree
            promise = (self.match.path(relations), reach.paths)
            self.priority[node] = max(promise, self.priority.get(node, promise))
            if hop > 1:
                for step, value in self._next_steps(reach).items():
                    steps[node][step] = max(value, steps[node].get(step, value))
        if hop > 1:
            degree = most_promising(degree, self.priority, self.settings.frontier_nodes)
        whole = read_whole(degree, self.settings.hub_degree, self.settings.open_edges)
        known = sorted(set(degree) - set(whole))
        scan = self.settings.anchor_scan if hop == 1 else self.settings.hub_scan
        # a hub met past the anchors keeps fewer edges at the last hop (no neighbour goes on)
        last = hop >= self.settings.depth
        kept = self.settings.last_hop_sample if last else self.settings.hub_sample
        keep = scan if hop == 1 else min(scan, kept)
        early = self._early(known, steps, hop, scan, keep)
        ahead = dict(zip(early, self.io.start_all(early), strict=True))
        read: dict[str, list[Neighbour]] = defaultdict(list)
        filled, room = self.settings.hub_scan, self.io.room
        found = self.io.read(EdgeRead(tuple(whole), None, filled, filled))
        for n in found:
            read[n.near].append(n)
        # a node whose whole read filled the scan is a hub its mentions did not show; in a
        # fixed order, which the reads of them follow
        hubs = sorted({*known, *(n for n in whole if read[n] and read[n][0].degree >= filled)})
        for node in hubs:
            read.pop(node, None)
        if hop == 1:
            self.hubs = set(hubs)
            if len(found) < room:  # no node's read was cut short: each has all its edges
                whole_read = [a for a in whole if a not in self.hubs]
                self.out.whole = {a: frozenset(n.far for n in read[a]) for a in whole_read}
            first = self._first_steps(hubs, ahead)
            self.first = set(first)
            steps = defaultdict(lambda: {b: -float(i) for i, b in enumerate(first)})
        order = {node: best_first(steps[node]) for node in hubs}
        for n in self._read_typed(order, scan, keep, ahead):
            read[n.near].append(n)
        if hop == 1:
            sample = self._sample(hubs)
            for n in self.io.take(ahead.get(sample), sample):
                read[n.near].append(n)
        return read

    def _early(
        self, known: list[str], steps: dict[str, dict[str, float]], hop: int, scan: int, keep: int
    ) -> list[EdgeRead]:
        """The reads that need only the hubs `known` by their mentions, sent with the whole
        read of the others: a hub anchor's context sample (the longest read) and probes; past
        the anchors, the first typed round."""
        if hop == 1:
            return [self._sample(known), *self._probes(known).values()]
        first_round = {node: best_first(steps[node]) for node in known}
        pending = {node: rest for node, rest in first_round.items() if rest}
        return self._round(pending, defaultdict(set), scan, keep)

    def _sample(self, hubs: list[str]) -> EdgeRead:
        """A hub anchor's context: the most mentioned of its edges of any type."""
        return EdgeRead(tuple(hubs), None, self.settings.hub_scan, self.settings.fanout)

    def _read_typed(
        self, steps: dict[str, list[str]], scan: int, keep: int, ahead: _Ahead
    ) -> list[Neighbour]:
        """Hubs read by type, the best `typed_steps` relations each has: a node without the
        best relation asked for gets the next ones in place of those it lacks (a university
        has no CITY_OF: its LOCATED_IN leads to the city), for at most `typed_rounds` reads;
        a node with it is done (a round asked of 150 players that have none of the relations
        asked costs ~2 ms). Of the `scan` edges read at a node along a relation, the `keep`
        to the most mentioned neighbours come back. The first round's reads may have been
        started `ahead`."""
        found: list[Neighbour] = []
        has: dict[str, set[str]] = defaultdict(set)
        pending = {node: rest for node, rest in steps.items() if rest}
        best = {node: rest[0] for node, rest in pending.items()}
        for _ in range(self.settings.typed_rounds):
            # a round's groups do not wait for each other: sent together, charged in order
            wanted = self._round(pending, has, scan, keep)
            started = [ahead.get(r) or self.io.start(r) for r in wanted]
            ahead = {}
            for r, ahead_read in zip(wanted, started, strict=True):
                for n in degree_by_relation(self.io.take(ahead_read, r), self.match.base):
                    found.append(n)
                    has[n.near].add(self.match.base(n.predicate) or n.predicate)
            pending = {
                node: rest
                for node, rest in pending.items()
                if rest
                and len(has[node]) < self.settings.typed_steps
                and best[node] not in has[node]
            }
            if not pending:
                break
        return found

    def _round(
        self, pending: dict[str, list[str]], has: dict[str, set[str]], scan: int, keep: int
    ) -> list[EdgeRead]:
        """One round of typed reads, a read per relation: the hubs wanting it next read it
        together (`pending` left with what they want after), each with its own caps (a
        company's one industry is not crowded out by its hundreds of employees); a wide
        frontier, its best relation only (the nodes without it get the next ones in the next
        round)."""
        groups: dict[str, list[str]] = defaultdict(list)
        wide = len(pending) >= self.settings.wide_frontier
        for node, rest in pending.items():
            want = 1 if wide else self.settings.typed_steps - len(has[node])
            for relation in rest[:want]:
                groups[relation].append(node)
            pending[node] = rest[want:]
        return [
            EdgeRead(tuple(self._by_priority(nodes)), self._types((relation,)), scan, keep)
            for relation, nodes in groups.items()
        ]

    def _types(self, relations: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(p for r in relations for p in self.by_base.get(r, []))

    def _by_priority(self, nodes: list[str]) -> list[str]:
        return sorted(nodes, key=lambda n: (self.priority.get(n, (0.0, 0)), n), reverse=True)

    def _probes(self, hubs: list[str]) -> dict[str, EdgeRead]:
        """A few neighbours of `hubs` along each relation a walk may start with."""
        if not hubs or not self.match.asked:
            return {}
        candidates = self.match.outlook((), self.settings.depth).steps
        probe = self.settings.probe_size
        return {
            base: EdgeRead(tuple(hubs), self._types((base,)), probe, probe)
            for base in candidates[: self.settings.probe_relations]
        }

    def _first_steps(self, hubs: list[str], ahead: dict[EdgeRead, Started | None]) -> list[str]:
        """The relations a walk from hub anchors starts with, chosen before the hubs' edges are
        read: a few neighbours along each candidate relation are sampled, and the relations
        met at them tell which paths exist; a relation is read in full when the best path
        through it is within `step_share` of the best of all."""
        probes = self._probes(hubs)
        late = [r for r in probes.values() if r not in ahead]
        ahead = ahead | dict(zip(late, self.io.start_all(late), strict=True))
        started = {base: ahead[r] for base, r in probes.items()}
        sampled = {base: self.io.take(started[base], r) for base, r in probes.items()}
        ordinary = {
            n.far
            for ns in sampled.values()
            for n in ns
            if n.far_mentions <= self.settings.hub_degree
        }
        met = self.reads.relation_types(
            self.user_id, sorted(ordinary), include_invalid=self.include_invalid
        )
        after = {b: [met.get(n.far) for n in ns] for b, ns in sampled.items() if ns}
        value = two_hops(self.match, after) or self._sampled_steps(hubs, ahead)
        top = max(value.values(), default=0.0)
        chosen = [b for b in best_first(value) if value[b] >= self.settings.step_share * top]
        return chosen[: self.settings.typed_steps]

    def _sampled_steps(self, hubs: list[str], ahead: _Ahead) -> dict[str, float]:
        """When none of the relations probed is a hub's ("which parties have a judge": no word
        names POSITION_HELD), those of its context sample (sent ahead), by what they reach."""
        started = ahead.get(self._sample(hubs))
        found = started.found.result() if started is not None else []
        bases = {b for n in found if (b := self.match.base(n.predicate)) is not None}
        return two_hops(self.match, {b: [None] for b in bases})

    def _next_steps(self, reach: Reach) -> dict[str, float]:
        """The relations a path may go on with from where it arrived, read by type from a
        hub: those within `step_share` of the best path on."""
        if not self.match.asked:
            return {}
        at = arrived_at_subject(reach.edges[-1])
        outlook = self.match.outlook(reach.relations, self.settings.depth, at)
        best = max(outlook.via.values(), default=0.0)
        return {s: v for s, v in outlook.via.items() if v >= self.settings.step_share * best}

    def _note(self, edge: ExpandedEdge) -> None:
        if edge.uid not in self.seen:
            self.seen.add(edge.uid)
            self.out.edges.append(edge)
