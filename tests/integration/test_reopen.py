"""Reopening a store: a clean close leaves no vector index to rebuild before the server answers,
and while the indexes are built again search answers from the other legs and says so."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from falkordb import FalkorDB

from engine.errors import ConfigError, StoreUnavailableError
from engine.memory import Memory
from engine.store import falkordb_schema
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer, single_try_client
from engine.testing import HashEmbedder
from tests.warming import wait_built

FACTS = [
    ("Kismet", "DIRECTED_BY", "William Dieterle"),
    ("Kismet", "STARRED_ACTORS", "Marlene Dietrich"),
    ("The Scarlet Empress", "STARRED_ACTORS", "Marlene Dietrich"),
]


def test_a_small_graph_reopens_with_its_vector_indexes_built(tmp_path: Path) -> None:
    """A newcomer's 8-fact graph showed as warming after every CLI start."""
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
    with Memory(data_dir=home) as mem:
        assert mem.stats().warming == []


def _construction_widths(mem: Memory) -> dict[str, int]:
    rows = mem.store._graph.query(  # type: ignore[attr-defined]
        "CALL db.indexes() YIELD label, options RETURN label, options"
    ).result_set
    vectors = [(label, opts["embedding"]) for label, opts in rows if "embedding" in opts]
    return {label: vector["efConstruction"] for label, vector in vectors}


def test_vector_indexes_are_declared_with_the_stores_construction_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new store's vector indexes, and those a reopen declares again, weigh
    `VECTOR_EF_CONSTRUCTION` candidates an insert, whatever FalkorDB's default (200)."""
    home = tmp_path / "home"
    width = 96
    monkeypatch.setattr(falkordb_schema, "VECTOR_EF_CONSTRUCTION", width)
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
        assert _construction_widths(mem) == {"Entity": width, "Fact": width, "Episode": width}
    with Memory(data_dir=home) as mem:
        assert mem.search("who directed Kismet", user_id="u1").facts  # declares the indexes
        wait_built(mem.store)
        assert _construction_widths(mem) == {"Entity": width, "Fact": width, "Episode": width}


def test_search_answers_while_vector_indexes_are_built(memory: Memory) -> None:
    store = memory.store
    if not isinstance(store, FalkorDBStore):
        return  # Neo4j keeps its vector indexes on disk: nothing warms
    memory.add_facts(FACTS, user_id="u1")
    wait_built(store)
    for label in ("entity", "fact"):
        store.run(f"drop_{label}_vector_index", {}, read_only=False)
    time.sleep(1.1)  # the store looks the indexes up again at most once a second
    result = memory.search("who directed Kismet", user_id="u1")
    assert result.warming == ["Entity", "Fact"]
    assert result.facts[0].fact.text == "Kismet directed by William Dieterle"
    assert "semantic" in {leg for hit in result.facts for leg in hit.legs}  # by exact scan
    assert memory.stats("u1").warming == ["Entity", "Fact"]
    store.setup(384)
    wait_built(store)
    warm = memory.search("who directed Kismet", user_id="u1")
    assert warm.warming == [] and "semantic" in {leg for hit in warm.facts for leg in hit.legs}


def test_a_clean_close_leaves_no_vector_index_to_rebuild(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
    server = EmbeddedServer(home)
    assert not server.socket_path.exists()  # the last process stopped it
    client = FalkorDB(unix_socket_path=str(server.ensure_running()))
    graph = client.select_graph("graphmem")
    indexed = [
        types
        for _, types in graph.ro_query(
            "CALL db.indexes() YIELD label, types RETURN label, types"
        ).result_set
    ]
    assert indexed and not any("VECTOR" in kinds for t in indexed for kinds in t.values())
    assert graph.ro_query("MATCH (f:Fact) RETURN count(f)").result_set == [[3]]
    client.connection.close()
    with Memory(data_dir=home) as mem:
        hits = mem.search("who directed Kismet", user_id="u1").facts
        assert hits[0].fact.text == "Kismet directed by William Dieterle"
        wait_built(mem.store)
        assert mem.stats("u1").facts == 3
    assert not server.socket_path.exists()


def _indexed_fields(home: Path) -> dict[str, set[str]]:
    """Each label's indexed fields as the store's snapshot declares them (the server started
    alone, no setup run)."""
    server = EmbeddedServer(home)
    client = FalkorDB(unix_socket_path=str(server.ensure_running()))
    try:
        rows = (
            client.select_graph("graphmem")
            .ro_query("CALL db.indexes() YIELD label, properties RETURN label, properties")
            .result_set
        )
        return {label: set(fields) for label, fields in rows}
    finally:
        client.connection.close()
        server.stop_if_unused()


def test_a_clean_close_leaves_the_indexes_no_search_reads_to_the_next_setup(
    tmp_path: Path,
) -> None:
    """FalkorDB builds every index of a snapshot before it answers: the change history's and
    the fulltext indexes of facts and messages (~1 s of a 128k-fact reopen) are declared
    again by setup and built in the background instead."""
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        uid = mem.add_facts(FACTS, user_id="u1").fact_uids[0]
    dropped = _indexed_fields(home)
    assert "History" not in dropped
    assert dropped["Fact"] == {"uid", "user_id"}
    assert "content" not in dropped["Episode"] and "uid" in dropped["Episode"]
    assert {"name", "user_key"} <= dropped["Entity"]  # the name search's stays
    with Memory(data_dir=home) as mem:
        assert [e.event for e in mem.history(uid, user_id="u1")] == ["ADD"]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            built = {
                label: fields
                for label, fields, status in mem.store.run("list_indexes", {})
                if status == "OPERATIONAL"
            }
            fulltext = ("text" in built.get("Fact", {}), "content" in built.get("Episode", {}))
            if "History" in built and all(fulltext):
                break
            time.sleep(0.1)
        assert set(built["History"]) == {"user_id", "target_uid", "uid"}
        assert built["Fact"]["text"] == ["FULLTEXT"]
        assert built["Episode"]["content"] == ["FULLTEXT"]


def test_a_close_soon_after_a_reopen_still_leaves_them_out(tmp_path: Path) -> None:
    """A drop while FalkorDB still builds the index again is lost (the build finishes with the
    field): a process closing right after its reopen left them in every other snapshot."""
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
        mem.store._graph.query(  # enough facts that building their index takes a while
            "UNWIND range(1, 200000) AS i CREATE (:Fact {user_id: 'u2', uid: 'f' + toString(i),"
            " text: 'fact number ' + toString(i)})"
        )
    for _ in range(2):
        with Memory(data_dir=home, embedding_preload=False) as mem:
            assert mem.stats("u1").facts == 3  # set up: the indexes declared again
        assert "text" not in _indexed_fields(home)["Fact"]


def test_vector_indexes_are_declared_one_after_another(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A declaration while FalkorDB builds another index waits for the build's batch, and
    every read waits behind it: the next index is declared only once the one before is built."""
    store = memory.store
    if not isinstance(store, FalkorDBStore):
        return
    monkeypatch.setattr(falkordb_schema, "BUILD_NOW", 0)  # built in the background, as if large
    memory.add_facts(FACTS, user_id="u1")
    wait_built(store)
    for label in ("entity", "fact"):
        store.run(f"drop_{label}_vector_index", {}, read_only=False)
    built = threading.Event()  # until set, the Entity index counts as still being built
    real = store.schema.warming_now
    store.schema.warming_now = lambda even_when_built=False: (  # type: ignore[method-assign]
        real(even_when_built) | (set() if built.is_set() else {"Entity"})
    )
    store.setup(384)
    time.sleep(1.5)
    declared = store.schema.vector_indexes()
    built.set()
    wait_built(store)
    assert declared == {"Entity", "Episode"}  # Episode's was never dropped; Fact's waits


def test_a_store_closed_while_its_indexes_are_declared_stops_its_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close while a reopen's vector indexes were being declared in the background saw the
    declaration's connection, took it for another client's and left the server running
    (twice in ten runs of the suite)."""
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
    monkeypatch.setattr(falkordb_schema, "BUILD_NOW", 0)  # declared in a thread, as if large
    connected = threading.Event()

    def slow(*args: object, **kwargs: object) -> object:
        client = single_try_client(*args, **kwargs)  # type: ignore[arg-type]
        if threading.current_thread() is not threading.main_thread():  # the background's
            client.ping()  # connected, as while FalkorDB works on the declaration's query
            connected.set()
            time.sleep(1.0)
        return client

    monkeypatch.setattr(falkordb_schema, "single_try_client", slow)
    with Memory(data_dir=home, embedding_preload=False) as mem:
        assert mem.stats("u1").facts == 3  # opens the store: its indexes are declared
        assert connected.wait(10)

    assert not EmbeddedServer(home).running()


def test_a_reopen_declares_the_vector_indexes_without_loading_the_model(tmp_path: Path) -> None:
    """A command that embeds nothing (`graphmem users`) waited ~1.5 s for the model: the
    dropped indexes were declared again with the model's dimension."""
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
    with Memory(data_dir=home, embedding_preload=False) as mem:
        assert mem.stats("u1").facts == 3
        wait_built(mem.store)
        assert "model" not in vars(mem.embedder)
        dimensions = mem.store.run("list_vector_dimensions", {})
        assert sorted(dimensions) == [["Entity", 384], ["Episode", 384], ["Fact", 384]]
        hits = mem.search("who directed Kismet", user_id="u1").facts
        assert hits[0].fact.text == "Kismet directed by William Dieterle"


def test_a_store_refuses_an_embedding_model_of_another_size(tmp_path: Path) -> None:
    """Vectors of another size were stored, and every search after them failed."""
    home = tmp_path / "home"
    with Memory(data_dir=home, embedder=HashEmbedder()) as mem:
        mem.add_facts(FACTS, user_id="u1")
    refused = f"{HashEmbedder().dimension} values"
    with Memory(data_dir=home) as mem:
        with pytest.raises(ConfigError, match=refused):
            mem.add_facts([("Bob", "LIKES", "coffee")], user_id="u1")
        with pytest.raises(ConfigError, match=refused):
            mem.search("who directed Kismet", user_id="u1")
    with Memory(data_dir=home, embedder=HashEmbedder()) as mem:
        assert mem.stats("u1").facts == 3
        assert mem.search("who directed Kismet", user_id="u1").facts


def test_a_store_refuses_another_embedding_model_of_its_size(tmp_path: Path) -> None:
    """A model of the same size mixed its vectors with the store's unnoticed, and every search
    ranked by noise. The same model on another runtime is not another model."""
    home, refused = tmp_path / "home", "made by the embedding model 'all-MiniLM-L6-v2'"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
    with Memory(data_dir=home, embedding_runtime="torch") as mem:
        assert mem.search("who directed Kismet", user_id="u1").facts
    with Memory(data_dir=home, embedder=HashEmbedder(384)) as mem:
        with pytest.raises(ConfigError, match=f"{refused} .*'hash-384'"):
            mem.add_facts([("Bob", "LIKES", "coffee")], user_id="u1")
        with pytest.raises(ConfigError, match=refused):
            mem.search("who directed Kismet", user_id="u1")
        assert mem.stats("u1").facts == 3  # what embeds nothing is served
        mem.delete_all(user_id="u1")  # a store that holds no memory takes the model it meets
        mem.add_facts([("Bob", "LIKES", "coffee")], user_id="u2")
        assert mem.search("what does Bob like", user_id="u2").facts
    with Memory(data_dir=home) as mem, pytest.raises(ConfigError, match="'hash-384'"):
        mem.search("what does Bob like", user_id="u2")


def test_a_vector_index_whose_declaration_failed_is_declared_again(
    falkordb_server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A declaration that failed (the server busy past the schema's patience) left the label
    without a vector index for the life of the process: it is tried again."""
    store = FalkorDBStore.embedded(falkordb_server, "declared_again")
    store.setup(384)
    store.run("drop_entity_vector_index", {}, read_only=False)
    declare, failed = store.schema.declare, []

    def busy_once(name: str, dimension: int | None = None) -> None:
        if "_entity_vector" in name and not failed:
            failed.append(name)
            raise StoreUnavailableError("FalkorDB is unreachable: Timeout reading from socket")
        declare(name, dimension)

    monkeypatch.setattr(store.schema, "declare", busy_once)
    store.setup(384)
    assert failed and "Entity" in store.schema.vector_indexes()
    store.reset()
    store.close()
