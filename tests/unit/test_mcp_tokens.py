"""The MCP token file (`engine/mcp_server/tokens.py`), without a store or a model."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engine.mcp_server import tokens
from engine.mcp_server.access import Mode


def test_tokens_made_at_once_are_all_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    read = tokens._read

    def slow_read(path: Path) -> dict[str, Any]:  # each maker reads before any writes back
        doc = read(path)
        time.sleep(0.2)
        return doc

    monkeypatch.setattr(tokens, "_read", slow_read)
    made: dict[str, str] = {}

    def make(user: str) -> None:
        made[user] = tokens.token_for(tmp_path, user)

    makers = [threading.Thread(target=make, args=(user,)) for user in ("alice", "bob", "carol")]
    for maker in makers:
        maker.start()
        time.sleep(0.05)
    for maker in makers:
        maker.join()

    kept = json.loads((tmp_path / tokens.TOKEN_FILE).read_text(encoding="utf-8"))["users"]
    assert kept == made
    assert len(made) == 3


def test_a_token_made_while_the_server_runs_is_accepted_at_once(tmp_path: Path) -> None:
    table = tokens.token_table(tmp_path, Mode(None, any_user=True), None)

    bob = tokens.token_for(tmp_path, "bob")  # graphmem mcp --user bob --print-token

    assert table.check(bob) == tokens.Grant("bob")


def test_deleting_the_token_file_revokes_its_tokens_at_once(tmp_path: Path) -> None:
    table = tokens.token_table(tmp_path, Mode("alice", any_user=False), None)
    leaked = tokens.token_for(tmp_path, "alice")
    assert table.check(leaked) == tokens.Grant("alice")

    (tmp_path / tokens.TOKEN_FILE).unlink()

    assert table.check(leaked) is None
    fresh = tokens.token_for(tmp_path, "alice")
    assert fresh != leaked
    assert table.check(fresh) == tokens.Grant("alice")


def test_a_token_file_others_may_read_is_refused_while_it_is(tmp_path: Path) -> None:
    table = tokens.token_table(tmp_path, Mode("alice", any_user=False), None)
    alice = tokens.token_for(tmp_path, "alice")

    (tmp_path / tokens.TOKEN_FILE).chmod(0o644)
    refused = table.check(alice)
    (tmp_path / tokens.TOKEN_FILE).chmod(0o600)

    assert refused is None
    assert table.check(alice) == tokens.Grant("alice")
