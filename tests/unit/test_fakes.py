"""The fakes of `engine.testing` do what the fast loop relies on, and its rule is enforced."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.embedding import Embedder
from engine.testing import HashEmbedder, HashEncoder
from tests.unit import conftest as guard
from tests.unit.conftest import StoreOrModelInUnitTest, refusing_stores_and_models


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


def test_the_hash_encoder_gives_the_same_unit_vector_for_the_same_text() -> None:
    encoder = HashEncoder(dimension=32)
    first, again, other = encoder.encode(["Ann lives in Oslo", "Ann lives in Oslo", "cats"])
    assert first.shape == (32,) and first.dtype == np.float32
    assert np.array_equal(first, again)
    assert np.linalg.norm(first) == pytest.approx(1.0, abs=1e-6)
    assert not np.array_equal(first, other)


def test_the_hash_encoder_puts_texts_that_share_words_closer() -> None:
    fact, question, unrelated = HashEncoder().encode(
        ["Ann lives in Oslo", "where does Ann live", "the tide rose over the pier"]
    )
    assert _cosine(fact, question) > _cosine(fact, unrelated)


def test_the_hash_encoder_gives_a_text_without_words_a_unit_vector() -> None:
    (vector,) = HashEncoder(dimension=8).encode(["?!"])
    assert vector.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]


def test_a_hash_encoder_of_one_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        HashEncoder(dimension=1)


def test_the_hash_embedder_is_an_embedder_that_loads_nothing() -> None:
    embedder = HashEmbedder(dimension=16)
    assert isinstance(embedder, Embedder)
    with refusing_stores_and_models() as seen:
        vectors = embedder.encode(["Ann", "Bob", "Ann"])
        assert embedder.dimension == 16 and embedder.reads("李雷")
    assert seen == []
    assert vectors.shape == (3, 16) and np.array_equal(vectors[0], vectors[2])
    assert np.array_equal(embedder.encode_one("Bob"), vectors[1])


def test_the_guard_refuses_the_model_and_the_store(tmp_path: Path) -> None:
    """(The store classes come through the guard: a unit test does not import them.)"""
    with refusing_stores_and_models() as seen:
        with pytest.raises(StoreOrModelInUnitTest, match="loads the embedding model"):
            Embedder().encode(["x"])
        with pytest.raises(StoreOrModelInUnitTest, match="spaCy"):
            guard.OfflineExtractor().load()
        with pytest.raises(StoreOrModelInUnitTest, match="starts FalkorDB"):
            guard.EmbeddedServer(tmp_path).ensure_running()
        opening = guard.EmbeddedServer(tmp_path / "store").connecting()  # as a store opens
        with pytest.raises(StoreOrModelInUnitTest, match="starts FalkorDB"), opening:
            pass
        with pytest.raises(StoreOrModelInUnitTest, match="connects to FalkorDB"):
            guard.redis.Redis(unix_socket_path=str(tmp_path / "falkordb.sock"))
        driver = guard.neo4j.GraphDatabase.driver("bolt://localhost:7687")
        with pytest.raises(StoreOrModelInUnitTest, match="connects to Neo4j"):
            driver.session()
        driver.close()
    assert seen == [
        "loads the embedding model",
        "loads the spaCy pipeline",
        "starts FalkorDB",
        "starts FalkorDB",
        "connects to FalkorDB",
        "connects to Neo4j",
    ]


def test_a_unit_test_that_reaches_the_model_fails_even_if_it_catches_the_error(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        "from tests.unit.conftest import (\n"
        "    pytest_runtest_call, pytest_runtest_setup, pytest_runtest_teardown)\n"
    )
    pytester.makepyfile(
        """
        import contextlib
        from engine.embedding import Embedder

        def test_hides_a_model_load():
            with contextlib.suppress(Exception):
                Embedder().encode(["x"])

        def test_plain():
            assert 1 + 1 == 2
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*StoreOrModelInUnitTest*loads the embedding model*"])
