"""The edges of the nodes a user's walks have met, kept in the process while the user's graph
is unchanged: most of a walk's read time goes to nodes an earlier walk read (issue 51;
benchmarks/results/reads_bound.md).

A node is kept whole: every fact edge it has, each with the far end, the counts the store's
reads sort by and whether it is current, in the order those reads return them (the far
end's mentions, then the fact's, most first, then uid). A read is answered here only when it
would read every edge of the asked types at each of its nodes (no per-node scan binds, all
fit in its `total`; a probe's in its `size`): what the store returns is then a function of
these edges, and the same is returned. Any other read goes to the store, which scans a hub
in storage order. What is kept holds for one write generation of the user
(`GraphStore.generation`, changed by every write of any process sharing the store): a walk
that finds another generation starts afresh. A node that reads could not be answered for
met `after` times is learned in the background, for the walks after it; one with more edges
than `node_edges` is remembered as not kept, and a user whose graph cannot be kept whole
(more facts than half of `max_edges`) keeps nothing: its nodes are seldom met again
(benchmarks/results/known_edges.md). What is kept of a graph of any size is which relation
types a node has none of: a typed read that found none there (no cap cutting it short) is not
sent again for that node in the same generation.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

from engine.retrieval.background import BACKGROUND
from engine.store.base import Neighbour
from engine.store.reads import Reads
from engine.store.rows import KeptEdge

log = logging.getLogger(__name__)
# A `KeptEdge` as a plain tuple: the garbage collector stops walking a plain tuple of strings,
# numbers and booleans, but walks a named tuple at every full collection (46k kept edges made
# each one ~57 ms instead of ~30: benchmarks/results/known_edges.md).
Kept = tuple[str, str, bool, str, str, int, int, bool]
NodeEdges = tuple[Kept, ...] | None  # None: too many edges to keep (a hub), or a loop


@dataclass(slots=True)
class UserEdges:
    """One user's kept nodes, for one generation of the user's graph."""

    generation: str
    nodes: dict[str, NodeEdges] = field(default_factory=dict)
    met: Counter[str] = field(default_factory=Counter)  # reads they could not answer
    asked: set[str] = field(default_factory=set)  # learned, or being learned
    size: int = 0  # edges kept
    # whether the user's graph fits in what is kept (None: not counted yet): the nodes of a
    # larger one are read again too seldom to pay for reading them whole (MetaQA's 128k facts)
    fits: bool | None = None
    # the relation types a typed read found no current edge of at a node, in a graph of any
    # size: a hub met again (a genre, a year) is asked again for relations it never has
    lacks: dict[str, set[str]] = field(default_factory=dict)

    def having(self, nodes: list[str], types: list[str]) -> list[str]:
        """`nodes` but those known to have no current edge of any of `types`."""
        wanted = set(types)
        return [n for n in nodes if n not in self.lacks or not wanted <= self.lacks[n]]

    def neighbours(
        self,
        nodes: list[str],
        types: list[str] | None,
        scan: int,
        limit: int,
        total: int,
        include_invalid: bool,
    ) -> list[Neighbour] | None:
        """What `Reads.neighbours` returns, or None when it cannot be said from here."""
        wanted = None if types is None else set(types)
        out: list[Neighbour] = []
        read = 0
        kept = self._kept(nodes)
        if kept is None:
            return None
        for near, edges in kept:
            match = [e for e in edges if _asked(e, wanted, include_invalid)]
            read += len(match)
            if len(match) > scan or read > total:
                return None
            out += _neighbours(near, match[:limit], len(match))
        return out

    def probe(
        self, nodes: list[str], groups: list[list[str]], size: int, include_invalid: bool
    ) -> list[list[Neighbour]] | None:
        """What `Reads.probe` returns, or None when it cannot be said from here."""
        split: list[list[Neighbour]] = [[] for _ in groups]
        kept = self._kept(nodes)
        if kept is None:
            return None
        wanted = [set(group) for group in groups]
        for near, edges in kept:
            for i, types in enumerate(wanted):
                match = [e for e in edges if _asked(e, types, include_invalid)]
                if len(match) > size:
                    return None
                split[i] += _neighbours(near, match, len(match))
        return split

    def relation_types(
        self, nodes: list[str], include_invalid: bool
    ) -> dict[str, dict[str, int]] | None:
        """What `Reads.relation_types` returns, or None when it cannot be said from here."""
        kept = self._kept(nodes)
        if kept is None:
            return None
        found = {
            near: Counter(_predicate(e) for e in edges if _asked(e, None, include_invalid))
            for near, edges in kept
        }
        return {near: dict(types) for near, types in found.items() if types}

    def _kept(self, nodes: list[str]) -> list[tuple[str, tuple[Kept, ...]]] | None:
        """Each of `nodes` with its edges; None when one is not kept (or named twice)."""
        kept = []
        for near in nodes:
            edges = self.nodes.get(near)
            if edges is None:
                return None
            kept.append((near, edges))
        return kept if len(set(nodes)) == len(nodes) else None


class KnownEdges:
    """The kept nodes of each user, at most `max_edges` edges in all (the users searched
    longest ago dropped first)."""

    def __init__(self, reads: Reads, node_edges: int, max_edges: int, after: int = 1) -> None:
        self.reads = reads
        self.node_edges, self.max_edges, self.after = node_edges, max_edges, after
        self._users: OrderedDict[str, UserEdges] = OrderedDict()
        self._size = 0  # edges kept of all users
        self._lock = threading.Lock()

    def at(self, user_id: str, generation: str | None) -> UserEdges | None:
        """The user's kept nodes of `generation`; None keeps nothing (a store that cannot
        say its generation)."""
        if generation is None or self.max_edges <= 0:
            return None
        with self._lock:
            user = self._users.get(user_id)
            if user is None or user.generation != generation:
                self._size -= user.size if user is not None else 0
                user = UserEdges(generation)
                self._users[user_id] = user
            self._users.move_to_end(user_id)
            return user

    def learn(self, user_id: str, user: UserEdges, nodes: list[str]) -> None:
        """Read aside (`BACKGROUND.aside`: one read at a time, no search's thread taken) the
        edges of those of `nodes` that reads the kept nodes could not answer have now met
        `after` times: reading a node whole costs more than the typed read it replaces, and
        most nodes of a graph are met once or twice."""
        if user.fits is False:
            return
        with self._lock:
            new = [near for near in dict.fromkeys(nodes) if near not in user.asked]
            user.met.update(new)
            new = [near for near in new if user.met[near] >= self.after]
            user.asked.update(new)
        if new:
            BACKGROUND.aside(self._read, user_id, user, new)

    def _read(self, user_id: str, user: UserEdges, nodes: list[str]) -> None:
        with self._lock:
            if self._users.get(user_id) is not user:
                return  # another generation, or dropped, while the read waited its turn
        try:
            if user.fits is None:
                most = self.max_edges // 2  # a fact is an edge at each of its two ends
                user.fits = self.reads.count_facts(user_id, most + 1) <= most
            if not user.fits:
                return
            found = self.reads.node_edges(user_id, nodes, self.node_edges)
        except Exception:  # a search's reads report the store's trouble; this one only waits
            log.debug("reading the edges of %d nodes failed", len(nodes), exc_info=True)
            with self._lock:
                user.asked.difference_update(nodes)
            return
        with self._lock:
            if self._users.get(user_id) is not user:
                return  # another generation since
            for near, edges in found.items():
                keep = len(edges) <= self.node_edges and all(e.far != near for e in edges)
                keep = keep and self._take(user, len(edges))
                in_order = sorted(edges, key=_store_order) if keep else None
                user.nodes[near] = None if in_order is None else tuple(map(_plain, in_order))

    def lacking(self, user_id: str, user: UserEdges, read: list[str], types: list[str]) -> None:
        """`read`'s nodes have no current edge of `types` (a typed read of them, not cut
        short by its caps, gave none): later reads of this generation skip them."""
        asked = set(types)
        with self._lock:
            if self._users.get(user_id) is not user:
                return  # another generation since
            for near in dict.fromkeys(read):
                new = asked - user.lacks.get(near, set())
                if new and self._take(user, len(new)):
                    user.lacks.setdefault(near, set()).update(new)

    def _take(self, user: UserEdges, edges: int) -> bool:
        """Whether `edges` more fit in `max_edges`, once the other users searched longest
        ago are dropped to make room for them; if so they are counted to `user`."""
        for other_id, other in list(self._users.items()):
            if self._size + edges <= self.max_edges:
                break
            if other is not user:
                del self._users[other_id]
                self._size -= other.size
        if self._size + edges > self.max_edges:
            return False
        user.size += edges
        self._size += edges
        return True


class KnownReads(Reads):
    """`reads` whose walk reads are answered from `user`'s kept nodes where they can be, and
    sent to `reads` where not."""

    def __init__(self, reads: Reads, known: KnownEdges, user_id: str, user: UserEdges) -> None:
        super().__init__(reads.store)
        self.reads, self.known, self.user_id, self.user = reads, known, user_id, user

    def neighbours(
        self,
        user_id: str,
        nodes: list[str],
        *,
        predicates: list[str] | None,
        scan: int,
        limit: int,
        total: int,
        include_invalid: bool,
    ) -> list[Neighbour]:
        if user_id == self.user_id and nodes and predicates != []:
            found = self.user.neighbours(nodes, predicates, scan, limit, total, include_invalid)
            if found is not None:
                return found
            self.known.learn(user_id, self.user, nodes)
            if predicates is not None and not include_invalid:
                return self._typed(nodes, predicates, scan, limit, total)
        return self.reads.neighbours(
            user_id, nodes, predicates=predicates, scan=scan, limit=limit, total=total,
            include_invalid=include_invalid,
        )  # fmt: skip

    def _typed(
        self, nodes: list[str], types: list[str], scan: int, limit: int, total: int
    ) -> list[Neighbour]:
        """A typed read of current edges, leaving out the nodes known to have none of
        `types`; the nodes it finds none at are noted, when no cap cut it short."""
        asked = self.user.having(nodes, types)
        if not asked:
            return []
        found = self.reads.neighbours(
            self.user_id, asked, predicates=types, scan=scan, limit=limit, total=total,
            include_invalid=False,
        )  # fmt: skip
        degree = {n.near: n.degree for n in found}  # the edges read at each node
        if limit > 0 and sum(degree.values()) < total:
            none = [near for near in asked if near not in degree]
            self.known.lacking(self.user_id, self.user, none, types)
        return found

    def probe(
        self,
        user_id: str,
        nodes: list[str],
        groups: list[list[str]],
        *,
        size: int,
        include_invalid: bool,
    ) -> list[list[Neighbour]]:
        if user_id == self.user_id and nodes and groups:
            found = self.user.probe(nodes, groups, size, include_invalid)
            if found is not None:
                return found
            self.known.learn(user_id, self.user, nodes)
        return self.reads.probe(user_id, nodes, groups, size=size, include_invalid=include_invalid)

    def relation_types(
        self, user_id: str, nodes: list[str], *, include_invalid: bool
    ) -> dict[str, dict[str, int]]:
        if user_id == self.user_id and nodes:
            found = self.user.relation_types(nodes, include_invalid)
            if found is not None:
                return found
            self.known.learn(user_id, self.user, nodes)
        return self.reads.relation_types(user_id, nodes, include_invalid=include_invalid)


def _plain(edge: KeptEdge) -> Kept:
    uid, predicate, outgoing, far, far_name, far_mentions, mentions, current = edge
    return (uid, predicate, outgoing, far, far_name, far_mentions, mentions, current)


def _predicate(edge: Kept) -> str:
    return edge[1]


def _asked(edge: Kept, types: set[str] | None, include_invalid: bool) -> bool:
    _, predicate, _, _, _, _, _, current = edge
    return (types is None or predicate in types) and (include_invalid or current)


def _neighbours(near: str, edges: list[Kept], degree: int) -> list[Neighbour]:
    return [
        Neighbour(near, uid, predicate, outgoing, far, far_name, far_mentions, mentions, degree)
        for uid, predicate, outgoing, far, far_name, far_mentions, mentions, _ in edges
    ]


def _store_order(edge: KeptEdge) -> tuple[int, int, str]:
    """The order of the store's neighbour reads: the far end's mentions, then the fact's, most
    first, then the uid."""
    return (-edge.far_mentions, -edge.mentions, edge.uid)
