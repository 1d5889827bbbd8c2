"""The append-only file's rewrite before a stop: a close waits for it, but not forever, and
says when it failed (the stop goes on: the old file stays whole)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from engine.errors import StoreError
from engine.store.falkordb import _rewrite_append_only_file
from engine.store.falkordb_server import _run_before_stop


class _Server:
    """The two calls the rewrite makes, answered as a server whose rewrite hangs or fails."""

    def __init__(self, busy: bool, status: str = "ok") -> None:
        self.busy, self.status, self.asked = busy, status, 0

    def info(self, section: str) -> dict[str, Any]:
        assert section == "persistence"
        return {"aof_rewrite_in_progress": int(self.busy), "aof_last_bgrewrite_status": self.status}

    def bgrewriteaof(self) -> None:
        self.asked += 1


def test_a_rewrite_that_never_ends_is_given_up_on() -> None:
    hung = _Server(busy=True)
    with pytest.raises(StoreError, match="rewrite took over 0 s"):
        _rewrite_append_only_file(hung, patience_s=0.2)  # type: ignore[arg-type]
    assert hung.asked == 0  # it was still waiting for the rewrite already running


def test_a_failed_rewrite_is_said_and_the_stop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    failing = _Server(busy=False, status="err")
    with caplog.at_level(logging.WARNING):
        _run_before_stop(lambda: _rewrite_append_only_file(failing))  # type: ignore[arg-type]
    assert failing.asked == 1
    assert "not compacted" in caplog.text and "'err'" in caplog.text


def test_a_rewrite_that_ends_raises_nothing() -> None:
    done = _Server(busy=False)
    _rewrite_append_only_file(done)  # type: ignore[arg-type]
    assert done.asked == 1
