"""The MCP server's log lines name their logger once: graphmem's messages start "graphmem: "
for a process that configured no logging (Python then prints the bare message), and the
server's format names the logger too, so its log read "WARNING graphmem: graphmem: no LLM
configured ..." at every start."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from engine.mcp_server import server


@pytest.fixture
def root_logging() -> Iterator[None]:
    """The root logger as it was: `plain_logging` replaces its handlers."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    for handler in root.handlers[:]:
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)


def test_a_graphmem_record_names_its_logger_once(
    root_logging: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = io.StringIO()
    monkeypatch.setattr(server.sys, "stderr", stream)
    server.plain_logging()

    logging.getLogger("graphmem").warning("graphmem: no LLM configured: %s", "offline")
    logging.getLogger("graphmem.mcp").info("ready")
    logging.getLogger("other").warning("graphmem: kept as written")

    lines = [line.split(" ", 2)[2] for line in stream.getvalue().splitlines()]
    assert lines == [
        "WARNING graphmem: no LLM configured: offline",
        "INFO graphmem.mcp: ready",
        "WARNING other: graphmem: kept as written",
    ]
