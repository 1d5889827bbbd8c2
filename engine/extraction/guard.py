"""What an extractor returned, made safe to write: the LLM is untrusted input.

The schema (`engine.extraction.schema`) checks shapes; this checks values, as the entry
points do for callers: names and aliases are cleaned like `add_facts` names (NFKC, control
characters and NUL bytes turned into spaces, at most `max_name_chars`), invalidation reasons
are cleaned and cut to `max_text_chars`, and an extraction with more facts (or entities, or
invalidations) than `max_facts_per_call` is refused whole, so the episode is kept as failed
rather than half-written. An unusable entity, alias or fact is left out and reported. The
user's declared types apply here (`engine.graph_types`): an undeclared entity type becomes
Thing, a fact under an undeclared relation is left out when only declared ones are wanted.
"""

from __future__ import annotations

from engine.config import Settings
from engine.errors import InvalidInputError
from engine.extraction.schema import (
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    ExtractionOutcome,
    Invalidation,
)
from engine.normalize import clean_text


def guard_outcome(
    outcome: ExtractionOutcome, settings: Settings
) -> tuple[ExtractionOutcome, list[str]]:
    """The outcome with only writable values, and what was left out (one line each)."""
    if outcome.error is not None:
        return outcome, []
    found = outcome.extraction
    limit = settings.max_facts_per_call
    sizes = {
        "facts": len(found.facts),
        "entities": len(found.entities),
        "invalidations": len(found.invalidations),
    }
    for what, size in sizes.items():
        if size > limit:
            error = (
                f"limit_exceeded: the extraction has {size} {what}; the limit is "
                f"{limit} (max_facts_per_call)"
            )
            return outcome.model_copy(update={"error": error, "extraction": Extraction()}), []
    errors: list[str] = []
    entities = [_entity(i, e, settings, errors) for i, e in enumerate(found.entities)]
    facts = [_fact(i, f, settings, errors) for i, f in enumerate(found.facts)]
    clean = Extraction(
        entities=[e for e in entities if e is not None],
        facts=[f for f in facts if f is not None],
        invalidations=[_invalidation(item, settings) for item in found.invalidations],
    )
    return outcome.model_copy(update={"extraction": clean}), errors


def _entity(
    index: int, entity: ExtractedEntity, settings: Settings, errors: list[str]
) -> ExtractedEntity | None:
    try:
        name = clean_text(entity.name, "entity name", settings.max_name_chars)
    except InvalidInputError as exc:
        errors.append(f"extracted entity #{index} left out: {exc}")
        return None
    aliases = []
    for alias in entity.aliases:
        try:
            aliases.append(clean_text(alias, "alias", settings.max_name_chars))
        except InvalidInputError as exc:
            errors.append(f"an alias of extracted entity #{index} ({name:.80}) left out: {exc}")
    kind = settings.graph_types.entity_type(_cut(entity.type, settings.max_name_chars)) or "Thing"
    return entity.model_copy(update={"name": name, "aliases": aliases, "type": kind})


def _fact(
    index: int, fact: ExtractedFact, settings: Settings, errors: list[str]
) -> ExtractedFact | None:
    try:
        source = clean_text(fact.source, "fact source", settings.max_name_chars)
        target = clean_text(fact.target, "fact target", settings.max_name_chars)
    except InvalidInputError as exc:
        errors.append(f"extracted fact #{index} left out: {exc}")
        return None
    # the predicate and the sentence are checked where they are used (changes.fact_row)
    predicate = fact.predicate[:256]
    if not settings.graph_types.allows(predicate):
        errors.append(
            f"extracted fact #{index} left out: its relation {predicate!r} is not declared "
            "(graph_types.only_declared_relations)"
        )
        return None
    return fact.model_copy(update={"source": source, "target": target, "predicate": predicate})


def _invalidation(item: Invalidation, settings: Settings) -> Invalidation:
    fact_id = _cut(item.fact_id, 256)
    reason = _cut(item.reason, settings.max_text_chars)
    return item.model_copy(update={"fact_id": fact_id, "reason": reason})


def _cut(text: str, limit: int) -> str:
    """`text` cleaned and cut to `limit` characters; "" when nothing is left."""
    try:
        return clean_text(text[: limit * 2], "text", limit * 2)[:limit]
    except InvalidInputError:
        return ""
