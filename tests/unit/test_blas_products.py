"""A search's matrix products stay on one BLAS thread (engine/retrieval/blas.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from threadpoolctl import ThreadpoolController

from engine.retrieval.blas import on_one_thread
from engine.retrieval.tuning import RelationParams

MOST = RelationParams().one_thread_products

Array = np.ndarray[Any, Any]


def _vectors(rows: int, seed: int) -> Array:
    vectors = np.random.default_rng(seed).standard_normal((rows, 384)).astype(np.float32)
    unit: Array = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit


@pytest.mark.parametrize(
    ("words", "relations"), [(1, 5), (10, 300), (12, 1000), (64, 2000), (700, 3)]
)
def test_a_product_in_blocks_is_the_product(words: int, relations: int) -> None:
    a, b = _vectors(words, 1), _vectors(relations, 2)
    product = on_one_thread(a, b, MOST)
    assert product.shape == (words, relations)
    assert np.allclose(product, a @ b.T, atol=1e-6)


def _cpu_seconds(product: Callable[[Array, Array], Array]) -> float:
    """The process's CPU time over ten products of a question's words by a chat user's
    relations, each followed by 20 ms of idling (when a BLAS worker woken by it spins)."""
    a, b = _vectors(12, 3), _vectors(1000, 4)
    time.sleep(0.2)  # workers woken earlier go to sleep
    started = time.process_time()
    for _ in range(10):
        product(a, b)
        time.sleep(0.02)
    return time.process_time() - started


def test_a_product_wakes_no_blas_worker() -> None:
    """At two BLAS threads, `a @ b.T` of these sizes took ~0.2 s of CPU here (a worker
    spinning after each product); in blocks, a few milliseconds."""
    with ThreadpoolController().limit(limits=2, user_api="blas"):
        assert _cpu_seconds(lambda a, b: on_one_thread(a, b, MOST)) < 0.05
