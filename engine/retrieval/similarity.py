"""Each hit's cosine similarity to the query, and the floor a search may set on it.

The vector legs read the similarity of their neighbours for free; the other hits' (reached
by the graph, or by the words of a message alone) are read only when asked: a search with a
`min_similarity` (or `explain`) reads them for the hits it returns, in one read per kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, TypeVar

from engine.errors import InvalidInputError
from engine.models import ScoredEpisode, ScoredFact
from engine.store.reads import Reads

H = TypeVar("H", ScoredFact, ScoredEpisode)


def known(pairs: Sequence[tuple[str, float]]) -> dict[str, float]:
    """Cosines from a vector read's (uid, (1 + cos) / 2) pairs."""
    return {uid: 2.0 * unit - 1.0 for uid, unit in pairs}


def fill(
    reads: Reads,
    user_id: str,
    embedding: list[float] | None,
    facts: list[ScoredFact],
    episodes: list[ScoredEpisode],
    cosines: tuple[dict[str, float], dict[str, float]],
) -> None:
    """Set each hit's `similarity` from `cosines` (of facts, of messages); with `embedding`,
    read the missing ones from the store."""
    of_facts, of_episodes = cosines
    if embedding is not None:
        of_facts = of_facts | _missing(reads, "fact", user_id, embedding, facts, of_facts)
        of_episodes = of_episodes | _missing(
            reads, "episode", user_id, embedding, episodes, of_episodes
        )
    for fact in facts:
        fact.similarity = of_facts.get(fact.fact.uid)
    for episode in episodes:
        episode.similarity = of_episodes.get(episode.episode.uid)


def checked_floor(value: object, default: float | None) -> float | None:
    """`value` (or `default` when None) as a similarity floor.

    Raises:
        InvalidInputError: it is not a number from -1 to 1.
    """
    floor = default if value is None else value
    if floor is None:
        return None
    if isinstance(floor, bool) or not isinstance(floor, int | float) or not -1 <= floor <= 1:
        raise InvalidInputError(f"min_similarity must be a number from -1 to 1, got {floor!r}")
    return float(floor)


def above(hits: list[H], floor: float | None) -> list[H]:
    """The hits at least `floor` similar to the query (a hit with no embedding is not)."""
    if floor is None:
        return hits
    return [h for h in hits if h.similarity is not None and h.similarity >= floor]


def _missing(
    reads: Reads,
    kind: Literal["fact", "episode"],
    user_id: str,
    embedding: list[float],
    hits: Sequence[ScoredFact | ScoredEpisode],
    have: dict[str, float],
) -> dict[str, float]:
    uids = [_uid(h) for h in hits if _uid(h) not in have]
    if not uids:
        return {}
    return reads.similarities(kind, user_id, uids, embedding)


def _uid(hit: ScoredFact | ScoredEpisode) -> str:
    return hit.fact.uid if isinstance(hit, ScoredFact) else hit.episode.uid
