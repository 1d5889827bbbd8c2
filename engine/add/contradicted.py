"""The stored facts an extraction contradicts, read after it: for an extractor that needs the
known facts only for that (`KnownAfter`, the offline one), in place of the retriever's search
before it that a prompt needs (more than half an offline add's time). The facts read are those
from each new fact's subject to its object, both stored: every fact it can contradict, but
another value of a single-valued predicate, which the write ends itself (`add.changes`)."""

from __future__ import annotations

from engine.add.resolve import SELF_KEYS
from engine.extraction.schema import ExtractedFact, ExtractionOutcome, KnownAfter, KnownFact
from engine.normalize import entity_key
from engine.store.reads import Reads
from engine.store.rows import fact_from_row
from engine.uids import self_uid


def with_contradicted(
    reads: Reads, user_id: str, extractor: KnownAfter, outcome: ExtractionOutcome, name: str | None
) -> tuple[list[KnownFact], ExtractionOutcome]:
    """The known facts between the ends of `outcome`'s facts, and `outcome` with those its
    facts contradict as its invalidations."""
    known = facts_between(reads, user_id, outcome.extraction.facts, name)
    return known, extractor.contradicted(outcome, known, user_name=name)


def facts_between(
    reads: Reads, user_id: str, facts: list[ExtractedFact], name: str | None
) -> list[KnownFact]:
    """The current stored facts from each of `facts`' subjects to its object ("USER", "I" and
    the user's `name` are the user's own entity)."""
    own = SELF_KEYS | ({entity_key(name)} if name else set())
    keys = {entity_key(n) for f in facts for n in (f.source, f.target)} - own
    stored = reads.entities_by_keys(user_id, sorted(keys)) if keys else {}
    found = {key: entity.uid for key, entity in stored.items()}
    found |= dict.fromkeys(own, self_uid(user_id))
    ends = [(found.get(entity_key(f.source)), found.get(entity_key(f.target))) for f in facts]
    pairs = sorted({(s, o) for s, o in ends if s is not None and o is not None})
    if not pairs:
        return []
    params = {"user_id": user_id, "ends": [list(pair) for pair in pairs]}
    rows = reads.store.run("list_facts_between", params)
    return [
        KnownFact(id=f.uid, text=f.text, source=f.subject, predicate=f.predicate, target=f.object)
        for f in map(fact_from_row, rows)
    ]
