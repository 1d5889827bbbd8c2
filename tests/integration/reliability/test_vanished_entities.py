"""An entity a write path read as stored, deleted (by another `Memory` on the same store)
before the write: the writer gave no vector for it, so a MERGE that simply recreated it left
an entity with no name vector, none of its aliases and no ADD event, which the entity name
search by vector never finds. Written again, it is stored whole. And a fact whose subject or
object is gone when it is written is not dropped while the call reports it stored."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.add import adder as adder_module
from engine.add import batch as batch_module
from engine.embedding import Embedder, as_param
from engine.load import LoadProgress
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.reads import Reads
from tests.integration.reliability.conftest import Tally

USER = "vanish-e"


@pytest.fixture
def other(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Memory:
    """Another client of the same store."""
    return Memory(store=store, embedder=embedder, data_dir=tmp_path / "other")


def _deleting(real: Callable[..., Any], other: Memory, name: str) -> Callable[..., Any]:
    """`real`, then the entity `name` deleted by `other` (between the step's read and the
    write that follows it)."""

    def step(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        other.delete_entity(name, USER)
        return out

    return step


def _assert_whole(
    memory: Memory, store: GraphStore, embedder: Embedder, uid: str, name: str
) -> None:
    """The entity `uid` is stored with its name vector (the name search by vector finds it)
    and its history ends with an ADD."""
    vector = as_param(embedder.encode_one(name))
    near = Reads(store).vector_entities(USER, vector, 5)
    assert uid in [entity.uid for entity, _ in near], "stored without its name vector"
    assert [e.event for e in memory.history(uid, USER)][-1:] == ["ADD"]


def test_add_facts_stores_whole_an_entity_deleted_after_it_was_read(
    memory: Memory, other: Memory, store: GraphStore, embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch, tally: Tally,
) -> None:  # fmt: skip
    memory.add_facts([("Robert", "LIVES_IN", "Paris"), ("Bob", "LIVES_IN", "Paris")], USER)
    robert = memory.merge_entities("Robert", "Bob", USER)  # Robert, also known as Bob
    real = adder_module.facts_batch
    monkeypatch.setattr(adder_module, "facts_batch", _deleting(real, other, "Robert"))
    result = memory.add_facts([("Bob", "WORKS_AT", "Acme")], USER)
    monkeypatch.undo()
    assert (result.facts_added, result.facts_updated, result.entities_added) == (1, 0, 2)
    _assert_whole(memory, store, embedder, robert.uid, "Robert")
    view = memory.entity("Bob", USER)  # found by its alias, which it kept
    assert view.entity.uid == robert.uid and view.entity.aliases == ["Bob"]
    assert [(f.subject, f.predicate, f.object) for f in view.facts] == [
        ("Robert", "WORKS_AT", "Acme")
    ]
    tally.cases += 1


def test_an_add_of_messages_stores_whole_an_entity_deleted_after_it_was_read(
    store: GraphStore, embedder: Embedder, extractor: Any, other: Memory, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, tally: Tally,
) -> None:  # fmt: skip
    memory = Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path)
    memory.add("Alice works at Acme.", USER)
    acme = memory.entity("Acme", USER).entity
    real = batch_module._build
    monkeypatch.setattr(batch_module, "_build", _deleting(real, other, "Acme"))
    again = memory.add("Alice works at Acme.", USER)
    monkeypatch.undo()
    assert acme.uid in again.entity_uids and again.entities_added == 1
    _assert_whole(memory, store, embedder, acme.uid, "Acme")
    view = memory.entity("Acme", USER)
    assert view.facts and view.episodes, "its facts and the messages naming it are linked"
    tally.cases += 1


def _load_deleting(memory: Memory, other: Memory, path: Path, phase: str, name: str) -> Any:
    """`memory.load(path)`, `other` deleting the entity `name` as the phase `phase` starts."""
    done: list[str] = []

    def progress(p: LoadProgress) -> None:
        if p.phase == phase and not done:
            done.append(phase)
            other.delete_entity(name, USER)

    report = memory.load(path, USER, progress=progress)
    assert done == [phase]
    return report


def test_a_load_stores_whole_a_known_entity_deleted_after_it_was_read(
    memory: Memory, other: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path,
    tally: Tally,
) -> None:  # fmt: skip
    first, second = tmp_path / "first.tsv", tmp_path / "second.tsv"
    first.write_text("Alice\tKNOWS\tBob\n", encoding="utf-8")
    second.write_text("Alice\tLIKES\tTea\n", encoding="utf-8")
    memory.load(first, USER)
    alice = memory.entity("Alice", USER).entity
    report = _load_deleting(memory, other, second, "entities", "Alice")
    assert report.facts_added == 1
    _assert_whole(memory, store, embedder, alice.uid, "Alice")
    facts = memory.entity("Alice", USER).facts
    assert [(f.subject, f.predicate, f.object) for f in facts] == [("Alice", "LIKES", "Tea")]
    tally.cases += 1


def test_a_load_stores_a_fact_whose_entity_was_deleted_before_its_write(
    memory: Memory, other: Memory, store: GraphStore, embedder: Embedder, tmp_path: Path,
    tally: Tally,
) -> None:  # fmt: skip
    path = tmp_path / "kb.tsv"
    path.write_text("Alice\tKNOWS\tBob\nCarol\tKNOWS\tDave\n", encoding="utf-8")
    report = _load_deleting(memory, other, path, "facts", "Bob")
    said = {(f.subject, f.predicate, f.object) for f in memory.get_all(USER)}
    assert said == {("Alice", "KNOWS", "Bob"), ("Carol", "KNOWS", "Dave")}
    assert (report.facts_added, report.facts_already_stored) == (2, 0)
    bob = memory.entity("Bob", USER).entity
    _assert_whole(memory, store, embedder, bob.uid, "Bob")
    tally.cases += 1


def test_a_fact_whose_entity_another_writer_took_the_key_of_is_not_reported_stored(
    memory: Memory, store: GraphStore, embedder: Embedder, extractor: Any, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch, tally: Tally,
) -> None:  # fmt: skip
    """The user's own entity, keyed 'user', made by another writer's add between the read
    and the write of an `add_facts` naming 'USER' (a new entity of that key when read): the
    write's MERGE finds the user's own, under another uid, and the fact cannot be written
    as it was resolved. The add says so; it does not count it stored."""
    speaker = Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path / "s")
    real = adder_module.facts_batch

    def step(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        assert speaker.add("I live in Paris.", USER).entities_added
        return out

    monkeypatch.setattr(adder_module, "facts_batch", step)
    result = memory.add_facts([("USER", "OWNS", "a bike")], USER)
    monkeypatch.undo()
    stored = {f.uid for f in memory.get_all(USER)}
    assert set(result.fact_uids) <= stored, "a fact reported stored is not"
    assert result.facts_added + result.facts_updated == len(result.fact_uids)
    assert result.fact_uids or any("not written" in e for e in result.errors)
    tally.cases += 1
