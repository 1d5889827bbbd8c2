"""Result rows as models, shared by the adapters' reads."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, NamedTuple

import numpy as np

from engine.models import Entity, Fact, HistoryEvent
from engine.store.base import EpisodeText, Neighbour

_STAMP_PRIME = 1_000_000_007
_TIME_PARTS = 52  # the second part of an exact time counts 2**-52 s


def exact_time(value: Any) -> Any:
    """A time as the reads that need it exact give it, `[whole seconds, parts of 2**-52 s]`
    (the export's, cypher/list_user_*.cypher, and the episode leg's index,
    cypher/list_episode_texts.cypher), as the float the store holds, bit for bit: FalkorDB
    writes a float into a reply with 15 significant digits, where a time to the microsecond
    has 16 and a `time.time()` up to 17. Exact for every time a second or more from 1970-01-01 (its
    whole seconds leave at most 52 bits below the point); closer to it, to 2**-52 s. A pair
    of nulls (no time) is None; any other value is returned as it is.

    Example:
        >>> exact_time([1690000000, 555996401369088])
        1690000000.123456
    """
    if not (isinstance(value, list | tuple) and len(value) == 2):
        return value
    whole, parts = value
    if whole is None or parts is None:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return whole + math.ldexp(parts, -_TIME_PARTS)


def times_stamp(times: Iterable[float]) -> int:
    """What cypher/stamp_user_episodes.cypher sums over messages of these times: each time in
    whole milliseconds (floored) modulo a prime. In one numpy pass: a search process checks
    a 200,000-message index in ~2 ms, where a Python loop held the interpreter for ~50."""
    ms = np.floor(np.asarray(times, dtype=np.float64) * 1000).astype(np.int64)
    return int((ms % _STAMP_PRIME).sum())


def entity_pairs(rows: Iterable[list[Any]]) -> list[tuple[str, Entity]]:
    return [(row[0], Entity.from_props(row[1])) for row in rows]


def fact_from_row(row: list[Any]) -> Fact:
    return Fact.from_props(row[0], row[1], row[2])


def history_from_row(props: dict[str, Any]) -> HistoryEvent:
    return HistoryEvent(
        uid=props["uid"],
        target_uid=props["target_uid"],
        user_id=props["user_id"],
        event=props["event"],
        ts=datetime.fromtimestamp(float(props["ts"]), tz=UTC),
        episode_uid=props.get("episode_uid"),
        detail=props.get("detail"),
    )


# uid, predicate, outgoing, far uid, far name, far mentions, mentions
Edge = tuple[str, str, bool, str, str, int, int]


class KeptEdge(NamedTuple):
    """An edge of a node the walk keeps (`list_node_edges`): an `Edge`, and whether it is
    current (not invalid)."""

    uid: str
    predicate: str
    outgoing: bool
    far: str
    far_name: str
    far_mentions: int
    mentions: int
    current: bool


def edge_line(line: str) -> Edge:
    """One edge of a neighbour read (`expand_*`, `probe_typed`): the lengths of its uid and of
    its far end's uid, its type, `>` (it points away from the node read) or `<`, the far end's
    mentions and its own, then its uid, the far uid and the far name run together. One string
    per edge, not a list of seven values: a hub's read returns thousands of edges, and each
    value the client parses is an object more for the garbage collector to walk."""
    uid_size, far_size, predicate, arrow, far_mentions, mentions, rest = line.split(" ", 6)
    far_at = int(uid_size)
    name_at = far_at + int(far_size)
    return (
        rest[:far_at],
        predicate,
        arrow == ">",
        rest[far_at:name_at],
        rest[name_at:],
        int(far_mentions),
        int(mentions),
    )


def neighbours_of(near: str, edges: Iterable[Edge], degree: int) -> list[Neighbour]:
    return [
        Neighbour(near, uid, predicate, outgoing, far, name, far_mentions, mentions, degree)
        for uid, predicate, outgoing, far, name, far_mentions, mentions in edges
    ]


def in_node_order(rows: Iterable[list[Any]], nodes: list[str]) -> list[list[Any]]:
    """Rows keyed by node (`near` first) in the order of `nodes`, the read's argument: the
    order a store returns its groups in after `collect` is not promised."""
    at: dict[str, int] = {}
    for i, node in enumerate(nodes):
        at.setdefault(node, i)
    return sorted(rows, key=lambda row: at.get(row[0], len(at)))


def neighbours_from_rows(rows: Iterable[list[Any]], nodes: list[str]) -> list[Neighbour]:
    """Flatten `expand_*` rows (a node with the edges read from it), in the order of `nodes`."""
    out = []
    for near, lines, degree in in_node_order(rows, nodes):
        out += neighbours_of(near, map(edge_line, lines), int(degree or 0))
    return out


def probed_neighbours(
    rows: Iterable[list[Any]], nodes: list[str], groups: list[list[str]]
) -> list[list[Neighbour]]:
    """`probe_typed` rows (a node with its edges along every group of types) split by group,
    each node's degree in a group what it read along that group, in the order of `nodes`."""
    group_of = {t: i for i, g in enumerate(groups) for t in g}
    split: list[list[Neighbour]] = [[] for _ in groups]
    for near, lines in in_node_order(rows, nodes):
        parts: list[list[Edge]] = [[] for _ in groups]
        for edge in map(edge_line, lines):
            parts[group_of[edge[1]]].append(edge)
        for i, part in enumerate(parts):
            split[i] += neighbours_of(near, part, len(part))
    return split


def kept_edges(rows: Iterable[list[Any]]) -> dict[str, list[KeptEdge]]:
    """`list_node_edges` rows: each node's edges, each line led by 1 (current) or 0."""
    return {
        near: [KeptEdge(*edge_line(line[2:]), line[0] == "1") for line in lines]
        for near, lines in rows
    }


def episode_texts(rows: Iterable[list[Any]]) -> tuple[list[EpisodeText], list[str | None]]:
    """`list_episode_texts` rows: the messages, and the index terms stored with each."""
    rows = list(rows)
    texts = [
        EpisodeText(r[0], r[1], r[2], r[3] or "user", r[4] or "", _time(r[5]), r[6], bool(r[7]))
        for r in rows
    ]
    return texts, [r[8] for r in rows]


def _time(value: Any) -> float:
    """An exact time read (`exact_time`), 0.0 for none."""
    return float(exact_time(value) or 0.0)


def unit(similarity: float) -> float:
    """A similarity from (1 + cos) / 2, kept in [0, 1] against float32 rounding."""
    return min(1.0, max(0.0, float(similarity)))
