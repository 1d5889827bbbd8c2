"""Each user's write generation on the embedded FalkorDB (`engine/store/generation.py`): the
same while nothing is written, a new one after every write that may have changed the user's
graph, by this `Memory`, another one, or another process; kept across a close and a reopen."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engine.embedding import Embedder
from engine.errors import ClosedError, StoreUnavailableError
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.retrieval.background import BACKGROUND
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.generation import Generations
from engine.store.neo4j import Neo4jStore

ROOT = Path(__file__).resolve().parents[2]
FACTS = [("Kismet", "DIRECTED_BY", "William Dieterle"), ("Kismet", "STARRED", "Marlene Dietrich")]
_graphs = itertools.count()


def _open(server: EmbeddedServer, graph: str, dimension: int) -> FalkorDBStore:
    store = FalkorDBStore.embedded(server, graph)
    store.setup(dimension)
    return store


@pytest.fixture
def graph_name() -> str:
    return f"generation{next(_graphs)}"


@pytest.fixture
def mem(
    falkordb_server: EmbeddedServer,
    embedder: Embedder,
    extractor: OfflineExtractor,
    graph_name: str,
    tmp_path: Path,
) -> Iterator[Memory]:
    store = _open(falkordb_server, graph_name, embedder.dimension)
    yield Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path)
    store.reset()
    store.close()


def _token(mem: Memory, user_id: str) -> str:
    token = mem.store.generation(user_id)
    assert isinstance(token, str) and token
    return token


def test_the_token_stays_while_the_user_is_only_read(mem: Memory) -> None:
    mem.add_facts(FACTS, user_id="u1")
    before = _token(mem, "u1")
    # the first search stores what it derives (the relation names' vectors): no token change
    for _ in range(3):
        mem.search("who directed Kismet", user_id="u1")
        mem.get_all("u1")
        mem.stats("u1")
    BACKGROUND.drain()
    assert _token(mem, "u1") == before
    assert len({_token(mem, "nobody") for _ in range(3)}) == 1  # a user never written


def test_every_write_changes_the_users_token(mem: Memory) -> None:
    seen = [_token(mem, "u1")]
    added = mem.add_facts(FACTS, user_id="u1")
    seen.append(_token(mem, "u1"))
    mem.add_facts(FACTS[:1], user_id="u1")  # only mentions change
    seen.append(_token(mem, "u1"))
    if OfflineExtractor.available():
        mem.add("I live in Paris.", user_id="u1")
        seen.append(_token(mem, "u1"))
    mem.delete(added.fact_uids[0], user_id="u1")
    seen.append(_token(mem, "u1"))
    mem.delete_all(user_id="u1")
    seen.append(_token(mem, "u1"))
    mem.reset()
    seen.append(_token(mem, "u1"))
    assert len(set(seen)) == len(seen), seen


def test_a_write_for_one_user_leaves_anothers_token(mem: Memory) -> None:
    odd = "b:generation:all ünï"  # a user id that looks like a key's tail
    mem.add_facts(FACTS, user_id=odd)
    tokens = {user: _token(mem, user) for user in ("a", odd, "b")}
    mem.add_facts(FACTS, user_id="a")
    mem.delete_all(user_id="a")
    assert _token(mem, odd) == tokens[odd] and _token(mem, "b") == tokens["b"]
    assert _token(mem, "a") != tokens["a"]
    mem.reset()  # names no user: every token changes
    assert all(_token(mem, user) != tokens[user] for user in (odd, "b"))


def test_a_write_through_another_store_changes_the_token(
    mem: Memory, falkordb_server: EmbeddedServer, embedder: Embedder, graph_name: str
) -> None:
    before = _token(mem, "u1")
    other = _open(falkordb_server, graph_name, embedder.dimension)
    try:
        Memory(store=other, embedder=embedder).add_facts(FACTS, user_id="u1")
        assert _token(mem, "u1") != before
        assert other.generation("u1") == _token(mem, "u1")
    finally:
        other.close()


ADD_IN_ANOTHER_PROCESS = """
import sys
from engine.memory import Memory
from engine.retrieval.background import BACKGROUND
with Memory(data_dir=sys.argv[1]) as mem:
    mem.add_facts([("Kismet", "DIRECTED_BY", "William Dieterle")], user_id="u1")
"""


def test_a_write_by_another_process_changes_the_token(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS[1:], user_id="u1")
        before = _token(mem, "u1")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        argv = [sys.executable, "-c", ADD_IN_ANOTHER_PROCESS, str(home)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert _token(mem, "u1") != before
        assert mem.stats("u1").facts == 2


def test_the_token_is_kept_across_a_close_and_a_reopen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with Memory(data_dir=home) as mem:
        mem.add_facts(FACTS, user_id="u1")
        before = _token(mem, "u1")
    assert not EmbeddedServer(home).socket_path.exists()  # stopped: read back from disk
    with Memory(data_dir=home) as mem:
        assert mem.stats("u1").facts == 2
        assert _token(mem, "u1") == before


def test_a_deleted_key_never_brings_back_an_old_token(mem: Memory) -> None:
    assert isinstance(mem.store, FalkorDBStore)
    connection = mem.store._db.connection
    seen = [_token(mem, "u1")]
    keys = sorted(connection.keys(f"graphmem:{mem.store._graph.name}:generation:*"))
    assert [k.decode() if isinstance(k, bytes) else k for k in keys] == [
        f"graphmem:{mem.store._graph.name}:generation:{tail}" for tail in ("all", "users")
    ]
    for _ in range(2):
        connection.delete(*keys)
        seen.append(_token(mem, "u1"))
        assert _token(mem, "u1") == seen[-1]  # created again, then kept
        mem.add_facts(FACTS, user_id="u1")
        seen.append(_token(mem, "u1"))
    assert len(set(seen)) == len(seen), seen


def test_a_generation_the_server_cannot_give_is_a_store_error(
    falkordb_server: EmbeddedServer, embedder: Embedder, graph_name: str, tmp_path: Path
) -> None:
    store = _open(falkordb_server, graph_name, embedder.dimension)
    store.close()
    with pytest.raises(ClosedError):
        store.generation("u1")
    lost = _open(falkordb_server, graph_name, embedder.dimension)
    gone = redis.Redis(unix_socket_path=str(tmp_path / "gone.sock"))  # the server went away
    lost._generations = Generations(gone, graph_name)
    try:
        with pytest.raises(StoreUnavailableError):
            lost.generation("u1")
    finally:
        lost.close()


def test_neo4j_says_it_cannot_tell() -> None:
    assert Neo4jStore.generation(object(), "u1") is None  # type: ignore[arg-type]
