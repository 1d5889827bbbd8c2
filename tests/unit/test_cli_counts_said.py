"""Counts in the command line's summaries and the MCP tools' answers read as English: one
fact, one new entity, one mention (`graphmem load` said "loaded 1 facts (2 new entities, 0
updated)" and "1 facts were already stored"; `list_entities` said "1 mentions"). No store is
needed."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from engine.cli.app import _load_text
from engine.knowledge import EntityView
from engine.load.run import LoadReport
from engine.mcp_server.tools import _entity_text, list_entities
from engine.memory import Memory
from engine.models import Entity, ScoredEntity


def test_a_load_of_one_fact_says_one_fact() -> None:
    one = LoadReport(path="kb.tsv", user_id="kb", format="tsv", facts_added=1, entities_added=1)
    more = one.model_copy(update={"facts_added": 2, "facts_already_stored": 1})

    assert _load_text(one).splitlines() == [
        "loaded 1 fact (1 new entity, 0 updated) for user 'kb' in 0.0 s (0.0 facts/s)",
        "0 facts were already stored",
    ]
    assert _load_text(more).splitlines()[1] == "1 fact was already stored"


class _Ranked:
    """The one call `list_entities` makes of a `Memory`."""

    def __init__(self, entities: list[Entity]) -> None:
        self.entities = entities

    def top_entities(self, user_id: str, k: int, **_: Any) -> list[ScoredEntity]:
        return [ScoredEntity(entity=e, score=1.0) for e in self.entities][:k]


def test_an_entity_mentioned_once_is_mentioned_once() -> None:
    seen = datetime(2024, 5, 1, tzinfo=UTC)
    tea = Entity(uid="n1", user_id="u", key="tea", name="Tea", mentions=1, last_seen=seen)

    listed = list_entities(cast(Memory, _Ranked([tea])), "u").text

    assert _entity_text(EntityView(entity=tea)).startswith("Tea, id n1: 1 mention, last seen")
    assert listed.splitlines()[1] == "1. Tea: 1 mention"
