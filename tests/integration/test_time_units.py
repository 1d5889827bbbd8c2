"""A fact's time keeps how precisely it is known, in the store and through every door.

"I moved to Lisbon last year." said on 2026-12-07 is stored as 2025-12-07 (time windows and
ranking read that date), known to the year: it reads back as a year, prints as "[2025]",
survives an export and an import, and a merge that keeps its date keeps its unit. A date
set by hand (`update`) is a day; an export written before units existed imports as days.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from falkordb import FalkorDB

from engine.errors import InvalidInputError
from engine.memory import Memory
from engine.models import Fact
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.testing import HashEmbedder
from engine.testing.scripted_llm import ScriptedLLM, tool_call
from tests.integration.reliability.helpers import llm_memory

SAID = datetime(2026, 12, 7, 10, 30, tzinfo=UTC)
_graphs = itertools.count()


def _fact(target: str, predicate: str, at: str | None, unit: str | None = None) -> dict[str, Any]:
    fact = {"source": "Kate", "predicate": predicate, "target": target, "valid_at": at}
    fact["fact"] = f"Kate {predicate.lower().replace('_', ' ')} {target}"
    return fact if unit is None else {**fact, "valid_unit": unit}


FACTS = [
    _fact("Lisbon", "MOVED_TO", "2025-12-07T00:00:00Z", "year"),
    _fact("pottery", "STARTED", "2026-11-07T00:00:00Z", "month"),
    _fact("Rome", "VISITED", "2026-11-30T00:00:00Z", "week"),
    _fact("a cat", "ADOPTED", "2026-12-06T00:00:00Z", "day"),
    _fact("Porto", "LOVES", "2026-12-05T00:00:00Z"),  # a reply without the field: a day
    _fact("tea", "LIKES", None, "year"),  # no date: the message's day, a unit says nothing
]
UNITS = {
    "MOVED_TO": "year", "STARTED": "month", "VISITED": "week", "ADOPTED": "day",
    "LOVES": "day", "LIKES": "day",
}  # fmt: skip


@pytest.fixture
def mem(falkordb_server: EmbeddedServer, tmp_path: Path) -> Iterator[Memory]:
    """A Memory on a graph of its own, a hash embedder, and a scripted LLM that finds FACTS."""
    client = FalkorDB(unix_socket_path=str(falkordb_server.socket_path))
    store = FalkorDBStore(client, f"units{next(_graphs)}")
    embedder = HashEmbedder(dimension=64)
    store.setup(embedder.dimension)
    entities = [{"name": n, "type": "Thing", "aliases": []} for n in ("Kate", "Lisbon")]
    payload = {"entities": entities, "facts": FACTS, "invalidations": []}
    with ScriptedLLM() as llm, llm_memory(store, embedder, llm, tmp_path) as memory:
        llm.default = lambda body: tool_call(payload)
        memory.add("I moved to Lisbon last year.", "kate", ts=SAID)
        yield memory
    store.reset()
    store.close()


def _units(facts: list[Fact]) -> dict[str, str]:
    return {f.predicate: f.valid_unit for f in facts}


def _typed_units(mem: Memory, user_id: str) -> dict[str, str]:
    """The unit each typed relationship between the user's entities holds (Neo4j Browser
    shows them), as `_units` reads the facts: no unit is a day."""
    store = mem.store
    assert isinstance(store, FalkorDBStore)
    query = "MATCH (:Entity)-[r {user_id: $u}]->(:Entity) RETURN type(r), r.valid_unit"
    rows = store._graph.ro_query(query, {"u": user_id}).result_set
    return {predicate: unit or "day" for predicate, unit in rows}


def test_a_stored_fact_reads_back_its_unit_and_keeps_its_date(mem: Memory) -> None:
    facts = mem.get_all("kate")
    assert _units(facts) == UNITS == _typed_units(mem, "kate")
    moved = next(f for f in facts if f.predicate == "MOVED_TO")
    assert moved.valid_at == datetime(2025, 12, 7, tzinfo=UTC)  # the date, as it always was
    found = mem.search("Where did Kate move to?", "kate")
    hits = _units([hit.fact for hit in found.facts])
    assert "MOVED_TO" in hits and all(UNITS[p] == unit for p, unit in hits.items())
    block = found.context(400)
    assert "[2025] Kate moved to Lisbon" in block or "moved to Lisbon [2025]" in block
    assert "2025-12-07" not in block


def test_a_date_set_by_hand_is_a_day(mem: Memory) -> None:
    moved = next(f for f in mem.get_all("kate") if f.predicate == "MOVED_TO")
    mem.update(moved.uid, "kate", text="Kate moved to Lisbon in spring")
    assert _units(mem.get_all("kate"))["MOVED_TO"] == "year"  # the date untouched
    updated = mem.update(moved.uid, "kate", valid_at=datetime(2025, 4, 2, tzinfo=UTC))
    assert (updated.valid_at, updated.valid_unit) == (datetime(2025, 4, 2, tzinfo=UTC), "day")
    assert _units(mem.get_all("kate"))["MOVED_TO"] == "day" == _typed_units(mem, "kate")["MOVED_TO"]


def test_a_merge_keeps_the_unit_of_the_date_it_keeps(mem: Memory) -> None:
    """Kate and Katie both moved to Lisbon: the merged fact is true from the earlier start,
    with that start's unit."""
    katie = [
        ("MOVED_TO", "Lisbon", datetime(2026, 3, 1, tzinfo=UTC)),
        ("STARTED", "pottery", datetime(2026, 10, 1, tzinfo=UTC)),
        ("VISITED", "Rome", datetime(2027, 1, 1, tzinfo=UTC)),
    ]
    mem.add_facts(
        [{"subject": "Katie", "predicate": p, "object": o, "valid_at": at} for p, o, at in katie],
        "kate",
    )
    mem.merge_entities("Kate", "Katie", "kate")
    facts = {f.predicate: f for f in mem.get_all("kate")}
    assert (facts["MOVED_TO"].valid_at, facts["MOVED_TO"].valid_unit) == (
        datetime(2025, 12, 7, tzinfo=UTC),
        "year",
    )  # Kate's, the earlier
    assert (facts["STARTED"].valid_at, facts["STARTED"].valid_unit) == (
        datetime(2026, 10, 1, tzinfo=UTC),
        "day",
    )  # Katie's, the earlier
    assert facts["VISITED"].valid_unit == "week"
    assert _typed_units(mem, "kate") == {p: f.valid_unit for p, f in facts.items()}


def test_an_export_keeps_the_unit_and_an_older_one_imports_as_days(mem: Memory) -> None:
    exported = mem.export("kate")
    document = json.loads(exported)
    assert {f["predicate"]: f.get("valid_unit") or "day" for f in document["facts"]} == UNITS
    mem.import_(exported, "bob")
    assert _units(mem.get_all("bob")) == UNITS == _typed_units(mem, "bob")
    again = json.loads(mem.export("bob"))["facts"]
    assert sorted((f["predicate"], f["valid_at"], f["valid_unit"]) for f in again) == sorted(
        (f["predicate"], f["valid_at"], f["valid_unit"]) for f in document["facts"]
    )

    for fact in document["facts"]:
        del fact["valid_unit"]  # a file written before units existed
    mem.import_(json.dumps(document), "carol")
    assert set(_units(mem.get_all("carol")).values()) == {"day"}
    # a file that says a unit graphmem does not know is refused, naming where
    document["facts"][0]["valid_unit"] = "decade"
    with pytest.raises(InvalidInputError, match=r"facts\.0\.valid_unit"):
        mem.import_(json.dumps(document), "dave")
