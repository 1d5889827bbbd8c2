"""What an import found already there: how many of its records the target user held before
it wrote them, so a report can tell new from held (an import is idempotent: the same file
imported again writes every record onto one it holds, and nothing new).

Every count reads the target user's own records (`$user_id`), so what another user holds
never counts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from engine.store.base import GraphStore
from engine.store.reads import Reads
from engine.transfer.export import PAGE
from engine.transfer.snapshot import GraphSnapshot


def held_facts(store: GraphStore, snapshot: GraphSnapshot) -> int:
    """How many of the snapshot's facts (uids already derived for its user) the user holds."""
    reads, uids = Reads(store), [f.uid for f in snapshot.facts]
    held = 0
    for start in range(0, len(uids), PAGE):
        held += len(
            {f.uid for f in reads.facts_by_uids(snapshot.user_id, uids[start : start + PAGE])}
        )
    return held


def held_messages(snapshot: GraphSnapshot, held: Mapping[str, Sequence[str]]) -> int:
    """How many of the snapshot's messages land on one the user holds (`held_episodes`)."""
    owned = {uid for uids in held.values() for uid in uids}
    return sum(p.uid in owned for p in snapshot.episodes)


def held_count(uids: Collection[str], owned: Collection[str]) -> int:
    """How many of `uids` are among `owned`."""
    owned = set(owned)
    return sum(uid in owned for uid in uids)
