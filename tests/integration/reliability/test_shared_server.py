"""One embedded server shared by several users of a data directory: a user that is opening
while the last other one closes is not left with a stopped server."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from engine.store import falkordb as falkordb_store
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.server_record import ServerRecord
from tests.integration.reliability.conftest import Tally

PAUSE_S = 3.0  # how long the opening store waits, between finding the server and connecting


def test_a_store_opening_while_the_last_one_closes_keeps_a_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tally: Tally
) -> None:
    data_dir = tmp_path.resolve()
    first = FalkorDBStore.embedded(EmbeddedServer(data_dir), "shared")
    first.reset()  # connected, and the graph exists
    found, closed = threading.Event(), threading.Event()
    connect = falkordb_store.FalkorDB

    def late_connect(*args: Any, **kwargs: Any) -> Any:
        found.set()  # it has the server's socket: the other store closes now
        closed.wait(PAUSE_S)
        return connect(*args, **kwargs)

    monkeypatch.setattr(falkordb_store, "FalkorDB", late_connect)
    opened: list[FalkorDBStore | BaseException] = []

    def open_second() -> None:
        try:
            opened.append(FalkorDBStore.embedded(EmbeddedServer(data_dir), "shared"))
        except BaseException as exc:  # checked below, in the test's thread
            opened.append(exc)

    thread = threading.Thread(target=open_second)
    thread.start()
    assert found.wait(30)
    first.close()
    closed.set()
    thread.join(60)
    second = opened[0]
    assert isinstance(second, FalkorDBStore), second
    try:
        second.reset()
        assert second.run("count_all_nodes", {}) == [[0]]
        assert ServerRecord.read(data_dir) is not None
    finally:
        second.close()
    assert ServerRecord.read(data_dir) is None  # the last one out stopped it
    tally.cases += 1
