"""The MCP token file (`engine/mcp_server/tokens.py`), without a store or a model."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from engine.mcp_server import tokens


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

    kept = json.loads((tmp_path / tokens.TOKEN_FILE).read_text())["users"]
    assert kept == made
    assert len(made) == 3
