"""The integration tests' fixtures: the real embedded FalkorDB (started here), the real
embedding model, the offline extractor, a store on every adapter that can run here, and a
`Memory` on it."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.server_record import RECORD, ServerRecord, is_server, kill_server
from engine.testing.scripted_llm import ScriptedLLM
from tests.leftovers import ServerLeftWarning

_graph_ids = itertools.count()


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    model = Embedder()
    model.encode(["warm up"])
    return model


@pytest.fixture(scope="session")
def extractor() -> OfflineExtractor:
    """The offline (spaCy) extractor, its pipeline loaded once per worker (the tests that take
    it skip themselves where spaCy is missing)."""
    ex = OfflineExtractor()
    ex.load()
    return ex


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    server = EmbeddedServer(tmp_path_factory.mktemp("falkordb"))
    # the session holds a connection, so a test closing the last store of its own does not
    # stop the shared server (the last client out stops it: engine/store/falkordb_server.py)
    keeper = redis.Redis(unix_socket_path=str(server.ensure_running()))
    keeper.ping()
    yield server
    keeper.close()
    left = server.clients()
    assert server.stop_if_unused(), f"the suite left clients on its server: {left}"


@pytest.fixture(autouse=True)
def _no_server_left(request: pytest.FixtureRequest) -> Iterator[None]:
    """An embedded server a test's Memory started in its `tmp_path` and left running is
    stopped, and named with the end of its log (`ServerLeftWarning`)."""
    yield
    tmp_path = request.node.funcargs.get("tmp_path")
    if not isinstance(tmp_path, Path):
        return
    for found in tmp_path.rglob(RECORD):
        record = ServerRecord.read(found.parent)
        if record is None or not is_server(record):
            continue
        kill_server(record)
        log = found.parent / "falkordb.log"
        tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
        with warnings.catch_warnings():  # shown, not raised by the suite's "error" filter
            warnings.simplefilter("always", ServerLeftWarning)
            warnings.warn(
                f"{request.node.nodeid} left the embedded server of {found.parent} running "
                f"(pid {record.pid}, now stopped); its log ends:\n" + "\n".join(tail),
                ServerLeftWarning,
                stacklevel=1,
            )


def _falkordb_store(server: EmbeddedServer, dimension: int) -> FalkorDBStore:
    store = FalkorDBStore.embedded(server, f"test{next(_graph_ids)}")
    store.setup(dimension)
    return store


@pytest.fixture(params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(
    request: pytest.FixtureRequest, falkordb_server: EmbeddedServer, embedder: Embedder
) -> Iterator[GraphStore]:
    """A fresh, set-up graph on every adapter that can run here."""
    if request.param == "neo4j":
        from tests.neo4j_fixture import neo4j_store_or_skip

        adapter: GraphStore = neo4j_store_or_skip(embedder.dimension)
    else:
        adapter = _falkordb_store(falkordb_server, embedder.dimension)
    yield adapter
    adapter.reset()
    adapter.close()


@pytest.fixture
def memory(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Iterator[Memory]:
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    yield mem


@pytest.fixture
def cli_home(tmp_path: Path) -> Iterator[Path]:
    """A data dir for `graphmem` commands, its server stopped after them."""
    home = tmp_path / "home"
    yield home
    EmbeddedServer(home).stop_if_unused()


@pytest.fixture
def quiet_memory(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> Iterator[Memory]:
    """A `Memory` whose LLM (the scripted one) finds nothing in any message: for tests of
    what an ingest stores, not of what it extracts."""
    memory = Memory(
        store=store,
        embedder=embedder,
        data_dir=tmp_path / "data",
        openai_base_url=scripted_llm.base_url,
        openai_api_key="test",
        llm_max_retries=0,
    )
    yield memory
    memory.close()
