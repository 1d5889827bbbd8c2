"""An import for another user: an entity named as the target user id is that user's own
entity, as `add_facts` and `load` make it; the user's own entity the target holds takes in
the imported one (mentions added up, a MERGE event), once however often the file is
imported; two entities of a file that would both be the user's own are refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.errors import InvalidInputError
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer.export import read_snapshot


@pytest.fixture
def mem(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Memory:
    return Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)


def _bobs(mem: Memory) -> list[tuple[str, str, int]]:
    """bob's entities named Bob or bob's own: (uid, name, mentions)."""
    me = Memory.self_uid("bob")
    return [
        (e.uid, e.name, e.mentions)
        for e in read_snapshot(mem.store, "bob").entities
        if e.uid == me or e.key == "bob"
    ]


def test_an_entity_named_as_the_target_user_is_its_own_entity(mem: Memory) -> None:
    """alice's "Bob" imported for bob kept a uid of its name: bob's "I" and a fact naming
    Bob then made two Bobs, where `add_facts` makes one."""
    mem.add_facts([("Bob", "WORKS_AT", "Acme")], "u-alice")
    report = mem.import_(mem.export("u-alice"), "bob")
    mem.add_facts([("Bob", "LIKES", "tea")], "bob")
    mem.add("I like coffee", "bob")

    me = Memory.self_uid("bob")
    assert [(uid, name) for uid, name, _ in _bobs(mem)] == [(me, "Bob")]
    assert {f.subject_uid for f in mem.get_all("bob")} == {me}
    assert report.made_own == 1


def test_the_users_own_entity_takes_in_the_imported_one_once(mem: Memory) -> None:
    """bob's own entity (2 mentions) and alice's "Bob" (1): the import kept 2 (the larger),
    where `add_facts` adds them up; a second import adds nothing more."""
    mem.add_facts([("Bob", "LIKES", "tea"), ("Bob", "OWNS", "a car")], "bob")
    mem.add_facts([("Bob", "WORKS_AT", "Acme")], "u-alice")
    exported = mem.export("u-alice")

    first = mem.import_(exported, "bob")
    again = mem.import_(exported, "bob")

    me = Memory.self_uid("bob")
    assert _bobs(mem) == [(me, "Bob", 3)]
    events = [e.event for e in mem.history(me, "bob")]
    assert (events.count("MERGE"), events.count("ADD")) == (1, 1)  # bob's own ADD only
    # the fact's ADD, Acme's ADD and the MERGE saying "Bob" became bob's own
    assert (first.made_own, first.entities_held, first.history_new) == (1, 1, 3)
    assert (again.entities_new, again.facts_new, again.history_new) == (0, 0, 0)


def test_the_files_own_entity_lands_on_the_one_the_target_holds(mem: Memory) -> None:
    """alice's own entity ("Alice") imported for bob, who holds his own ("Bob"), was written
    as a second node of bob's own uid: bob's export then failed ("two entities share a uid
    or a key")."""
    mem.add_facts([("Alice", "LIKES", "tea")], "alice")
    mem.add_facts([("Bob", "LIKES", "coffee")], "bob")

    report = mem.import_(mem.export("alice"), "bob")

    me = Memory.self_uid("bob")
    [own] = [e for e in read_snapshot(mem.store, "bob").entities if e.uid == me]
    assert (own.key, own.name, own.mentions) == ("bob", "Bob", 1)
    assert "Alice" in own.aliases and mem.entity("Alice", "bob").entity.uid == me
    assert report.made_own == 0


def test_two_entities_that_would_both_be_the_users_own_are_refused(mem: Memory) -> None:
    """alice's own entity and her "Bob" are two people: for bob both would be his own."""
    mem.add_facts([("Alice", "KNOWS", "Bob")], "alice")

    with pytest.raises(InvalidInputError) as refused:
        mem.import_(mem.export("alice"), "bob")

    said = str(refused.value)
    assert "'Alice'" in said and "'Bob'" in said and "bob's own entity" in said
    assert mem.stats("bob").entities == 0
