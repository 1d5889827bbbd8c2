"""Importing an older export over a live user never takes it back in time: counters stay at
least what they were (mentions, last_seen; first_seen no later), a fact the store has
invalidated since stays invalid, a fact changed since keeps its change, the messages that said
a fact since stay among its sources, and a message extracted since stays extracted. A newer
export moves its changes onto an older copy; a fact deleted since comes back. A message the
user holds is written onto the held episode, even one added without a time (a random uid), so
no message is stored twice, and identical messages in a file stay as many as they are."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from engine.embedding import Embedder
from engine.memory import Memory
from engine.models import FactInput
from engine.normalize import stable_uid
from engine.store.base import EpisodeRow, WriteBatch
from engine.store.reads import Reads
from engine.transfer.export import read_snapshot
from engine.transfer.snapshot import FactRecord


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


def _raw_fact(memory: Memory, user: str, uid: str) -> FactRecord:
    (fact,) = [f for f in read_snapshot(memory.store, user).facts if f.uid == uid]
    return fact


def _fact_as(fact: FactRecord) -> FactRecord:
    """`fact` without its typed form's valid_at (on FalkorDB `update` leaves the typed form's
    ends one change behind the :Fact's)."""
    assert fact.relationship is not None
    typed = fact.relationship.model_copy(update={"valid_at": None})
    return fact.model_copy(update={"relationship": typed})


def _fact(memory: Memory, user: str, uid: str) -> FactRecord:
    """The fact as stored, its typed form's valid_at checked to be the fact's."""
    fact = _raw_fact(memory, user, uid)
    assert fact.relationship is not None and fact.relationship.valid_at == fact.valid_at
    return _fact_as(fact)


def _events(memory: Memory, user: str, uid: str) -> list[tuple[str, str | None]]:
    return [(h.event, h.detail) for h in memory.history(uid, user)]


def test_an_older_export_keeps_a_fact_updated_since(memory: Memory) -> None:
    """The text, valid_at (both forms) and vector `update` gave a fact after the export stay:
    importing the older export wrote the exported text back under a history that ends with
    the UPDATE."""
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    (uid,) = [f.uid for f in memory.get_all("alice")]
    older = memory.export("alice")
    memory.update(uid, "alice", text="Alice likes green tea", valid_at="2024-05-01")
    live, events = _raw_fact(memory, "alice", uid), _events(memory, "alice", uid)
    assert (live.text, live.valid_at) == ("Alice likes green tea", 1714521600.0)

    memory.import_(older, user_id="alice")

    assert _fact(memory, "alice", uid) == _fact_as(live)  # text, valid_at, vector, sources
    assert (
        _events(memory, "alice", uid)
        == events
        == [
            ("ADD", "Alice likes tea"),
            ("UPDATE", "Alice likes green tea"),
        ]
    )
    assert [f.fact.text for f in memory.search("green tea", "alice").facts] == [live.text]


def test_an_older_export_keeps_the_messages_that_said_a_fact_since(memory: Memory) -> None:
    """A fact's sources are the union: those held, then the exported ones not held."""
    memory.add("My sister Ann lives in Oslo.", "ann", ts=1_700_000_000.0)
    (uid,) = [f.uid for f in memory.get_all("ann") if f.triple[2] == "Oslo"]
    older = memory.export("ann")
    memory.add("Ann lives in Oslo, I told you.", "ann", ts=1_700_000_100.0)
    sources = _raw_fact(memory, "ann", uid).episodes
    assert len(sources) == 2

    memory.import_(older, user_id="ann")

    assert _raw_fact(memory, "ann", uid).episodes == sources


def test_an_older_export_keeps_a_message_extracted_since(memory: Memory) -> None:
    """A message whose extraction failed and succeeded when added again is no dead letter
    again after the import of an export taken in between."""
    uid = stable_uid("ann", "c1")  # as add derives it for a message at an explicit time
    row = EpisodeRow(uid, None, "user", "Ann lives in Oslo", 1.7e9, None, "c1")
    failed = replace(row, status="failed", error="timeout")
    memory.store.write("ann", WriteBatch(episodes=[failed]))
    older = memory.export("ann")
    memory.store.write("ann", WriteBatch(episodes=[row]))  # extracted when added again

    memory.import_(older, user_id="ann")

    (episode,) = memory.reads.episodes_by_uids("ann", [uid])
    assert (episode.status, episode.error) == ("ok", None)


def test_a_fact_deleted_since_comes_back_from_an_export(memory: Memory) -> None:
    """A restore brings back what was deleted, as exported, even when it was changed before
    it was deleted (the user holds nothing to keep)."""
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    (uid,) = [f.uid for f in memory.get_all("alice")]
    older = memory.export("alice")
    exported = _fact(memory, "alice", uid)
    memory.update(uid, "alice", text="Alice likes green tea")
    memory.delete(uid, "alice")

    memory.import_(older, user_id="alice")

    assert _fact(memory, "alice", uid) == exported
    assert [f.fact.text for f in memory.search("tea", "alice").facts] == ["Alice likes tea"]


def test_a_newer_export_moves_its_changes_onto_an_older_copy(
    memory: Memory, embedder: Embedder, tmp_path: Path
) -> None:
    """Text, valid_at (both forms) and vector follow the file when its change is the later
    one: an older copy (a fresh data dir) takes a newer export."""
    memory.add_facts([("Alice", "LIKES", "tea")], "alice")
    (uid,) = [f.uid for f in memory.get_all("alice")]
    older = memory.export("alice")
    memory.update(uid, "alice", text="Alice likes green tea", valid_at="2024-05-01")
    newer, changed = memory.export("alice"), _fact_as(_raw_fact(memory, "alice", uid))

    with Memory(embedder=embedder, data_dir=tmp_path / "copy") as copy:
        copy.import_(older, user_id="alice")
        assert _fact(copy, "alice", uid).text == "Alice likes tea"
        copy.import_(newer, user_id="alice")
        assert _fact(copy, "alice", uid) == changed
        assert _events(copy, "alice", uid) == _events(memory, "alice", uid)
        found = copy.search("green tea", "alice").facts
        assert [f.fact.text for f in found] == ["Alice likes green tea"]


def _messages(memory: Memory, user: str) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    """The user's messages (content, uid) and each fact's sources."""
    snapshot = read_snapshot(memory.store, user)
    messages = sorted((p.content, p.uid) for p in snapshot.episodes)
    return messages, {f.uid: f.episodes for f in snapshot.facts}


def _add_untimed(memory: Memory, user: str) -> None:
    """Messages added without a time (random uids), two of them the same, and one with."""
    for text in ["My sister Ann lives in Oslo.", "ok", "ok"]:
        memory.add(text, user)
    memory.add("I like green tea.", user, ts=1_700_000_000.0)


def test_an_export_imported_into_its_own_user_adds_no_message(memory: Memory) -> None:
    """Nothing changes: the same messages with their MENTIONS, each fact's sources, history."""
    _add_untimed(memory, "ann")
    held = _messages(memory, "ann")
    assert len(held[0]) == 4 and any(held[1].values())
    before = read_snapshot(memory.store, "ann", now=0.0)
    exported = memory.export("ann")

    for _ in range(2):
        memory.import_(exported, user_id="ann")

        assert _messages(memory, "ann") == held
        assert read_snapshot(memory.store, "ann", now=0.0) == before


def test_an_import_adopts_the_messages_one_to_one(memory: Memory) -> None:
    """The user holds one "ok" of the file's two: one lands on it, the other is new; another
    user's messages are never taken."""
    memory.add("ok", "ann")
    memory.add("ok", "ann")
    exported = memory.export("ann")
    memory.import_(exported, user_id="bob")
    kept, gone = [p.uid for p in read_snapshot(memory.store, "ann").episodes]
    memory.delete_episode(gone, "ann")

    memory.import_(exported, user_id="ann")
    memory.import_(exported, user_id="bob")

    assert len(_messages(memory, "bob")[0]) == 2
    ann = [uid for _, uid in _messages(memory, "ann")[0]]
    assert len(ann) == 2 and kept in ann and gone not in ann


def test_identical_untimed_messages_stay_two_in_a_fresh_store(
    memory: Memory, embedder: Embedder, tmp_path: Path
) -> None:
    _add_untimed(memory, "ann")
    exported = memory.export("ann")
    contents = [content for content, _ in _messages(memory, "ann")[0]]

    with Memory(embedder=embedder, data_dir=tmp_path / "copy") as copy:
        copy.import_(exported, user_id="ann")
        first = _messages(copy, "ann")
        copy.import_(exported, user_id="ann")

        assert [content for content, _ in first[0]] == contents
        assert _messages(copy, "ann") == first
        sources = [sorted(s) for s in first[1].values()]
        uids = {uid for _, uid in first[0]}
        assert sources and all(set(s) <= uids for s in sources)


def test_an_older_export_without_a_type_keeps_the_type_an_entity_took_since(
    memory: Memory,
) -> None:
    """An entity typed after the export keeps its type: an older export naming it without one
    erased `type`, the :Person label staying."""
    memory.add_facts([("Bob", "OWNS", "car")], "bob")
    older = memory.export("bob")
    typed = FactInput(subject="Bob", predicate="LIKES", object="tea", subject_type="person")
    memory.add_facts([typed], "bob")
    assert memory.entity("Bob", "bob").entity.type == "Person"

    memory.import_(older, user_id="bob")

    assert memory.entity("Bob", "bob").entity.type == "Person"
    assert memory.top_entities("bob", 10, by="frequency")[0].entity.type == "Person"
