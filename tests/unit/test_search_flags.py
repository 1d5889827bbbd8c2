"""A flag of `search` / `get_all` given as anything but True or False is refused naming it,
before the store is used: `include_invalid="false"` was truthy, so the search answered with
the facts that had ended, the opposite of what was asked."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from engine.errors import InvalidInputError
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing import HashEmbedder


class _Unreachable:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used ({name}) before the flag was checked")


@pytest.fixture
def storeless(tmp_path: Path) -> Iterator[Memory]:
    mem = Memory(data_dir=tmp_path, embedder=HashEmbedder(), store=cast(GraphStore, _Unreachable()))
    yield mem
    mem.close()


CALLS = {
    "search include_invalid": (
        lambda m: m.search("tea", "alice", include_invalid="false"),
        "include_invalid must be True or False, got 'false'",
    ),
    "search explain": (
        lambda m: m.search("tea", "alice", explain="yes"),
        "explain must be True or False, got 'yes'",
    ),
    "search explain 1": (
        lambda m: m.search("tea", "alice", explain=1),
        "explain must be True or False, got 1",
    ),
    "get_all include_invalid": (
        lambda m: m.get_all("alice", include_invalid=None),
        "include_invalid must be True or False, got None",
    ),
}


@pytest.mark.parametrize("call, says", CALLS.values(), ids=list(CALLS))
def test_a_flag_that_is_not_a_bool_is_refused_naming_it(
    storeless: Memory, call: Callable[[Memory], Any], says: str
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        call(storeless)
    assert str(refused.value) == says
