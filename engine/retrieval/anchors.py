"""Anchors: the entities a query names or means, found without an LLM."""

from __future__ import annotations

from dataclasses import dataclass

from engine.models import Entity
from engine.retrieval.query import Query
from engine.retrieval.terms import name_match, name_span, words
from engine.retrieval.tuning import AnchorParams, NameParams


@dataclass(frozen=True, slots=True)
class Anchor:
    entity: Entity
    score: float
    how: str  # "name", "vector", "self" or "near" (a name the search is near)
    span: frozenset[int] = frozenset()  # the query words the name takes
    exact: bool = False  # the query has the whole name, word for word, in one place


def find_anchors(
    query: Query,
    by_name: list[tuple[Entity, float]],
    by_vector: list[tuple[Entity, float]],
    settings: AnchorParams,
    names: NameParams,
    self_entity: Entity | None = None,
    relation_words: set[str] | None = None,
) -> list[Anchor]:
    """The fulltext (`by_name`) and vector (`by_vector`, with similarities) candidates, scored
    by how well the query names them. A name made only of `relation_words` ("director",
    "actors" as tags) is not an anchor while anything else is: those words ask for a relation.
    When no candidate reaches `min_score`, the best one down to `fallback_min_score` is the
    anchor (a question names something; a short name is weak evidence, not none)."""
    qwords = query.words
    found: dict[str, Anchor] = {}
    for entity, _ in by_name:
        score, span = max(name_span(n, qwords, names) for n in [entity.name, *entity.aliases])
        exact = bool(span) and qwords[min(span) : max(span) + 1] in [
            tuple(words(n)) for n in [entity.name, *entity.aliases]
        ]
        _keep(found, Anchor(entity, score, "name", span, exact))
    for entity, similarity in by_vector:
        cos = 2.0 * similarity - 1.0
        if cos >= settings.vector_min_cos:
            score = (cos - settings.vector_min_cos) / (1.0 - settings.vector_min_cos)
            named = name_match(entity.name, qwords, names)
            _keep(found, Anchor(entity, max(score, named), "vector"))
    if self_entity is not None and query.first_person:
        _keep(found, Anchor(self_entity, 1.0, "self"))
    relational = {i for i, w in enumerate(qwords) if w in (relation_words or set())}
    candidates = [a for a in found.values() if not (a.span and a.span <= relational)]
    kept = _select(candidates, settings, settings.min_score)
    if kept:
        return kept
    return _select(list(found.values()), settings, settings.fallback_min_score)[:1]


def with_near(anchors: list[Anchor], near: list[Entity], settings: AnchorParams) -> list[Anchor]:
    """`anchors` and the `near` entities (what the conversation is about, named by the
    caller) beside them, in place of a weak fallback anchor (below `min_score`)."""
    if not near:
        return anchors
    kept = [a for a in anchors if a.score >= settings.min_score]
    ids = {a.entity.uid for a in kept}
    return kept + [Anchor(e, 1.0, "near") for e in near if e.uid not in ids]


def _keep(found: dict[str, Anchor], anchor: Anchor) -> None:
    current = found.get(anchor.entity.uid)
    if current is None or anchor.score > current.score:
        found[anchor.entity.uid] = anchor


def _select(anchors: list[Anchor], settings: AnchorParams, min_score: float) -> list[Anchor]:
    anchors = [a for a in anchors if a.score >= min_score]
    if not anchors:
        return []
    anchors.sort(key=lambda a: (-a.score, -a.entity.mentions, a.entity.key))
    best = anchors[0].score
    kept: list[Anchor] = []
    taken: set[int] = set()
    for anchor in anchors:
        if anchor.span and anchor.span <= taken:
            continue  # its words already name a stronger anchor ("Glory" in "Morning Glory")
        apart = anchor.exact and not anchor.span & taken
        share = settings.relative_exact if apart else settings.relative
        if anchor.how != "self" and anchor.score < share * best:
            continue
        kept.append(anchor)
        taken |= anchor.span
    return kept[: settings.limit]
