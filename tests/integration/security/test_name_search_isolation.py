"""A name search reads the asking user's matches only: FalkorDB's one fulltext index answers
for every user of a store, so each entity carries its user's key and the search asks for it
(without it a name search cost what every user's matches cost)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store.base import EntityRow, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.fulltext import fulltext_query, user_key
from engine.store.reads import Reads

DIMENSION = 384


def _entities(store: FalkorDBStore, user: str, names: list[str]) -> None:
    now = time.time()
    rows = [EntityRow(f"{user}-{i}", name.lower(), name, None, now) for i, name in enumerate(names)]
    store.write(user, WriteBatch(entities=rows))


def _users_the_index_returns(store: FalkorDBStore, user: str, term: str) -> set[str]:
    """Whose entities FalkorDB's fulltext index itself hands back for `user`'s query."""
    query = fulltext_query("falkordb", [term], user)
    found = store._graph.ro_query(
        "CALL db.idx.fulltext.queryNodes('Entity', $query) YIELD node RETURN node.user_id",
        {"query": query},
    )
    return {row[0] for row in found.result_set}


@pytest.fixture()
def store(falkordb_server: EmbeddedServer) -> Iterator[FalkorDBStore]:
    opened = FalkorDBStore.embedded(falkordb_server, "names")
    opened.setup(DIMENSION)
    _entities(opened, "bob", [f"Harbor Owner {i}" for i in range(300)])
    _entities(opened, "carol", ["Harbor Lights", "Quartz Pine"])
    yield opened
    opened.reset()
    opened.close()


def test_the_index_hands_back_only_the_asking_users_matches(store: FalkorDBStore) -> None:
    assert _users_the_index_returns(store, "carol", "harbor") == {"carol"}
    assert _users_the_index_returns(store, "bob", "harbor") == {"bob"}


def test_a_small_user_beside_a_big_one_finds_its_names(store: FalkorDBStore) -> None:
    found = Reads(store).fulltext_entities("carol", ["harbor"], 10)
    assert [e.name for e, _ in found] == ["Harbor Lights"]
    assert len(Reads(store).fulltext_entities("bob", ["harbor"], 500)) == 300


def test_entities_of_an_older_store_get_their_key_at_setup(
    store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store._graph.query("MATCH (e:Entity {user_id: 'carol'}) REMOVE e.user_key")
    assert Reads(store).fulltext_entities("carol", ["quartz"], 10) == []
    ran: list[str] = []
    run = store.schema._run  # the statements the schema runs
    monkeypatch.setattr(
        store.schema, "_run", lambda name, *a, **k: ran.append(name) or run(name, *a, **k)
    )
    store.setup(DIMENSION)
    # the vector index setup dropped is declared again in the background, and FalkorDB builds
    # the label's index anew meanwhile: under load a name read answered nothing for a moment
    deadline, found = time.monotonic() + 30, []
    while not found and time.monotonic() < deadline:
        found = [e.name for e, _ in Reads(store).fulltext_entities("carol", ["quartz"], 10)]
        time.sleep(0 if found else 0.05)
    assert found == ["Quartz Pine"]
    # a SET would insert each vector into the index again beside its old entry: the index
    # is dropped before the keys are set, and declared again
    assert ran.index("drop_entity_vector_index") < ran.index("set_entity_user_keys")
    deadline = time.monotonic() + 30  # declared again in the background
    while "Entity" not in store.schema.vector_indexes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Entity" in store.schema.vector_indexes()


def test_the_index_setup_dropped_is_declared_while_it_is_still_listed(
    store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FalkorDB lists a dropped index for a while (right after the drop in 109 of 200 tries
    here, more under load): setup declares again the index it dropped to key old entities,
    whatever the listing says."""
    store._graph.query("MATCH (e:Entity {user_id: 'carol'}) REMOVE e.user_key")
    listed = store.schema.vector_indexes
    monkeypatch.setattr(store.schema, "vector_indexes", lambda: listed() | {"Entity"})
    store.setup(DIMENSION)
    monkeypatch.undo()
    deadline = time.monotonic() + 30  # declared again in the background
    while "Entity" not in store.schema.vector_indexes() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Entity" in store.schema.vector_indexes()


def test_a_name_with_more_of_the_query_s_words_ranks_above_names_with_one(
    store: FalkorDBStore,
) -> None:
    """The key is asked beside each term, so a name is scored by all the terms it matches.
    (The ranking that asking it once around all terms broke shows on a large index only:
    MetaQA's 39,659 names, 2-hop hits@10 0.93 -> 0.81; this guards the small case.)"""
    names = [f"{first} Z{i}" for first in ("David", "Davis", "Lynch", "Movies") for i in range(60)]
    _entities(store, "dave", [*names, "David Lynch", "Primary"])
    found = Reads(store).fulltext_entities("dave", ["primary", "movies", "david", "lynch"], 10)
    assert "David Lynch" in [e.name for e, _ in found[:2]]


def test_a_short_name_with_no_typo_variant_is_found(store: FalkorDBStore) -> None:
    """With the key before the term (`@user_key:k rir`) the field applied to both: only the
    typo variants of longer words matched."""
    _entities(store, "dave", ["Rir", "FC 20"])
    assert [e.name for e, _ in Reads(store).fulltext_entities("dave", ["rir"], 5)] == ["Rir"]
    assert [e.name for e, _ in Reads(store).fulltext_entities("dave", ["20"], 5)] == ["FC 20"]


@pytest.mark.parametrize("user", ["bob", 'x") | (*', "@user_key:{a}", "ünïcode 用户", ""])
def test_the_user_key_is_a_plain_token_whatever_the_user_id(user: str) -> None:
    key = user_key(user)
    assert re.fullmatch(r"gm[0-9a-f]{20}k", key)
    assert fulltext_query("falkordb", ["harbor"], user) == (
        f"(harbor @user_key:{key}) | (%harbor% @user_key:{key})"
    )
    assert user_key(user + " ") != key


def test_every_way_of_writing_entities_gives_them_the_user_key(
    falkordb_server: EmbeddedServer, embedder: Embedder, tmp_path: Path
) -> None:
    store = FalkorDBStore.embedded(falkordb_server, "keyed_writes")
    store.setup(embedder.dimension)
    memory = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    try:
        memory.add_facts([("Harbor Lights", "located in", "Quartz Bay")], user_id="added")
        kb = tmp_path / "kb.tsv"
        kb.write_text("Pine Ridge\tlocated in\tQuartz Bay\n", encoding="utf-8")
        memory.load(kb, "loaded")
        memory.import_(memory.export("added"), user_id="imported")
        assert store.run("list_users_without_user_key", {}) == []
        for user in ("added", "loaded", "imported"):
            assert [e.name for e, _ in Reads(store).fulltext_entities(user, ["quartz"], 10)] == [
                "Quartz Bay"
            ], user
    finally:
        store.reset()
        store.close()
