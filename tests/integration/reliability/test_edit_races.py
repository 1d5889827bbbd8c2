"""Edits racing writes: what another `Memory` on the same store acknowledged while an edit by
hand (`merge_entities`) ran is kept, never deleted with what the edit removes."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engine.add.resolve import history_row
from engine.embedding import Embedder
from engine.errors import StoreError
from engine.memory import Memory
from engine.memory.edit import MERGE_ROUNDS
from engine.normalize import entity_key
from engine.store.base import AliasRow, GraphStore, MergeBatch, WriteBatch
from tests.integration.reliability.conftest import Tally

USER = "racing-merge"


def test_a_fact_added_while_a_merge_runs_is_moved_not_deleted(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    mem, other = _robert_and_bob(shared_store, embedder, tmp_path, USER)
    added = _paused_after_read(
        mem, monkeypatch, lambda: other.add_facts([("Robert", "OWNS", "Boat")], USER).facts_added
    )
    kept = mem.merge_entities("Bob", "Robert", USER)
    facts = {(f.subject, f.predicate, f.object) for f in mem.get_all(USER)}
    tally.cases += 1
    tally.faults += 1
    tally.lost += int(("Bob", "OWNS", "Boat") not in facts)
    assert added == [1]  # acknowledged
    assert facts == {("Bob", "OWNS", "Car"), ("Bob", "OWNS", "Boat"), ("Bob", "LIKES", "Tea")}
    assert "Robert" in kept.aliases


def _robert_and_bob(
    store: GraphStore, embedder: Embedder, tmp_path: Path, user: str
) -> tuple[Memory, Memory]:
    """The merging `Memory` with Robert's and Bob's facts, and another writer on its store."""
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path / "merging")
    other = Memory(store=store, embedder=embedder, data_dir=tmp_path / "writing")
    mem.add_facts([("Robert", "OWNS", "Car"), ("Bob", "LIKES", "Tea")], user)
    return mem, other


def _paused_after_read(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, meanwhile: Any, every: bool = False
) -> list[object]:
    """Run `meanwhile()` just after the merge first reads the merged entity's facts (another
    process writing between the merge's read and its write), or after each of its reads
    (`every`); its results."""
    read = mem.reads.entity_facts
    done: list[object] = []

    def read_then_another_writes(*args: Any, **kwargs: Any) -> Any:
        found = read(*args, **kwargs)
        if every or not done:
            done.append(meanwhile())
        return found

    monkeypatch.setattr(mem.reads, "entity_facts", read_then_another_writes)
    return done


def test_a_fact_updated_while_a_merge_runs_keeps_the_update(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    """The merge moved the merged entity's fact as it read it: an update another Memory
    made meanwhile (acknowledged, the fact read back with its new text) was written over."""
    user = f"{USER}-update"
    mem, other = _robert_and_bob(shared_store, embedder, tmp_path, user)
    [car] = [f for f in mem.get_all(user) if f.object == "Car"]
    done = _paused_after_read(
        mem, monkeypatch, lambda: other.update(car.uid, user, text="Robert owns a red car").text
    )
    mem.merge_entities("Bob", "Robert", user)
    texts = {(f.subject, f.object): f.text for f in mem.get_all(user)}
    tally.cases += 1
    tally.faults += 1
    tally.lost += int(texts.get(("Bob", "Car")) != "Robert owns a red car")
    assert done == ["Robert owns a red car"]  # acknowledged
    assert texts[("Bob", "Car")] == "Robert owns a red car"
    hits = mem.search("red car", user).facts
    assert hits and hits[0].fact.text == "Robert owns a red car"  # its vector moved with it


def test_mentions_added_while_a_merge_runs_are_kept(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    """The merge added the mentions it had read to the kept entity and deleted the merged
    one with those another Memory added meanwhile."""
    user = f"{USER}-mentions"
    mem, other = _robert_and_bob(shared_store, embedder, tmp_path, user)
    bob, robert = mem.entity("Bob", user).entity, mem.entity("Robert", user).entity
    done = _paused_after_read(
        mem, monkeypatch, lambda: other.add_facts([("Robert", "OWNS", "Boat")], user).facts_added
    )
    kept = mem.merge_entities("Bob", "Robert", user)
    tally.cases += 1
    tally.faults += 1
    tally.lost += int(kept.mentions != bob.mentions + robert.mentions + 1)
    assert done == [1]  # acknowledged
    assert kept.mentions == bob.mentions + robert.mentions + 1


def test_an_alias_added_while_a_merge_runs_moves_to_the_kept_entity(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    """The merge gave the kept entity the merged one's names as it had read them, then
    deleted the merged one with the alias another writer gave it meanwhile (as an add whose
    extraction calls Robert "Bobby" writes it): the name found nothing any more."""
    user = f"{USER}-alias"
    mem = Memory(store=shared_store, embedder=embedder, data_dir=tmp_path / "merging")
    mem.add_facts([("Robert", "OWNS", "Car"), ("Bob", "LIKES", "Tea")], user)
    robert = mem.entity("Robert", user).entity
    named = WriteBatch(
        aliases=[AliasRow(robert.uid, "Bobby", entity_key("Bobby"))],
        history=[history_row(robert.uid, "MERGE", time.time(), None, "'Bobby' resolved")],
    )

    def another_names_robert() -> list[str]:
        shared_store.write(user, named)
        return mem.reads.entities_by_uids(user, [robert.uid])[0].aliases

    done = _paused_after_read(mem, monkeypatch, another_names_robert)
    kept = mem.merge_entities("Bob", "Robert", user)
    tally.cases += 1
    tally.faults += 1
    tally.lost += int("Bobby" not in kept.aliases)
    assert done == [["Bobby"]]  # acknowledged
    assert sorted(kept.aliases) == ["Bobby", "Robert"]
    assert mem.entity("Bobby", user).entity.uid == kept.uid


def test_a_merge_outrun_by_another_writer_stops_without_deleting_its_facts(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    """Another writer gives the merged entity a new fact after each of the merge's reads: the
    merge stops with an error after its last round, every acknowledged fact still stored (moved
    or not yet), and a second merge once the writes stop finishes."""
    user = f"{USER}-outrun"
    mem, other = _robert_and_bob(shared_store, embedder, tmp_path, user)
    added: list[str] = []

    def another_adds_a_boat() -> int:
        added.append(f"Boat {len(added)}")
        return other.add_facts([("Robert", "OWNS", added[-1])], user).facts_added

    done = _paused_after_read(mem, monkeypatch, another_adds_a_boat, every=True)
    with pytest.raises(StoreError, match="run merge_entities again"):
        mem.merge_entities("Bob", "Robert", user)
    owned = {f.object for f in mem.get_all(user) if f.predicate == "OWNS"}
    tally.cases += 1
    tally.faults += 1
    tally.lost += len({"Car", *added} - owned)
    assert done == [1] * len(added)  # acknowledged
    assert owned == {"Car", *added}

    monkeypatch.undo()  # the other writer stops
    mem.merge_entities("Bob", "Robert", user)
    facts = {(f.subject, f.object) for f in mem.get_all(user) if f.predicate == "OWNS"}
    assert facts == {("Bob", thing) for thing in ("Car", *added)}


def test_a_merge_left_unfinished_keeps_a_name_given_after_its_last_round(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    """Every round of the merge is outrun by a new fact; after the last one another writer
    deletes that fact and names the merged entity "Bobby". The merge deleted the entity it
    found no fact of, and the name with it; it now stops, and a second merge moves the name."""
    user = f"{USER}-unfinished"
    mem, other = _robert_and_bob(shared_store, embedder, tmp_path, user)
    robert = mem.entity("Robert", user).entity
    boats: list[str] = []

    def another_adds_a_boat() -> None:
        boats.extend(other.add_facts([("Robert", "OWNS", f"Boat {len(boats)}")], user).fact_uids)

    write, rounds = shared_store.write, []

    def write_then_rename(user_id: str, batch: Any) -> Any:
        written = write(user_id, batch)
        rounds.extend([batch] if isinstance(batch, MergeBatch) else [])
        if len(rounds) == MERGE_ROUNDS and isinstance(batch, MergeBatch):
            other.delete(boats.pop(), user)
            named = WriteBatch(
                aliases=[AliasRow(robert.uid, "Bobby", entity_key("Bobby"))],
                history=[history_row(robert.uid, "MERGE", time.time(), None, "'Bobby' resolved")],
            )
            write(user, named)
        return written

    _paused_after_read(mem, monkeypatch, another_adds_a_boat, every=True)
    monkeypatch.setattr(shared_store, "write", write_then_rename)
    with pytest.raises(StoreError, match="run merge_entities again"):
        mem.merge_entities("Bob", "Robert", user)
    tally.cases += 1
    tally.faults += 1
    tally.lost += int(mem.entity("Bobby", user).entity.uid != robert.uid)
    monkeypatch.undo()
    kept = mem.merge_entities("Bob", "Robert", user)
    assert mem.entity("Bobby", user).entity.uid == kept.uid
    assert {f.object for f in mem.get_all(user) if f.subject == "Bob"} >= {"Car", "Tea"}
