"""A fact an add (or a merge) read as stored, deleted before its write: the write decided it
existed and embedded nothing for it, so a MERGE that simply recreated it left a fact with no
vector, which the semantic leg never finds. Written again, it is stored whole: both its forms
and its vector, its ADD event recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine.add import adder as adder_module
from engine.add import batch as batch_module
from engine.memory import Memory
from engine.memory import edit as edit_module
from engine.store.base import GraphStore
from tests.integration.reliability.conftest import Tally

USER = "vanish"


def _deleting(real: Callable[..., Any], memory: Memory, uid: str) -> Callable[..., Any]:
    """`real`, then the fact `uid` deleted through the public API (as another client would,
    between the step's read and the write that follows it)."""

    def step(*args: Any, **kwargs: Any) -> Any:
        out = real(*args, **kwargs)
        memory.delete(uid, USER)
        return out

    return step


def _assert_whole(memory: Memory, store: GraphStore, uid: str, query: str, event: str) -> None:
    """The fact is stored with its vector and both its forms (the semantic leg and the
    expansion find it), its history ending with `event`."""
    (row,) = store.run("get_fact_embeddings", {"user_id": USER, "uids": [uid]})
    assert row[1] is not None, "the fact was stored without its vector"
    found = memory.search(query, USER, mode="semantic", limit=5)
    assert uid in [hit.fact.uid for hit in found.facts]
    typed = memory.search(query, USER, mode="expansion", limit=5)
    assert uid in [hit.fact.uid for hit in typed.facts]
    assert [e.event for e in memory.history(uid, USER)][-1:] == [event]


def test_add_facts_stores_whole_a_fact_deleted_after_it_was_read(
    memory: Memory, store: GraphStore, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    fact = ("Alice", "FRIEND_OF", "John", "Alice is a friend of John")
    (uid,) = memory.add_facts([fact], USER).fact_uids
    real = adder_module.facts_batch
    monkeypatch.setattr(adder_module, "facts_batch", _deleting(real, memory, uid))
    again = memory.add_facts([fact], USER)
    monkeypatch.undo()
    assert again.fact_uids == [uid] and (again.facts_added, again.facts_updated) == (1, 0)
    _assert_whole(memory, store, uid, "Who is Alice's friend?", "ADD")
    (stored,) = [f for f in memory.get_all(USER) if f.uid == uid]
    assert stored.mentions == 1  # it starts again, as a fact added anew
    tally.cases += 1


def test_an_add_of_messages_stores_whole_a_fact_deleted_after_it_was_read(
    store: GraphStore, embedder: Any, extractor: Any, tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch, tally: Tally,
) -> None:  # fmt: skip
    memory = Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path)
    first = memory.add("Alice works at Acme.", USER)
    assert first.fact_uids, "the offline extractor found no fact"
    uid = first.fact_uids[0]
    real = batch_module._build
    monkeypatch.setattr(batch_module, "_build", _deleting(real, memory, uid))
    again = memory.add("Alice works at Acme.", USER)
    monkeypatch.undo()
    assert uid in again.fact_uids and again.facts_added >= 1
    _assert_whole(memory, store, uid, "Where does Alice work?", "ADD")
    tally.cases += 1


def test_a_merge_stores_whole_a_fact_deleted_after_it_was_read(
    memory: Memory, store: GraphStore, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    facts = [("Robert", "LIVES_IN", "Paris"), ("Bob", "LIVES_IN", "Paris")]
    kept_uid, _ = memory.add_facts(facts, USER).fact_uids
    real = edit_module.merge_batch
    monkeypatch.setattr(edit_module, "merge_batch", _deleting(real, memory, kept_uid))
    memory.merge_entities("Robert", "Bob", USER)
    monkeypatch.undo()
    (stored,) = memory.get_all(USER)
    assert stored.uid == kept_uid and stored.mentions == 1  # Bob's, moved onto it
    _assert_whole(memory, store, kept_uid, "Where does Robert live?", "MERGE")
    tally.cases += 1
