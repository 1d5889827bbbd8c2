"""What kind of entity a relation leads to, told by the entities it leads to.

A question asks for a kind of thing ("in which *country* was X born"), and the relation whose
name says so (`NATIONALITY`) is often not the last step of the path that answers
(`PLACE_OF_BIRTH > CONTAINED_BY`). But `CONTAINED_BY` leads to the entities `NATIONALITY`
leads to: countries. So a relation answers for the asked kind by the share of its ends (a
sample) that are ends of the relation naming the kind. The end a relation's name speaks of is
its object ("nationality": a country), or its subject when the name ends in "of" ("city of":
the city). A relation's end is its object, its subject for an `_INVERSE` twin.

The same samples tell which relations a path along a relation can go on with (those met at
the end it arrives at: a firm that makes X has a chief executive, X's sister products none),
and which relation another stores reversed ("X PARENTS Y" is also stored as
"Y CHILDREN X"): walked backwards, such a relation means its twin (from X, PARENTS backwards
leads to X's children), so where both join two entities the walk keeps the twin's step
forwards only (`reach.one_per_pair`).

Samples are read once per user and relation, again after `refresh_s` or when the user's graph
is forgotten (deleted, loaded, imported).
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.normalize import predicate_words
from engine.retrieval.background import BACKGROUND
from engine.retrieval.predicates import Ends, RelationMatch, base_relation
from engine.retrieval.tuning import RelationParams
from engine.store.reads import Met, Reads

# per end of a relation (True: its subjects), the relations met there, each with whether the
# entity is their subject
Follows = dict[bool, frozenset[Met]]
_USERS_KEPT = 256  # users whose samples are kept (the most recent ones, as a bound)


@dataclass(slots=True)
class _UserEnds:
    since: float
    pairs: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # sampled facts
    # relation -> facts checked for a twin: any of those read, not the first of each entity
    mixed: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    shares: dict[tuple[str, str], float] = field(default_factory=dict)  # (kind, relation)
    twins: dict[str, str | None] = field(default_factory=dict)  # relation -> reversed twin
    # relation -> what is met at each of its ends (an end too large to read left out)
    follows: dict[str, Follows] = field(default_factory=dict)

    def ends(self, relation: str) -> list[str]:
        """What the sampled facts of `relation` lead to."""
        return list(dict.fromkeys(obj for _, obj in self.pairs[relation]))


class RelationEnds:
    """Per user: a sample of each relation's facts; from it, which relations lead to the
    entities a kind-naming relation leads to, and which relation another stores reversed."""

    def __init__(self, reads: Reads, params: RelationParams) -> None:
        self.reads = reads
        self.params = params
        self._users: dict[str, _UserEnds] = {}

    def forget(self, user_id: str) -> None:
        self._users.pop(user_id, None)

    def ends(
        self, user_id: str, match: RelationMatch, relations: list[str], predicates: Sequence[str]
    ) -> Ends:
        """`shares`, `twins` and `follows` of `relations` from one sample; the twins' read
        runs while the other two read theirs."""
        user = self._user(user_id)
        self._sample(user_id, user, relations, predicates)
        twins = BACKGROUND.submit(self._twins, user_id, user, relations)
        shares = self._shares(user_id, user, match, relations, predicates)
        follows = self._follows(user_id, user, relations)
        return Ends(shares, twins.result(), follows)

    def shares(
        self, user_id: str, match: RelationMatch, relations: list[str], predicates: Sequence[str]
    ) -> dict[str, float]:
        """For `relations` (those most likely to end a path of `match`), the share of their
        sampled ends that are what the relation naming the asked kind speaks of; empty when
        the question names no kind."""
        user = self._user(user_id)
        return self._shares(user_id, user, match, relations, predicates)

    def _shares(
        self,
        user_id: str,
        user: _UserEnds,
        match: RelationMatch,
        relations: list[str],
        predicates: Sequence[str],
    ) -> dict[str, float]:
        kind = match.kind_relation()
        if kind is None:
            return {}
        missing = [r for r in relations if (kind, r) not in user.shares]
        if missing:
            of_kind = self._of_kind(user_id, user, kind, missing, predicates)
            for r in missing:
                ends = user.ends(r)
                user.shares[(kind, r)] = len(of_kind.intersection(ends)) / max(1, len(ends))
        return {r: user.shares[(kind, r)] for r in relations}

    def at_end(
        self, user_id: str, uids: list[str], relation: str, predicates: Sequence[str]
    ) -> set[str]:
        """Those of `uids` that are what `relation` leads to, at the end its name speaks of."""
        subjects = predicate_words(relation).endswith(" of")
        found: set[str] = set()
        for predicate, twin in _stored(relation, predicates):
            found |= self.reads.at_relation_end(user_id, uids, predicate, subjects=subjects != twin)
        return found

    def _user(self, user_id: str) -> _UserEnds:
        user = self._users.get(user_id)
        now = time.monotonic()
        if user is None or now - user.since > self.params.refresh_s:
            if len(self._users) >= _USERS_KEPT:
                self._users.clear()
            user = self._users[user_id] = _UserEnds(now)
        return user

    def _of_kind(
        self,
        user_id: str,
        user: _UserEnds,
        kind: str,
        relations: list[str],
        predicates: Sequence[str],
    ) -> set[str]:
        """The sampled ends of `relations` that are what the `kind` relation speaks of."""
        self._sample(user_id, user, relations, predicates)
        uids = sorted({uid for r in relations for uid in user.ends(r)})
        return self.at_end(user_id, uids, kind, predicates)

    def _sample(
        self, user_id: str, user: _UserEnds, relations: list[str], predicates: Sequence[str]
    ) -> None:
        """Sample the facts of `relations` not sampled yet, each as (subject, object) in the
        relation's own direction (an `_INVERSE` twin's turned round)."""
        stored = {r: list(_stored(r, predicates)) for r in relations if r not in user.pairs}
        wanted = [predicate for found in stored.values() for predicate, _ in found]
        read = self.reads.relation_ends(user_id, wanted, self.params.kind_read)
        for relation, found in stored.items():
            pairs: dict[tuple[str, str], None] = {}
            for predicate, twin in found:
                pairs.update(((o, s) if twin else (s, o), None) for s, o in read[predicate])
            # in an order of their own, not the store's: the first facts written of a relation
            # may all be alike (a family's youngest children, none married yet)
            user.pairs[relation] = _spread(sorted(pairs, key=_shuffled), self.params.kind_sample)
            user.mixed[relation] = sorted(pairs, key=_shuffled)[: self.params.twin_sample]

    def twins(
        self, user_id: str, relations: list[str], predicates: Sequence[str]
    ) -> dict[str, str]:
        """The relations of `relations` that another stores reversed ("X PARENTS Y" is also
        "Y CHILDREN X"), each with that twin: when nearly all of its sampled facts, and at
        least `twin_min_facts`, are stored the other way round under the twin's name."""
        user = self._user(user_id)
        self._sample(user_id, user, relations, predicates)
        return self._twins(user_id, user, relations)

    def _twins(self, user_id: str, user: _UserEnds, relations: list[str]) -> dict[str, str]:
        """`twins` of `relations`, sampled already."""
        missing = [r for r in relations if r not in user.twins]
        if missing:
            checked = {r: user.mixed[r] for r in missing}
            enough = self.params.twin_min_facts  # fewer facts make no twin: nothing to read
            asked = [(r, s, o) for r, ps in checked.items() if len(ps) >= enough for s, o in ps]
            found = self.reads.reversed_facts(user_id, asked)
            for r, pairs in checked.items():
                user.twins[r] = self._twin(r, len(pairs), found.get(r, {}))
        return {r: twin for r in relations if (twin := user.twins[r]) is not None}

    def follows(
        self, user_id: str, relations: list[str], predicates: Sequence[str]
    ) -> dict[str, Follows]:
        """For `relations`, what is met at each end of their sampled facts (True: at their
        subjects): the relations there, each with the end the entity is at. A path arriving
        at an end can go on only with what is met there: a musician's band has a hometown, a
        musician has none; a firm that makes X has a chief executive, the other products it
        makes have none. An end with an entity too large to read (`follows_read`) is left
        out: unlimited."""
        user = self._user(user_id)
        self._sample(user_id, user, relations, predicates)
        return self._follows(user_id, user, relations)

    def _follows(self, user_id: str, user: _UserEnds, relations: list[str]) -> dict[str, Follows]:
        """`follows` of `relations`, sampled already."""
        missing = [r for r in relations if r not in user.follows]
        if missing:
            ends = {
                (r, at): {pair[0 if at else 1] for pair in user.pairs[r]}
                for r in missing
                for at in (True, False)
            }
            nodes = sorted(set().union(*ends.values()))
            met = self.reads.relation_types_by_end(user_id, nodes, self.params.follows_read)
            small = set(met)  # a node left out is larger than `follows_read`
            for r in missing:
                user.follows[r] = {
                    at: frozenset(_as_relation(m) for n in ends[(r, at)] for m in met.get(n, ()))
                    for at in (True, False)
                    if not ends[(r, at)] - small
                }
        return {r: after for r in relations if (after := user.follows[r])}

    def _twin(self, relation: str, sampled: int, reversed_by: dict[str, int]) -> str | None:
        facts: dict[str, int] = {}
        for predicate, n in reversed_by.items():
            base = base_relation(predicate)
            if base != relation:
                facts[base] = facts.get(base, 0) + n
        best = max(facts, key=lambda b: (facts[b], b), default=None)
        if best is None or sampled < self.params.twin_min_facts:
            return None
        return best if facts[best] >= self.params.twin_share * sampled else None


def _stored(relation: str, predicates: Sequence[str]) -> list[tuple[str, bool]]:
    """The predicates storing `relation`, each with whether it is an `_INVERSE` twin (which
    runs the other way)."""
    return _by_relation(tuple(predicates)).get(relation, [])


@functools.lru_cache(maxsize=_USERS_KEPT)
def _by_relation(predicates: tuple[str, ...]) -> dict[str, list[tuple[str, bool]]]:
    """`_stored` of every relation of `predicates` (a user's: folded once, not per call)."""
    found: dict[str, list[tuple[str, bool]]] = {}
    for predicate in predicates:
        relation = base_relation(predicate)
        found.setdefault(relation, []).append((predicate, predicate != relation))
    return found


def _as_relation(met: Met) -> Met:
    """A predicate met at an entity as its relation: an `_INVERSE` twin's end turned round."""
    predicate, subject = met
    relation = base_relation(predicate)
    return relation, subject if relation == predicate else not subject


def _shuffled(pair: tuple[str, str]) -> bytes:
    """An order of pairs that neither storage nor the order of writing decides: the first
    pair of each entity is often a special one (a party's first member is its chair)."""
    return hashlib.blake2b("\x00".join(pair).encode()).digest()


def _spread(pairs: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """Up to `k` of `pairs`, first those joining two entities met in no pair before."""
    met: set[str] = set()
    fresh: list[tuple[str, str]] = []
    again: list[tuple[str, str]] = []
    for pair in pairs:
        (again if met.intersection(pair) else fresh).append(pair)
        met.update(pair)
    return (fresh + again)[:k]
