"""Each user's predicates, how many facts the graph's relations hold, and whether every fact
was said in a message: read on the user's first search and when the user's graph is forgotten
(deleted, loaded, imported); once older than `refresh_s`, read again aside (`BACKGROUND.aside`)
after a search, while the searches go on with what was read: the read scans every fact of the
user (40-53 ms for MetaQA's 128k, benchmarks/results/dual_tail_reads.md), which a host
searching a user less often than every `refresh_s` paid in every search. A write adds its
predicates and the facts it created at once. The `most` users searched last are kept: a host
meeting many users does not grow with them."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass

from engine.recent import Recent
from engine.retrieval.background import BACKGROUND
from engine.retrieval.predicates import base_relation
from engine.retrieval.tuning import ExpansionParams
from engine.store.base import Written
from engine.store.reads import Reads

log = logging.getLogger(__name__)


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
    refreshing: bool = False  # read again aside
    writes: int = 0  # this process's writes since the read


class UserRelations:
    def __init__(self, reads: Reads, refresh_s: float, most: int) -> None:
        self.reads = reads
        self.refresh_s = refresh_s
        self._users: Recent[Relations] = Recent(most)
        self._forgetting = threading.Lock()  # a refresh read before `forget` is not kept
        self._claiming = threading.Lock()  # one search of those ending together refreshes

    def of(self, user_id: str) -> Relations:
        """The user's relations: read now on the user's first search, else as last read."""
        cached = self._users.one(user_id)
        if cached is None:
            cached = self._read(user_id)
            self._users.put({user_id: cached})
        return cached

    def refresh_if_stale(self, user_id: str) -> None:
        """Read the user's relations again aside when older than `refresh_s`: called as a
        search ends, so that the read (a scan of the user's facts) runs while the caller
        reads the result, not beside the search's own reads."""
        cached = self._users.one(user_id)
        with self._claiming:
            if cached is None or cached.refreshing:
                return
            if time.monotonic() - cached.since <= self.refresh_s:
                return
            cached.refreshing = True
        BACKGROUND.aside(self._refresh, user_id, cached)

    def written(self, user_id: str, written: Written) -> None:
        """A write: its predicates join the list, the facts it created the counts (a graph
        read small is counted as it grows, not as read until `refresh_s`); facts written
        without messages were not said."""
        cached = self._users.one(user_id)
        if cached is not None and written.predicates:
            cached.predicates = sorted({*cached.predicates, *written.predicates})
            cached.total += len(written.added)
            relations = {base_relation(p) for p in cached.predicates}
            cached.facts_per_relation = cached.total / max(1, len(relations))
            cached.all_said = cached.all_said and bool(written.episodes)
            cached.writes += 1

    def forget(self, user_id: str) -> None:
        with self._forgetting:
            self._users.pop(user_id)

    def _read(self, user_id: str) -> Relations:
        per_predicate = self.reads.predicates(user_id)
        relations = {base_relation(predicate) for predicate in per_predicate}
        total = sum(facts for facts, _ in per_predicate.values())
        said = all(said == facts for facts, said in per_predicate.values())
        mean = total / max(1, len(relations))
        return Relations(time.monotonic(), sorted(per_predicate), total, mean, said)

    def _refresh(self, user_id: str, old: Relations) -> None:
        """`old` replaced by a new read, unless the user was forgotten meanwhile; what this
        process wrote during the read is kept in it (the read may not have seen it)."""
        writes = old.writes
        try:
            read = self._read(user_id)
        except Exception:  # a search reports the store's trouble; this one tries again later
            log.debug("reading the relations of %s failed", user_id, exc_info=True)
            old.since, old.refreshing = time.monotonic(), False
            return
        if old.writes != writes:
            read.predicates = sorted({*read.predicates, *old.predicates})
            read.all_said = read.all_said and old.all_said
        with self._forgetting:
            if self._users.one(user_id) is old:
                self._users.put({user_id: read})


def of_one_offs(counted: Relations, params: ExpansionParams) -> bool:
    """Whether the user's graph is of one-off relations said in messages: hundreds of facts,
    every one said in a message, its relations holding a handful each on average (an offline
    extractor's chat: `IS_TO_GO_TO_DO`, 2-3 facts a relation against hundreds in a knowledge
    graph). A relation there is the sentence's own words: matching a question to it and
    walking it finds what the semantic and episode legs find by the facts' and messages' own
    text (benchmarks/results/one_off_walk.md)."""
    few, large = params.one_off_facts, params.one_off_graph
    return counted.all_said and counted.total >= large and counted.facts_per_relation < few
