"""Counts a caller passes (limits, offsets) are checked at the entry, with our error, before
any store sees them (a database answered a negative or missing limit with its own error)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest

from engine.errors import InvalidInputError
from engine.memory import Memory
from engine.normalize import check_count
from engine.store.base import GraphStore
from engine.testing import HashEmbedder


class _Unreachable:
    """A store any use of which fails the test: a bad count is refused before it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used ({name}) before the count was checked")


@pytest.mark.parametrize("value", [-1, 0, None, "3", 2.0, True, 1001])
def test_a_count_outside_its_range_or_not_an_integer_is_named(value: object) -> None:
    with pytest.raises(InvalidInputError) as caught:
        check_count(value, "limit", 1, 1000)
    assert str(caught.value) == f"limit must be between 1 and 1000, got {value!r}"


def test_a_count_in_its_range_is_returned_as_given() -> None:
    assert check_count(0, "offset", 0) == 0
    assert check_count(10**9, "offset", 0) == 10**9


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda m: m.get_all("alice", limit=-5), "limit must be an integer of at least 0, got -5"),
        (lambda m: m.get_all("alice", limit=None), "limit must be an integer of at least 0"),
        (lambda m: m.get_all("alice", offset=-1), "offset must be an integer of at least 0"),
        (lambda m: m.search("tea", "alice", limit="3"), "limit must be between 1 and 1000"),
        (lambda m: m.search("tea", "alice", limit=True), "limit must be between 1 and 1000"),
    ],
)
def test_memory_refuses_a_bad_count_before_the_store(
    tmp_path: Path, call: Callable[[Memory], Any], says: str
) -> None:
    mem = Memory(data_dir=tmp_path, embedder=HashEmbedder(), store=cast(GraphStore, _Unreachable()))
    try:
        with pytest.raises(InvalidInputError, match=says):
            call(mem)
    finally:
        mem.close()
