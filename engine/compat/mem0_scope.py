"""Whose memories a Mem0 call reads: Mem0's `user_id` / `agent_id` / `run_id` and `filters`
mapped onto graphmem's one graph per user.

The graph is the user's (`user_id`); with only an `agent_id` it is the agent's own graph
(`agent:<id>`), with only a `run_id` the run's (`run:<id>`). Those two prefixes are reserved:
a `user_id` that starts with one is refused, so no user can name an agent's graph (the mapping
is one-to-one). `agent_id`, `run_id` and metadata filters then narrow the graph to the facts
whose messages match.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import InvalidInputError
from engine.invisible import check_visible
from engine.metadata_filter import WILDCARD, Condition, condition
from engine.models import Episode
from engine.normalize import check_user_id, clean_text

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
RESERVED_PREFIXES = ("agent:", "run:")
_NO_WILDCARD_ID = (
    "{key}: Mem0's wildcard '*' is not supported for user_id, agent_id or run_id: the facade "
    "keeps one graph per user and reads one at a time; name the {key} (a metadata key may be "
    "'*')"
)


@dataclass(frozen=True)
class Scope:
    """Whose graph (`user`) and which of its messages (`agent_id`, `run_id`, `where`) a call
    reads."""

    user: str
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    where: tuple[Condition, ...] = ()

    @property
    def owner_name(self) -> str | None:
        """What the graph's owner is called in its memories: an agent's or a run's graph by
        the id the caller gave ("chef"), never by the graph's key ("agent:chef")."""
        if self.user_id is not None:
            return None
        return self.agent_id if self.agent_id is not None else self.run_id

    @property
    def narrowed(self) -> bool:
        return self.agent_id is not None or self.run_id is not None or bool(self.where)

    def admits_episode(self, episode: Episode) -> bool:
        return (
            (self.agent_id is None or episode.metadata.get("agent_id") == self.agent_id)
            and (self.run_id is None or episode.session_id == self.run_id)
            and all(c.holds(episode.metadata) for c in self.where)
        )

    def admits(self, episodes: list[Episode]) -> bool:
        return not self.narrowed or any(self.admits_episode(e) for e in episodes)


def _check_id(value: object, what: str) -> None:
    clean = clean_text(value, what, 256)
    if clean != value:
        raise InvalidInputError(
            f"{what} {value!r} is not in canonical form (NFKC, no control characters, single "
            "inner spaces, none around)"
        )
    check_visible(clean, what)


def check_mem0_user_id(user_id: object) -> str:
    """A Mem0 `user_id`, refused when it would name an agent's or a run's graph."""
    user = check_user_id(user_id)
    if user.startswith(RESERVED_PREFIXES):
        raise InvalidInputError(
            f"user_id {user!r} starts with {user.split(':')[0]!r}: the Mem0 facade keeps "
            "'agent:<id>' and 'run:<id>' for the graphs of agent_id=<id> and run_id=<id> "
            "(pass agent_id= or run_id= for those, or another user id)"
        )
    return user


def _entries(filters: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """The (key, value) conditions of `filters`, those of Mem0's `AND` lists among them."""
    for key, value in filters.items():
        if key != "AND":
            yield key, value
            continue
        if not isinstance(value, list | tuple) or not all(isinstance(v, Mapping) for v in value):
            raise InvalidInputError(f"filters: AND must be a list of dicts, got {value!r}")
        for item in value:
            yield from _entries(item)


def scope_of(
    user_id: str | None, agent_id: str | None, run_id: str | None, filters: Any = None
) -> Scope:
    """The scope of a call; `filters` may carry the ids too (Mem0's newer call shape) and
    metadata conditions (equality, '*', or one of eq/ne/in/nin), all of which must hold, also
    listed in Mem0's `{"AND": [{...}, ...]}`.

    Raises:
        InvalidInputError: no id at all, an unusable, reserved or wildcard ('*') id, or a
            filter graphmem cannot apply.
    """
    ids: dict[str, Any] = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    where: list[Condition] = []
    if filters and not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a dict, got {filters!r}")
    filtered: dict[str, Any] = {}
    for key, value in _entries(filters or {}):
        if key not in SCOPE_KEYS:
            where.append(condition(key, value))
        elif filtered.setdefault(key, value) != value:
            raise InvalidInputError(f"filters: {key} is given twice: {filtered[key]!r}, {value!r}")
    ids |= {k: v for k, v in filtered.items() if ids[k] is None}  # a keyword wins, as in Mem0
    for key in SCOPE_KEYS:
        if ids[key] == WILDCARD:
            raise InvalidInputError(_NO_WILDCARD_ID.format(key=key))
    for key in ("agent_id", "run_id"):
        if ids[key] is not None:
            _check_id(ids[key], key)
    if ids["user_id"] is not None:
        user = check_mem0_user_id(ids["user_id"])
    elif ids["agent_id"] is not None:
        user = f"agent:{ids['agent_id']}"
    elif ids["run_id"] is not None:
        user = f"run:{ids['run_id']}"
    else:
        raise InvalidInputError("at least one of user_id, agent_id or run_id is required")
    return Scope(check_user_id(user), ids["user_id"], ids["agent_id"], ids["run_id"], tuple(where))


def scope_or_none(user_id: str | None, agent_id: str | None, run_id: str | None) -> Scope | None:
    """The scope a call names, or None when it names none (an id used alone, as in Mem0)."""
    if user_id is None and agent_id is None and run_id is None:
        return None
    return scope_of(user_id, agent_id, run_id)


def owner_scope(user: str) -> Scope:
    """The scope of a graph's owner: the user, or the agent or run it was made for."""
    kind, _, rest = user.partition(":")
    if f"{kind}:" in RESERVED_PREFIXES and rest:
        return Scope(user, None, rest if kind == "agent" else None, rest if kind == "run" else None)
    return Scope(user, user, None, None)
