"""Each user's predicates, how many facts the graph's relations hold, and whether every fact
was said in a message: read once, and again after `refresh_s` or when the user's graph is
forgotten (deleted, loaded, imported). A write adds its predicates at once. The `most` users
searched last are kept: a host meeting many users does not grow with them."""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine.recent import Recent
from engine.retrieval.predicates import base_relation
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import Written
from engine.store.reads import Reads


@dataclass(slots=True)
class Relations:
    """One user's predicates, as last read."""

    since: float
    predicates: list[str]
    total: int  # facts of the user's graph as read
    facts_per_relation: float  # as read
    # every fact was said in a message, none loaded or added as a fact (since the read: none
    # written by a write without messages)
    all_said: bool
    vectors_loaded: bool = False  # the stored vectors of its relations' names


class UserRelations:
    def __init__(self, reads: Reads, refresh_s: float, most: int) -> None:
        self.reads = reads
        self.refresh_s = refresh_s
        self._users: Recent[Relations] = Recent(most)

    def of(self, user_id: str) -> Relations:
        """The user's relations, read again when older than `refresh_s`."""
        cached = self._users.one(user_id)
        if cached is not None and time.monotonic() - cached.since <= self.refresh_s:
            return cached
        per_predicate = self.reads.predicates(user_id)
        relations = {base_relation(predicate) for predicate in per_predicate}
        total = sum(facts for facts, _ in per_predicate.values())
        said = all(said == facts for facts, said in per_predicate.values())
        mean = total / max(1, len(relations))
        read = Relations(time.monotonic(), sorted(per_predicate), total, mean, said)
        self._users.put({user_id: read})
        return read

    def written(self, user_id: str, written: Written) -> None:
        """A write: its predicates join the list; facts written without messages were not
        said."""
        cached = self._users.one(user_id)
        if cached is not None and written.predicates:
            cached.predicates = sorted({*cached.predicates, *written.predicates})
            cached.all_said = cached.all_said and bool(written.episodes)

    def forget(self, user_id: str) -> None:
        self._users.pop(user_id)


def of_one_offs(counted: Relations, params: ExpansionParams) -> bool:
    """Whether the user's graph is of one-off relations said in messages: hundreds of facts,
    every one said in a message, its relations holding a handful each on average (an offline
    extractor's chat: `IS_TO_GO_TO_DO`, 2-3 facts a relation against hundreds in a knowledge
    graph). A relation there is the sentence's own words: matching a question to it and
    walking it finds what the semantic and episode legs find by the facts' and messages' own
    text (benchmarks/results/one_off_walk.md)."""
    few, large = params.one_off_facts, params.one_off_graph
    return counted.all_said and counted.total >= large and counted.facts_per_relation < few
