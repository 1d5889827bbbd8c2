"""The fast loop's rule, checked: a test under tests/unit opens no store and loads no model.

While a unit test runs (its fixtures' setup and teardown too), the calls that load the
embedding model or the offline extractor's spaCy pipeline, start the model's process or the
embedded FalkorDB server, or connect to FalkorDB (a redis client) or Neo4j (a driver's session
or query) raise `StoreOrModelInUnitTest`, and the test fails even when it catches that error:
such a test belongs in tests/integration. An adapter over a fake client or driver is fine.
Unit tests embed with `engine.testing.HashEmbedder` and talk to
`engine.testing.ScriptedLLM`. (tests/unit/test_architecture.py checks the same statically: a unit
test imports nothing that starts a store or loads the model.)
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

import neo4j
import pytest
import redis

from engine.embedding import Embedder
from engine.embedding import embedder as embedding
from engine.embedding import runtime as embedding_runtime
from engine.embedding.worker import ModelProcess
from engine.extraction.offline import OfflineExtractor
from engine.store.falkordb_server import EmbeddedServer
from engine.testing import HashEmbedder


class StoreOrModelInUnitTest(AssertionError):
    """A unit test reached a store or the embedding model."""


def _refuse(what: str, seen: list[str]) -> Callable[..., Any]:
    def refuse(*args: object, **kwargs: object) -> Any:
        seen.append(what)
        raise StoreOrModelInUnitTest(f"a unit test {what}: move it to tests/integration")

    return refuse


@contextmanager
def refusing_stores_and_models() -> Iterator[list[str]]:
    """While open, the doors to a store or the model raise; yields what was tried."""
    seen: list[str] = []
    patch = pytest.MonkeyPatch()
    loads = _refuse("loads the embedding model", seen)
    patch.setattr(Embedder, "model", property(loads))
    patch.setattr(embedding, "load_encoder", loads)
    patch.setattr(embedding_runtime, "load_encoder", loads)
    patch.setattr(ModelProcess, "__init__", _refuse("starts the model's process", seen))
    patch.setattr(OfflineExtractor, "load", _refuse("loads the spaCy pipeline", seen))
    patch.setattr(EmbeddedServer, "ensure_running", _refuse("starts FalkorDB", seen))
    patch.setattr(EmbeddedServer, "_start", _refuse("starts FalkorDB", seen))  # via connecting
    patch.setattr(redis.Redis, "__init__", _refuse("connects to FalkorDB", seen))
    for opens_a_connection in ("session", "execute_query", "verify_connectivity"):
        patch.setattr(neo4j.Driver, opens_a_connection, _refuse("connects to Neo4j", seen))
    try:
        yield seen
    finally:
        patch.undo()


def _guarded(phase: str) -> Generator[None, object, object]:
    with refusing_stores_and_models() as seen:
        result = yield
    if seen:
        raise StoreOrModelInUnitTest(f"{phase}: {'; '.join(dict.fromkeys(seen))}")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guarded("setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    return (yield from _guarded("call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    if nextitem is None:  # the session's own fixtures (an integration server) stop here too
        return (yield)
    return (yield from _guarded("teardown"))


@pytest.fixture
def hash_embedder() -> HashEmbedder:
    """An embedder with no model: vectors from hashed words (`engine.testing`)."""
    return HashEmbedder()
