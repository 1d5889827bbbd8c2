"""Times to the microsecond leave the store, and come back, exactly.

FalkorDB writes a float into a reply with 15 significant digits: epoch seconds to the
microsecond have 16, and a raw `time.time()` up to 17. An export read them rounded, so the
"lossless" document, and a graph imported from it, held other times than the store.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.rows import times_stamp

TS = 1_690_000_000.123456  # a message's time, to the microsecond: 16 significant digits
VALID_AT = 1_600_000_000.654321
MESSAGE = {"role": "user", "content": "I moved to Lisbon last spring."}


def _times(document: dict[str, Any]) -> tuple[list[float], list[Any], list[Any]]:
    """The episodes' times, the facts' valid_at and their relationships' valid_at."""
    facts = sorted(document["facts"], key=lambda f: f["valid_at"])
    return (
        sorted(p["ts"] for p in document["episodes"]),
        [f["valid_at"] for f in facts],
        [f["relationship"]["valid_at"] for f in facts],
    )


def test_microsecond_times_survive_export_and_import(
    quiet_memory: Memory, store: GraphStore
) -> None:
    mem = quiet_memory
    mem.add([MESSAGE], user_id="alice", ts=TS)
    facts = [
        {"subject": "Alice", "predicate": "LIVES_IN", "object": "Lisbon", "valid_at": VALID_AT},
        {"subject": "Alice", "predicate": "OWNS", "object": "Boat", "valid_at": TS},
    ]
    mem.add_facts(facts, "alice")

    exported = mem.export("alice")
    assert _times(json.loads(exported)) == ([TS], [VALID_AT, TS], [VALID_AT, TS])

    mem.import_(exported, "bob")
    assert _times(json.loads(mem.export("bob"))) == ([TS], [VALID_AT, TS], [VALID_AT, TS])
    again = mem.add([MESSAGE], user_id="bob", ts=TS)  # bob's own add of the imported message
    assert (again.episode_uids, again.episodes_skipped) == ([], 1)
    mem.import_(exported, "alice")
    document = json.loads(mem.export("alice"))
    assert {**document, "exported_at": 0} == {**json.loads(exported), "exported_at": 0}


def test_an_export_gives_raw_clock_times_as_stored(memory: Memory, store: GraphStore) -> None:
    """An entity's `created_at` is a raw `time.time()` (up to 17 significant digits): the
    export gives the very float the store holds (found by it with `=`)."""
    if not isinstance(store, FalkorDBStore):
        pytest.skip("the store is read here with a FalkorDB query")
    memory.add_facts([("Alice", "LIVES_IN", "Lisbon"), ("Bob", "OWNS", "Boat")], "alice")
    entities = json.loads(memory.export("alice"))["entities"]
    created = [e["created_at"] for e in entities]

    graph = store._graph  # type: ignore[attr-defined]
    found = graph.ro_query(
        "MATCH (e:Entity {user_id: $u}) WHERE e.created_at IN $times RETURN count(e)",
        {"u": "alice", "times": created},
    ).result_set
    assert found == [[len(entities)]] and len(entities) == 4


def test_the_episode_leg_reads_the_times_the_store_stamps(memory: Memory) -> None:
    """The episode leg checks its index against the store's sum of its messages' times in
    whole milliseconds (`stamp_user_episodes`): a time just under a millisecond's end read
    back rounded to 15 digits (`...0.122996` as `...0.123`) made the two differ, and a search
    loaded the user's whole index again at each check."""
    memory.add([MESSAGE], user_id="alice", ts=1_690_000_000.122996)
    reads = memory.retriever.reads

    texts, _ = reads.episode_texts("alice", 0)

    assert [t.ts for t in texts] == [1_690_000_000.122996]
    assert reads.episodes_stamp("alice") == (1, times_stamp([t.ts for t in texts]))
