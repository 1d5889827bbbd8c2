"""The reliability tally: each test records cases tried, faults injected and data lost, and
the terminal summary prints one line per test (quoted in the issue's closing note)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from engine.embedding import Embedder
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer


@dataclass(slots=True)
class Tally:
    """What one reliability test did; `lost` counts acknowledged data found missing."""

    name: str
    cases: int = 0
    faults: int = 0
    lost: int = 0


_TALLIES: list[Tally] = []


@pytest.fixture(scope="session")
def shared_store(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[GraphStore]:
    """One embedded graph shared by the suite's tests that need no adapter parametrization
    (setting up a graph takes seconds); they keep apart by user id."""
    graph = FalkorDBStore.embedded(falkordb_server, "reliability")
    graph.setup(embedder.dimension)
    yield graph
    graph.reset()
    graph.close()


@pytest.fixture
def tally(request: pytest.FixtureRequest) -> Iterator[Tally]:
    record = Tally(request.node.name)
    yield record
    _TALLIES.append(record)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _TALLIES:
        return
    terminalreporter.section("reliability: cases tried, faults injected, data lost")
    for t in _TALLIES:
        terminalreporter.write_line(
            f"{t.name}: {t.cases} cases, {t.faults} faults injected, {t.lost} lost"
        )
