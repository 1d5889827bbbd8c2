"""The stored facts an extraction contradicts, read when it is written: for an extractor that
needs the known facts only for that (`KnownAfter`, the offline one), in place of the
retriever's search before it that a prompt needs (more than half an offline add's time).

They are read in phase two, after the names are resolved and after the user's earlier adds
are written: an ingest prepares several messages of one user at once, and a message that
contradicts the one just before it would not find that one's facts in phase one. The facts read
are those from each new fact's subject to its object: every fact it can contradict, but another
value of a single-valued predicate, which the write ends itself (`add.changes`)."""

from __future__ import annotations

from engine.add.resolve import Resolved
from engine.extraction.schema import ExtractionOutcome, KnownAfter, KnownFact
from engine.store.reads import Reads
from engine.store.rows import fact_from_row


def with_contradicted(
    reads: Reads,
    extractor: KnownAfter,
    outcome: ExtractionOutcome,
    resolved: Resolved,
    name: str | None,
) -> tuple[list[KnownFact], ExtractionOutcome]:
    """The stored facts between the resolved ends of `outcome`'s facts, and `outcome` with
    those its facts contradict as its invalidations (`name`: the user's, as extracted)."""
    ends = [(resolved.uid(f.source), resolved.uid(f.target)) for f in outcome.extraction.facts]
    pairs = sorted({(s, o) for s, o in ends if s is not None and o is not None})
    known = facts_between(reads, resolved.user_id, pairs)
    return known, extractor.contradicted(outcome, known, user_name=name)


def facts_between(reads: Reads, user_id: str, pairs: list[tuple[str, str]]) -> list[KnownFact]:
    """The current stored facts from each (subject uid, object uid) of `pairs`."""
    if not pairs:
        return []
    params = {"user_id": user_id, "ends": [list(pair) for pair in pairs]}
    rows = reads.store.run("list_facts_between", params)
    return [
        KnownFact(id=f.uid, text=f.text, source=f.subject, predicate=f.predicate, target=f.object)
        for f in map(fact_from_row, rows)
    ]
