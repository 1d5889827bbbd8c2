"""Metadata filters on search (Mem0's `filters`): keep the hits whose messages' `metadata`
match every condition.

A condition is `{key: value}` (equality), `{key: "*"}` (Mem0's wildcard: the key is there with
a value other than None) or `{key: {"eq"|"ne"|"in"|"nin": value}}`; all must hold. A message
without the key passes only "ne" and "nin". A fact passes when one of the
messages it came from does; a message hit by its own metadata. The messages are read by uid
inside the asking user's graph (uids and user as query parameters), so a filter never looks
at another user's messages; paths keep only the facts that passed, entities only those the
kept facts name. A search asks for `OVER_FETCH` times the hits wanted, and again as many
times more while too few pass and the user has more (`search_matching`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from engine.errors import InvalidInputError
from engine.models import Episode, SearchResult
from engine.store.reads import Reads

OVER_FETCH = 4  # candidates asked per hit wanted: a filter drops some
R = TypeVar("R")
_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda have, want: have == want,
    "ne": lambda have, want: have != want,
    "in": lambda have, want: have in want,
    "nin": lambda have, want: have not in want,
    "exists": lambda have, _: have is not None,
}
WILDCARD = "*"  # Mem0's "any value" (`{"category": "*"}`)
_COMPARISONS = ("eq", "ne", "in", "nin")


@dataclass(frozen=True)
class Condition:
    """One metadata filter: the message's `metadata[key]` compared with `value` by `op`."""

    key: str
    op: str
    value: Any

    def holds(self, metadata: Mapping[str, Any]) -> bool:
        if self.key not in metadata:
            return self.op in ("ne", "nin")
        return _OPERATORS[self.op](metadata[self.key], self.value)


def condition(key: Any, value: Any) -> Condition:
    """One `filters` entry as a condition.

    Raises:
        InvalidInputError: a key that is no metadata key, or an operator graphmem lacks.
    """
    if not isinstance(key, str) or not key or key.upper() in ("AND", "OR", "NOT"):
        raise InvalidInputError(
            f"filters: {key!r} is not supported; give metadata keys with a value (or "
            "'*', or {'eq'|'ne'|'in'|'nin': value}), all of which must hold"
        )
    if isinstance(value, str) and value == WILDCARD:
        return Condition(key, "exists", None)
    if not isinstance(value, Mapping):
        return Condition(key, "eq", value)
    if len(value) != 1 or next(iter(value)) not in _COMPARISONS:
        raise InvalidInputError(
            f"filters[{key!r}]: only one of {', '.join(_COMPARISONS)} is supported, got {value!r}"
        )
    ((op, operand),) = value.items()
    if op in ("in", "nin") and not isinstance(operand, list | tuple | set | frozenset):
        raise InvalidInputError(f"filters[{key!r}][{op!r}] must be a list, got {operand!r}")
    return Condition(key, op, operand)


def parse_filters(filters: object) -> tuple[Condition, ...]:
    """`search`'s `filters` as conditions (none for None or an empty dict).

    Raises:
        InvalidInputError: not a dict, or an entry `condition` refuses.
    """
    if filters is None:
        return ()
    if not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a dict, got {filters!r}")
    return tuple(condition(key, value) for key, value in filters.items())


def admitted(episode: Episode, where: tuple[Condition, ...]) -> bool:
    return all(c.holds(episode.metadata) for c in where)


def keep_matching(
    result: SearchResult, where: tuple[Condition, ...], reads: Reads, limit: int
) -> SearchResult:
    """`result` with only the hits `where` admits, `limit` facts and `limit` messages."""
    if not where:
        return result
    uids = {uid for hit in result.facts for uid in hit.fact.episodes}
    uids |= {hit.episode.uid for hit in result.episodes}
    read = reads.episodes_by_uids(result.user_id, sorted(uids))
    passing = {e.uid for e in read if admitted(e, where)}
    facts = [h for h in result.facts if passing.intersection(h.fact.episodes)][:limit]
    kept = {h.fact.uid for h in facts}
    named = {uid for h in facts for uid in (h.fact.subject_uid, h.fact.object_uid)}
    return result.model_copy(
        update={
            "facts": facts,
            "episodes": [h for h in result.episodes if h.episode.uid in passing][:limit],
            "paths": [p for p in result.paths if all(f.uid in kept for f in p.facts)],
            "entities": [s for s in result.entities if s.entity.uid in named],
        }
    )


def widened(
    search: Callable[[int], R], enough: Callable[[R, int], bool], first: int, most: int
) -> R:
    """`search(k)` for k = `first`, then `OVER_FETCH` times more (up to `most`) until
    `enough(result, k)`: what a filter keeps of a user's best hits may all rank below them."""
    asked = min(most, first)
    while True:
        result = search(asked)
        if asked >= most or enough(result, asked):
            return result
        asked = min(most, asked * OVER_FETCH)


def search_matching(
    search: Callable[[int], SearchResult],
    where: tuple[Condition, ...],
    reads: Reads,
    limit: int,
    most: int,
) -> SearchResult:
    """`search(k)` (k hits of each kind) kept to what `where` admits, `widened` while fewer
    than `limit` of a kind it returned pass and it returned as many as asked (the user may
    hold more)."""
    if not where:
        return search(limit)

    def passing(k: int) -> tuple[SearchResult, SearchResult]:
        result = search(k)
        return result, keep_matching(result, where, reads, limit)

    def enough(found: tuple[SearchResult, SearchResult], k: int) -> bool:
        result, kept = found
        lists = ((kept.facts, result.facts), (kept.episodes, result.episodes))
        return not any(len(got) >= k for passed, got in lists if got and len(passed) < limit)

    return widened(passing, enough, limit * OVER_FETCH, most)[1]
