"""Importing an older export over a live user never takes it back in time: counters stay at
least what they were (mentions, last_seen; first_seen no later), and a fact the store has
invalidated since stays invalid."""

from __future__ import annotations

import time

from engine.memory import Memory
from engine.store.base import WriteBatch
from engine.store.reads import Reads
from engine.transfer.export import read_snapshot


def _state(memory: Memory, user: str) -> tuple[dict[str, tuple[object, ...]], ...]:
    snapshot = read_snapshot(memory.store, user)
    entities = {e.key: (e.mentions, e.first_seen, e.last_seen) for e in snapshot.entities}
    facts = {
        f.text: (f.mentions, f.first_seen, f.last_seen, f.invalid_at is None)
        for f in snapshot.facts
    }
    typed = {
        f.text: (f.relationship.mentions, f.relationship.last_seen, f.relationship.invalid_at)
        for f in snapshot.facts
    }
    return entities, facts, typed


def test_an_older_export_never_lowers_live_counters(memory: Memory) -> None:
    memory.add_facts([("Alice", "LIKES", "tea"), ("Alice", "LIVES_IN", "Paris")], "alice")
    older = memory.export("alice")
    time.sleep(0.01)  # later last_seen
    for _ in range(3):
        memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    (paris,) = [f.uid for f in memory.get_all("alice") if f.triple[2] == "Paris"]
    memory.store.write("alice", WriteBatch(invalidate=[paris], invalid_at=time.time()))
    live = _state(memory, "alice")
    assert live[1]["Alice likes tea"][0] == 4
    assert not live[1]["Alice lives in Paris"][3]  # invalidated after the export

    memory.import_(older, user_id="alice")

    assert _state(memory, "alice") == live
    paris = [f for f in memory.get_all("alice") if f.triple[2] == "Paris"]
    assert paris == []  # search and get_all still see only what is valid
    counts = Reads(memory.store).counts("alice")
    assert (counts["facts"], counts["entities"]) == (2, 3)


def test_a_newer_export_raises_the_counters(memory: Memory) -> None:
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    newer = memory.export("alice")
    memory.delete_all("alice")
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    memory.import_(newer, user_id="alice")
    (fact,) = memory.get_all("alice")
    assert fact.mentions == 2
    assert memory.entity("Alice", "alice").entity.mentions == 2


def test_an_older_export_keeps_the_aliases_an_entity_took_since(memory: Memory) -> None:
    """A name merged into an entity after the export stays one of its names: importing the
    older export wrote the entity's aliases as exported (the merged entity itself, in the
    export, comes back as a backup's content does)."""
    memory.add_facts([("Robert", "LIVES_IN", "Paris"), ("Rob", "LIKES", "tea")], "robert")
    older = memory.export("robert")
    memory.merge_entities("Robert", "Rob", "robert")

    memory.import_(older, user_id="robert")

    (robert,) = [e for e in read_snapshot(memory.store, "robert").entities if e.key == "robert"]
    assert (robert.aliases, robert.alias_keys) == (["Rob"], ["rob"])
