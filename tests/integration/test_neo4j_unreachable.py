"""A Neo4j server that is not there fails when the store opens, at once, as graphmem's
`StoreUnavailableError` naming the URI (never the password): in Python, through `Memory`, at
the CLI (one line, no driver warnings) and in the LlamaIndex property graph store. No server
is needed: the URI points at a port where nothing listens, or where nothing ever answers."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from engine.config import build_settings
from engine.errors import ConfigError, StoreUnavailableError
from engine.memory import Memory
from engine.store.neo4j import Neo4jStore
from tests.mcp_wire import ENV, GRAPHMEM

PASSWORD = "pw-never-shown-7f3a"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def nowhere() -> str:
    return f"bolt://127.0.0.1:{_free_port()}"


@pytest.fixture
def silent() -> Iterator[str]:
    """A port that accepts connections and never says a word (a firewall, a hung server)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        yield f"bolt://127.0.0.1:{server.getsockname()[1]}"


def test_a_store_where_nothing_listens_fails_at_once_naming_the_uri(nowhere: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        Neo4jStore.from_settings(nowhere, "neo4j", PASSWORD)

    said = str(caught.value)
    assert time.monotonic() - started < 5
    assert said.startswith(f"Neo4j is unreachable at {nowhere}: "), said
    assert "Connection refused" in said and "\n" not in said and PASSWORD not in said


def test_a_server_that_never_answers_is_given_up_after_the_connect_timeout(silent: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        Neo4jStore.from_settings(silent, "neo4j", PASSWORD, connect_timeout_s=1.0)

    assert time.monotonic() - started < 5
    assert str(caught.value).startswith(f"Neo4j is unreachable at {silent}: ")


def test_the_connect_wait_is_a_setting(silent: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError, match=f"Neo4j is unreachable at {silent}"):
        Memory(store="neo4j", neo4j_uri=silent, neo4j_connect_timeout_s=0.5,
               embedding_preload=False)  # fmt: skip
    assert time.monotonic() - started < 4  # the default waits 5 s


def test_a_memory_on_an_unreachable_neo4j_fails_as_it_opens(nowhere: str) -> None:
    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        Memory(build_settings(store="neo4j", neo4j_uri=nowhere, neo4j_password=PASSWORD,
                              embedding_preload=False))  # fmt: skip

    assert time.monotonic() - started < 10
    assert nowhere in str(caught.value) and PASSWORD not in str(caught.value)


def test_store_may_name_the_backend_as_graphmem_store_does(nowhere: str) -> None:
    """`Memory(store="neo4j", ...)` kept the string as the store object: nothing opened, and
    the first call failed on an attribute."""
    with pytest.raises(StoreUnavailableError, match=f"Neo4j is unreachable at {nowhere}"):
        Memory(store="neo4j", neo4j_uri=nowhere, embedding_preload=False)
    with pytest.raises(ConfigError, match="store: Input should be 'falkordb' or 'neo4j'"):
        Memory(store="mongo", embedding_preload=False)


@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_the_cli_says_one_line_without_driver_warnings(
    tmp_path: os.PathLike[str], scheme: str
) -> None:
    uri = f"{scheme}://127.0.0.1:{_free_port()}"
    env = {**ENV, "GRAPHMEM_HOME": str(tmp_path), "GRAPHMEM_STORE": "neo4j", "NEO4J_URI": uri,
           "NEO4J_PASSWORD": PASSWORD}  # fmt: skip
    started = time.monotonic()
    done = subprocess.run([GRAPHMEM, "stats"], env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip

    assert done.returncode == 1
    assert done.stderr.startswith(f"graphmem: error: Neo4j is unreachable at {uri}: "), done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
    assert PASSWORD not in done.stderr
    assert time.monotonic() - started < 25  # the driver retried for 30 s


def test_the_llama_index_store_fails_as_it_opens(nowhere: str) -> None:
    from engine.integrations.llama_index.graph_store import GraphmemPropertyGraphStore

    started = time.monotonic()
    with pytest.raises(StoreUnavailableError) as caught:
        GraphmemPropertyGraphStore("neo4j", PASSWORD, nowhere, user_id="alice")

    assert time.monotonic() - started < 5
    assert str(caught.value).startswith(f"Neo4j is unreachable at {nowhere}: ")
    assert PASSWORD not in str(caught.value)
