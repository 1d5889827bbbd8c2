"""The edge reads of one walk under its `max_edges` budget, some started before their turn.

A walk's reads are charged in a fixed order: each may read at most what the ones before it
left of the budget (its room). A read that does not depend on what the ones before it return
can still be sent to the database with them (`start`, in the background) and charged at its
turn (`take`): sent with the room it had then, at least the room it has at its turn. What
came back is used as far as the smaller room would have read the same edges: the per-node
caps are the same under both rooms, and a typed read's nodes whose edges all fit in the
smaller one, as they were read in order, keep theirs. The rest is read again at its turn, so
a walk returns the same whichever way its reads went.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import Future
from dataclasses import dataclass

from engine.retrieval.background import BACKGROUND
from engine.store.base import Neighbour
from engine.store.reads import Reads


@dataclass(frozen=True, slots=True)
class EdgeRead:
    """One read of `neighbours`: up to `scan` edges per node, the `limit` best kept."""

    nodes: tuple[str, ...]
    types: tuple[str, ...] | None  # None: any type
    scan: int
    limit: int


@dataclass(slots=True)
class Started:
    """A read sent before its turn, with the room it had then."""

    read: EdgeRead
    room: int
    found: Future[list[Neighbour]]


class EdgeReads:
    """The reads of one walk, charged in order against `max_edges`."""

    def __init__(self, reads: Reads, user_id: str, max_edges: int, include_invalid: bool) -> None:
        self.reads, self.user_id = reads, user_id
        self.max_edges, self.include_invalid = max_edges, include_invalid
        self.rows = 0  # edges charged so far
        self.count = 0  # reads charged so far

    @property
    def room(self) -> int:
        return self.max_edges - self.rows

    def read(self, read: EdgeRead) -> list[Neighbour]:
        """`read` now, charged now."""
        room = self.room
        if not self._wanted(read, room):
            return []
        return self._charge(self._send(read, room), room)

    def start(self, read: EdgeRead) -> Started | None:
        """Send `read` now, to be charged (and checked) at its turn by `take`."""
        room = self.room
        if not self._wanted(read, room):
            return None
        return Started(read, room, BACKGROUND.submit(self._send, read, room))

    def start_all(self, reads: list[EdgeRead]) -> list[Started | None]:
        """`start` each of `reads`; the typed ones of the same nodes that keep all they scan
        (a hub's probes) go as one read when all they can return fits in the room now: no cap
        binds then, so each gets what it would have read alone."""
        room = self.room
        alike: dict[tuple[tuple[str, ...], int], list[EdgeRead]] = defaultdict(list)
        for read in reads:
            if self._wanted(read, room) and read.types is not None and read.scan == read.limit:
                alike[(read.nodes, read.scan)].append(read)
        started: dict[EdgeRead, Started | None] = {}
        for (nodes, size), group in alike.items():
            if len(group) > 1 and len(nodes) * size * len(group) <= room:
                started |= self._start_together(group, nodes, size, room)
        return [started[r] if r in started else self.start(r) for r in reads]

    def _start_together(
        self, reads: list[EdgeRead], nodes: tuple[str, ...], size: int, room: int
    ) -> dict[EdgeRead, Started | None]:
        groups = [list(r.types or ()) for r in reads]
        together = BACKGROUND.submit(
            self.reads.probe, self.user_id, list(nodes), groups,
            size=size, include_invalid=self.include_invalid,
        )  # fmt: skip
        parts: list[Future[list[Neighbour]]] = [Future() for _ in reads]

        def hand_out(done: Future[list[list[Neighbour]]]) -> None:
            error = done.exception()
            for i, part in enumerate(parts):
                if error is not None:
                    part.set_exception(error)
                else:
                    part.set_result(done.result()[i])

        together.add_done_callback(hand_out)
        return {r: Started(r, room, part) for r, part in zip(reads, parts, strict=True)}

    def take(self, started: Started | None, read: EdgeRead) -> list[Neighbour]:
        """The edges of `read` at its turn: those `started` earlier if they are the same."""
        room = self.room
        if started is None or started.read != read:
            return self.read(read)
        found = started.found.result()
        if not self._wanted(read, room):
            return []
        if not _same(started, found, room):
            found = self._again(started, found, room)
        return self._charge(found, room)

    def _again(self, started: Started, found: list[Neighbour], room: int) -> list[Neighbour]:
        """What `started.read` returns in the smaller `room`: its first nodes' edges as read,
        where all of them fit (a read takes its nodes in order), and the others read again in
        what they leave of it (twenty clubs read at a last hop: the first few kept)."""
        read = started.read
        if read.types is None or not _same_caps(read, started.room, room):
            return self._send(read, room)
        at = _read_at(found)
        degree = [at.get(node, 0) for node in read.nodes]
        fit, used = 0, 0
        while fit < len(degree) and used + degree[fit] <= room:
            used += degree[fit]
            fit += 1
        kept = set(read.nodes[:fit])
        rest = EdgeRead(read.nodes[fit:], read.types, read.scan, read.limit)
        return [n for n in found if n.near in kept] + self._send(rest, room, total=room - used)

    def _wanted(self, read: EdgeRead, room: int) -> bool:
        return room > 0 and bool(read.nodes) and read.types != ()

    def _send(self, read: EdgeRead, room: int, total: int | None = None) -> list[Neighbour]:
        """`read` with the caps of `room`, at most `total` edges (`room`) in all."""
        return self.reads.neighbours(
            self.user_id,
            list(read.nodes),
            predicates=None if read.types is None else list(read.types),
            scan=min(read.scan, room),
            limit=min(read.limit, room),
            total=room if total is None else total,
            include_invalid=self.include_invalid,
        )

    def _charge(self, found: list[Neighbour], room: int) -> list[Neighbour]:
        self.count += 1
        self.rows += min(len(found), room)
        return found[:room]


def _same(started: Started, found: list[Neighbour], room: int) -> bool:
    """Whether `found`, read with `started.room`, is what a read with `room` returns: the
    per-node caps agree and every edge read fits in `room`. A typed read's degree is what it
    read at the node; a read of any type may drop edges after reading them (a fact joining a
    node to itself), so only its caps bound what it read."""
    read, then = started.read, started.room
    if not _same_caps(read, then, room):
        return False
    if read.types is None:
        return len(read.nodes) * min(read.scan, then) <= room
    return sum(_read_at(found).values()) <= room


def _read_at(found: list[Neighbour]) -> dict[str, int]:
    """The edges a typed read read at each node (its degree there)."""
    return {n.near: n.degree for n in found}


def _same_caps(read: EdgeRead, then: int, room: int) -> bool:
    return all(min(cap, then) == min(cap, room) for cap in (read.scan, read.limit))
