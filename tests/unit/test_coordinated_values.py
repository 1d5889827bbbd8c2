"""Values said in one coordination ("I live in Rome and Madrid") all hold: of the values of a
single-valued predicate one add says (`engine.add.changes.fact_changes`), none ends another
said with it, while one said after them still ends them. An empty store: nothing was known.
The extractions are as the offline extractor gives them (tests/integration/
test_offline_extractor.py checks it marks each coordination)."""

from __future__ import annotations

import pytest

from engine.add.changes import Changes, FactContext, fact_changes
from engine.add.resolve import Resolved
from engine.extraction.prompts import extraction_json_schema
from engine.extraction.schema import ExtractedFact, Extraction
from engine.models import Episode, Fact
from engine.normalize import entity_key
from engine.store.reads import Reads, Window
from engine.testing import HashEmbedder

SINGLE_VALUED = ["LIVES_IN", "WORKS_AT"]
SAID_AT = 1_700_000_000.0


class EmptyStore(Reads):
    """The reads of a store holding nothing for the user."""

    def __init__(self) -> None:
        pass

    def facts_by_uids(self, user_id: str, uids: list[str]) -> list[Fact]:
        return []

    def entity_facts(
        self,
        user_id: str,
        uid: str,
        *,
        include_invalid: bool,
        limit: int,
        window: Window = (None, None),
    ) -> list[Fact]:
        return []

    def episodes_by_uids(self, user_id: str, uids: list[str]) -> list[Episode]:
        return []


def _fact(source: str, predicate: str, target: str, said_with: str | None = None) -> ExtractedFact:
    text = f"{source} {predicate.lower().replace('_', ' ')} {target}"
    return ExtractedFact(
        source=source, predicate=predicate, target=target, fact=text, said_with=said_with
    )


def _write(*facts: ExtractedFact) -> tuple[Changes, dict[str, str]]:
    """The changes of one add of one message saying `facts`; and each fact's uid by target."""
    names = {n for f in facts for n in (f.source, f.target)}
    resolved = Resolved(uid_of={entity_key(n): f"e-{entity_key(n)}" for n in names})
    ctx = FactContext("u", resolved, lambda s, o: "m1", 1000, SAID_AT + 5, {"m1": SAID_AT})
    changes = fact_changes(
        EmptyStore(), HashEmbedder(16), Extraction(facts=list(facts)), ctx,
        known_ids=set(), single_valued=SINGLE_VALUED,
    )  # fmt: skip
    uids = {changes.facts[u].text.rsplit(" ", 1)[-1]: u for u in changes.facts}
    return changes, uids


@pytest.mark.parametrize(
    "subject, predicate, targets",
    [
        ("USER", "LIVES_IN", ["Rome", "Madrid"]),  # I live in Rome and Madrid
        ("Alice", "WORKS_AT", ["Google", "Microsoft", "Apple"]),  # ... Google, Microsoft and Apple
        ("USER", "WORKS_AT", ["Google", "Microsoft"]),  # I work at both Google and Microsoft
    ],
)
def test_values_said_in_one_coordination_all_stay_current(
    subject: str, predicate: str, targets: list[str]
) -> None:
    changes, uids = _write(*(_fact(subject, predicate, t, "m:3") for t in targets))
    assert sorted(uids) == sorted(targets)
    assert changes.invalidate == {} and changes.ended_at == {}
    assert [h for h in changes.history if h.event == "INVALIDATE"] == []


def test_two_values_said_one_after_the_other_still_leave_the_last_current() -> None:
    """'I live in Rome. I live in Madrid.': Rome is history, ended when Madrid began."""
    changes, uids = _write(_fact("USER", "LIVES_IN", "Rome"), _fact("USER", "LIVES_IN", "Madrid"))
    assert list(changes.invalidate) == [uids["Rome"]]
    assert changes.ended_at == {uids["Rome"]: SAID_AT}


def test_a_value_said_after_a_coordination_ends_each_of_its_values() -> None:
    """'I live in Rome and Madrid. Now I live in Paris.'"""
    changes, uids = _write(
        _fact("USER", "LIVES_IN", "Rome", "m:3"),
        _fact("USER", "LIVES_IN", "Madrid", "m:3"),
        _fact("USER", "LIVES_IN", "Paris"),
    )
    assert set(changes.invalidate) == {uids["Rome"], uids["Madrid"]}
    assert set(changes.invalidate.values()) == {"replaced by: USER lives in Paris"}


def test_a_coordination_said_after_a_value_ends_it_and_keeps_its_own() -> None:
    """'I live in Paris. Now I live in Rome and Madrid.'"""
    changes, uids = _write(
        _fact("USER", "LIVES_IN", "Paris"),
        _fact("USER", "LIVES_IN", "Rome", "m:9"),
        _fact("USER", "LIVES_IN", "Madrid", "m:9"),
    )
    assert list(changes.invalidate) == [uids["Paris"]]


def test_values_of_two_coordinations_are_not_said_together() -> None:
    """'I live in Rome and Oslo. I live in Madrid and Lima.': the second pair is current."""
    changes, uids = _write(
        *(_fact("USER", "LIVES_IN", t, "m:3") for t in ("Rome", "Oslo")),
        *(_fact("USER", "LIVES_IN", t, "m:9") for t in ("Madrid", "Lima")),
    )
    assert set(changes.invalidate) == {uids["Rome"], uids["Oslo"]}


def test_opposites_said_one_after_the_other_still_leave_the_last_current() -> None:
    """'I like tennis. I don't like tennis.' (the coordination marks change nothing there)."""
    changes, _ = _write(
        _fact("USER", "LIKES", "tennis", "m:3"), _fact("USER", "DOES_NOT_LIKE", "tennis")
    )
    [ended] = changes.invalidate
    assert changes.facts[ended].predicate == "LIKES" and changes.ended_at == {ended: SAID_AT}


def test_the_llm_is_not_asked_for_the_coordination_mark() -> None:
    """Its tool schema is as before: an LLM's facts are ended as they were."""
    fact = extraction_json_schema(strict=True)["$defs"]["ExtractedFact"]
    assert "said_with" not in fact["properties"] and "said_with" not in fact["required"]
    assert {"source", "predicate", "target", "fact", "valid_at"} <= set(fact["properties"])
