"""A time window whose `since` is later than its `until` holds nothing: it was almost always
given the wrong way round. Every door refuses it naming both times (it answered nothing, as if
nothing had been said then): `Memory.search`, `get_all`, `entity` and `top_entities`, MCP's
tools in their one-line `Kind: message` shape, the CLI with exit status 2 (see
tests/unit/test_cli_search_arguments.py), all through `engine.times.time_window`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import anyio
import pytest
from mcp import Client
from mcp.types import TextContent

from engine.errors import InvalidInputError
from engine.mcp_server.access import Mode
from engine.mcp_server.server import Dispatch, build_server
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing import HashEmbedder
from engine.times import time_window
from tests.mcp_wire import REFUSAL

LATE, EARLY = "2024-05-02", "2024-05-01T12:00:00+02:00"
SAYS = (
    "since (2024-05-02T00:00:00Z) is later than until (2024-05-01T10:00:00Z): the window "
    "holds nothing; swap them"
)


class _Unreachable:
    """A store any use of which fails the test: a swapped window is refused before it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the store was used ({name}) before the window was checked")


@pytest.fixture
def storeless(tmp_path: Path) -> Any:
    mem = Memory(data_dir=tmp_path, embedder=HashEmbedder(), store=cast(GraphStore, _Unreachable()))
    yield mem
    mem.close()


def test_a_swapped_window_names_both_times_in_utc() -> None:
    with pytest.raises(InvalidInputError) as refused:
        time_window(LATE, EARLY)
    assert str(refused.value) == SAYS


def test_one_instant_and_open_windows_are_windows() -> None:
    instant = datetime(2024, 5, 1, tzinfo=UTC).timestamp()

    assert time_window("2024-05-01", instant) == (instant, instant)
    assert time_window(None, "2024-05-01") == (None, instant)
    assert time_window(instant, " ") == (instant, None)


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.search("tea", "alice", since=LATE, until=EARLY),
        lambda m: m.get_all("alice", since=LATE, until=EARLY),
        lambda m: m.entity("Bob", "alice", since=LATE, until=EARLY),
        lambda m: m.top_entities("alice", since=LATE, until=EARLY),
    ],
    ids=["search", "get_all", "entity", "top_entities"],
)
def test_memory_refuses_a_swapped_window_before_the_store(
    storeless: Memory, call: Callable[[Memory], Any]
) -> None:
    with pytest.raises(InvalidInputError) as refused:
        call(storeless)
    assert str(refused.value) == SAYS


class _Holder:
    def __init__(self, built: Memory) -> None:
        self.memory = built

    def get(self) -> Memory:
        return self.memory


@pytest.mark.parametrize("tool", ["search_memory", "get_entity"])
def test_mcp_refuses_a_swapped_window_in_one_line(storeless: Memory, tool: str) -> None:
    server = build_server(Dispatch(_Holder(storeless), Mode("alice", False), gated=False))
    asked = {"query": "tea"} if tool == "search_memory" else {"name": "Bob"}

    async def run() -> Any:
        async with Client(server) as client:
            return await client.call_tool(tool, {**asked, "since": LATE, "until": EARLY})

    result = anyio.run(run)
    text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
    assert result.is_error
    assert text == f"InvalidInputError: {SAYS}"
    assert REFUSAL.fullmatch(text)
