"""The entity knowledge store: what the graph knows about its entities over time.

It owns three things the rest of the engine reads:
- **mentions**: how often an entity or fact was said (`mentions` on both, counted by writes);
- **timelines**: an entity's facts and the episodes that mention it, newest first;
- **salience**: ONE formula for how much an entity or fact stands out, used by
  `Memory.top_entities` (`cypher/top_entities.cypher` computes the same expression in the
  database, checked against `salience` by the store tests) and by ranking (the fusion boost):

      salience = (log(1 + mentions) / log(1 + max(most, 1)) + 0.5 ** (age / half_life)) / 2

  `most` being the most mentions among what is compared; in [0, 1].
"""

from __future__ import annotations

import math

from pydantic import BaseModel, Field

from engine.models import Entity, Episode, Fact, ScoredEntity
from engine.store.base import RankBy
from engine.store.reads import Reads
from engine.uids import UID

RANKINGS: tuple[RankBy, ...] = ("salience", "frequency", "recency")
DAY_S = 86400.0
# what a name lookup may leave out when no key matches exactly ("Spider-Man", "spider man",
# "spiderman"); not "+", "#" or "&", which tell "C++", "C#" and "AT&T" from "C" and "ATT"
LOOSE_DROPPED = tuple(" -\u2010\u2011\u2013\u2014_.,'\u2019`\"/:!?")


def loose_key(key: str) -> str:
    """`key` without the characters of `LOOSE_DROPPED`."""
    for char in LOOSE_DROPPED:
        key = key.replace(char, "")
    return key


def salience(mentions: int, most: int, age: float | None, half_life: float) -> float:
    """Log-frequency against `most` and recency halving every `half_life` (same unit as
    `age`; no age: no recency), averaged. See the module docstring."""
    frequency = math.log1p(mentions) / math.log1p(max(most, 1))
    recency = 0.0 if age is None else 0.5 ** (max(0.0, age) / half_life)
    return (frequency + recency) / 2.0


class EntityView(BaseModel):
    """An entity with its facts and its timeline of episodes (newest first)."""

    entity: Entity
    facts: list[Fact] = Field(default_factory=list)
    episodes: list[Episode] = Field(default_factory=list)


def entity_view(
    reads: Reads,
    user_id: str,
    key: str,
    limit: int,
    window: tuple[float | None, float | None] = (None, None),
) -> EntityView | None:
    """The entity of that key or alias key with up to `limit` facts (valid or not) and
    episodes, those of `window` (since, until: epoch seconds or None; facts by when they
    became true, messages by when they were said, an undated one in no window); when none
    has it, the entity whose key reads the same without spaces, hyphens and punctuation
    (`loose_key`: "spiderman" finds "Spider-Man"), or the user's entity of that uid; None
    when the user has none of them."""
    found = reads.entities_by_keys(user_id, [key]).get(key)
    if found is None and UID.fullmatch(key):
        found = next(iter(reads.entities_by_uids(user_id, [key])), None)
    if found is None and loose_key(key):
        found = reads.entity_by_loose_key(user_id, loose_key(key), list(LOOSE_DROPPED))
    if found is None:
        return None
    facts = reads.entity_facts(user_id, found.uid, include_invalid=True, limit=limit, window=window)
    episodes = reads.entity_episodes(user_id, found.uid, limit, window)
    return EntityView(entity=found, facts=facts, episodes=episodes)


def top_entities(
    reads: Reads,
    user_id: str,
    k: int,
    by: RankBy,
    now: float,
    half_life_s: float,
    window: tuple[float | None, float | None] = (None, None),
) -> list[ScoredEntity]:
    """The user's `k` entities of highest salience (or mentions, or last mention time), of
    those written in `window` (since, until: epoch seconds or None; last seen at or after
    since, first seen at or before until)."""
    rows = reads.top_entities(user_id, k, by, now, half_life_s, window)
    return [ScoredEntity(entity=e, score=s) for e, s in rows]
