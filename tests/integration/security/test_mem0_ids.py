"""The Mem0 facade's memory ids: no caller reaches a memory it could not name through its own
scope. A fact's uid is a public hash of (user, subject, predicate, object); its memory id is
not, so computing ids gives nothing, and another user's (or store's) id is "not found" exactly
like a random one.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

import engine.compat.mem0 as facade
from engine.compat.mem0_ids import MemoryIds, permute
from engine.embedding import Embedder
from engine.errors import InvalidInputError, NotFoundError
from engine.memory import Memory
from engine.normalize import stable_uid
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.uids import entity_uid

SECRET = ("Bob", "HAS_DIAGNOSIS", "Diabetes")
RANDOM_ID = "892db2ae-06d9-49e5-8b3e-585ef9b85b8e"


def _computed_ids(user: str) -> list[str]:
    """Every id an attacker could derive from the fact alone: the old `<uid>@<user>` form and
    the uid written as a UUID."""
    ends = entity_uid(user, "bob"), entity_uid(user, "diabetes")  # "Bob" is user bob's own
    uid = stable_uid(user, ends[0], "HAS_DIAGNOSIS", ends[1])
    return [f"{uid}@{user}", str(uuid.UUID(uid))]


def _bobs(m: facade.Memory) -> dict[str, object]:
    (item,) = m.get_all(user_id="bob")["results"]
    return item


def test_an_id_computed_from_the_fact_reaches_nothing(memory: Memory) -> None:
    memory.add_facts([SECRET], user_id="bob")
    m = facade.Memory(memory=memory)
    real = _bobs(m)["id"]
    for computed in _computed_ids("bob"):
        assert computed != real
        if "@" in computed:
            with pytest.raises(InvalidInputError, match="earlier graphmem"):
                m.get(computed)
        else:
            assert m.get(computed) is None
        assert m.get(computed, user_id="mallory") is None
        for scope in ({}, {"user_id": "mallory"}):
            with pytest.raises((NotFoundError, InvalidInputError)):
                m.update(computed, "Bob is healthy", **scope)  # type: ignore[arg-type]
            with pytest.raises((NotFoundError, InvalidInputError)):
                m.delete(computed, **scope)  # type: ignore[arg-type]
            with pytest.raises((NotFoundError, InvalidInputError)):
                m.history(computed, **scope)  # type: ignore[arg-type]
    assert _bobs(m)["memory"] == "Bob has diagnosis Diabetes"  # untouched


def test_a_legacy_id_works_only_in_its_own_scope(memory: Memory) -> None:
    memory.add_facts([SECRET], user_id="bob")
    m = facade.Memory(memory=memory)
    legacy, _ = _computed_ids("bob")
    with pytest.raises(InvalidInputError, match="earlier graphmem"):
        m.get(legacy)
    assert m.get(legacy, user_id="mallory") is None
    assert m.get(legacy, user_id="bob")["id"] == _bobs(m)["id"]  # type: ignore[index]


def test_another_users_id_is_not_found_exactly_like_a_random_one(memory: Memory) -> None:
    memory.add_facts([SECRET], user_id="bob")
    memory.add_facts([("Alice", "LIKES", "tea")], user_id="alice")
    m = facade.Memory(memory=memory)
    bobs = str(_bobs(m)["id"])
    assert m.get(bobs, user_id="alice") is None
    assert m.get(RANDOM_ID, user_id="alice") is None
    for call in (
        lambda mid: m.update(mid, "Bob is healthy", user_id="alice"),
        lambda mid: m.delete(mid, user_id="alice"),
        lambda mid: m.history(mid, user_id="alice"),
        lambda mid: m.delete(mid, agent_id="food-assistant"),
    ):
        with pytest.raises(NotFoundError) as theirs:
            call(bobs)
        with pytest.raises(NotFoundError) as random:
            call(RANDOM_ID)
        assert str(theirs.value).replace(bobs, "ID") == str(random.value).replace(RANDOM_ID, "ID")
    assert m.get(bobs, user_id="bob")["memory"] == "Bob has diagnosis Diabetes"  # type: ignore[index]
    assert m.get(bobs)["user_id"] == "bob"  # type: ignore[index]  # the id alone, as in Mem0


def test_ids_are_stable_across_a_reopen_and_unknown_to_another_store(
    tmp_path: Path, embedder: Embedder, falkordb_server: EmbeddedServer
) -> None:
    home = tmp_path / "home"
    with Memory(data_dir=home, embedder=embedder) as graph, facade.Memory(memory=graph) as m:
        m.graph.add_facts([SECRET], user_id="bob")
        first = _bobs(m)["id"]
    with Memory(data_dir=home, embedder=embedder) as graph, facade.Memory(memory=graph) as m:
        assert _bobs(m)["id"] == first
        assert m.get(str(first))["memory"] == "Bob has diagnosis Diabetes"  # type: ignore[index]
    other_store = FalkorDBStore.embedded(falkordb_server, "mem0_other_store")
    other_store.setup(embedder.dimension)
    other = Memory(store=other_store, embedder=embedder, data_dir=tmp_path / "other")
    try:
        other.add_facts([SECRET], user_id="bob")  # the same fact, so the same uid
        m = facade.Memory(memory=other)
        assert _bobs(m)["id"] != first
        assert m.get(str(first)) is None
    finally:
        other_store.reset()
        other.close()
        other_store.close()


def test_agent_and_run_graphs_cannot_be_named_as_users(memory: Memory) -> None:
    m = facade.Memory(memory=memory)
    m.add("I live in Seattle", agent_id="X")
    for reserved in ("agent:X", "run:Y"):
        with pytest.raises(InvalidInputError, match="keeps 'agent:<id>' and 'run:<id>'"):
            m.get_all(user_id=reserved)
        with pytest.raises(InvalidInputError, match="keeps 'agent:<id>' and 'run:<id>'"):
            m.add("I live in Paris", user_id=reserved)
        with pytest.raises(InvalidInputError, match="keeps 'agent:<id>' and 'run:<id>'"):
            m.delete_all(user_id=reserved)
    assert [r["memory"] for r in m.get_all(agent_id="X")["results"]] == ["X lives in Seattle"]
    assert [u.user_id for u in memory.users()] == ["agent:X"]  # the agent's graph, untouched


def test_the_permutation_round_trips_and_depends_on_the_key() -> None:
    first, second = MemoryIds(b"\x01" * 32), MemoryIds(b"\x02" * 32)
    uids = [stable_uid("user", str(i)) for i in range(500)]
    ids = [first.of(uid) for uid in uids]
    assert [first.uid(mid) for mid in ids] == uids
    assert len(set(ids)) == len(uids)
    assert not set(ids) & {str(uuid.UUID(uid)) for uid in uids}  # not the uid written as a UUID
    assert not set(ids) & {second.of(uid) for uid in uids}
    assert permute(b"k" * 32, bytes(16)) != bytes(16)
