"""Each user's predicates, and how many facts each relation holds: read once, and again
after `refresh_s` or when the user's graph is forgotten (deleted, loaded, imported). A write
adds its predicates at once; how many facts a relation it wrote holds is unknown until the
next read."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from engine.retrieval.predicates import base_relation
from engine.store.reads import Reads


@dataclass(slots=True)
class Relations:
    """One user's predicates, as last read."""

    since: float
    predicates: list[str]
    # facts per relation (`base_relation`) whose every fact was said in a message, of those
    # no later write touched
    said: dict[str, int]
    total: int  # facts of the user's graph as read
    facts_per_relation: float  # as read


class UserRelations:
    def __init__(self, reads: Reads, refresh_s: float) -> None:
        self.reads = reads
        self.refresh_s = refresh_s
        self._users: dict[str, Relations] = {}

    def of(self, user_id: str) -> tuple[Relations, bool]:
        """The user's relations, and whether they were read just now."""
        cached = self._users.get(user_id)
        if cached is not None and time.monotonic() - cached.since <= self.refresh_s:
            return cached, False
        per_predicate = self.reads.predicates(user_id)
        facts: Counter[str] = Counter()
        unsaid: set[str] = set()
        for predicate, (count, said) in per_predicate.items():
            facts[base_relation(predicate)] += count
            if said < count:
                unsaid.add(base_relation(predicate))
        said_only = {r: n for r, n in facts.items() if r not in unsaid}
        total = facts.total()
        mean = total / max(1, len(facts))
        read = Relations(time.monotonic(), sorted(per_predicate), said_only, total, mean)
        self._users[user_id] = read
        return read, True

    def written(self, user_id: str, predicates: frozenset[str]) -> None:
        """A write of facts of `predicates`: they join the list, their counts are unknown."""
        cached = self._users.get(user_id)
        if cached is not None and predicates:
            cached.predicates = sorted({*cached.predicates, *predicates})
            for predicate in predicates:
                cached.said.pop(base_relation(predicate), None)

    def forget(self, user_id: str) -> None:
        self._users.pop(user_id, None)
