"""Waiting for a store's vector indexes to be built (after a reopen or a bulk write)."""

from __future__ import annotations

import time

from engine.store.base import GraphStore


def wait_built(store: GraphStore, timeout_s: float = 60.0) -> None:
    """Until `store.warming()` names no label; fails after `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while store.warming() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert store.warming() == []
