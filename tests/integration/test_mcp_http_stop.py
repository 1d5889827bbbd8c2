"""`graphmem mcp --http` stopped by SIGTERM while a call runs: the call finishes and its client
gets the answer (docs/mcp.md, "Stopping")."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.mcp_wire import ENV, GRAPHMEM, INITIALIZE, free_port, post, wait_for_port

FACTS = [[f"Eater {i}", "likes", f"Dish {i}"] for i in range(3000)]  # seconds to store


def _call(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}


def test_a_call_in_flight_when_the_server_is_stopped_is_answered(tmp_path: Path) -> None:
    """The answer went out on an event stream, which the SDK's SSE library ends as soon as the
    server is told to stop: the call went on and stored its facts, and its client got an empty
    200, not knowing whether to send it again."""
    port = free_port()
    args = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "erin", "--http"]
    proc = subprocess.Popen([*args, "--port", str(port)], env=ENV, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        tokens = json.loads((tmp_path / "mcp_tokens.json").read_text(encoding="utf-8"))
        url, auth = (
            f"http://127.0.0.1:{port}/mcp",
            {"Authorization": f"Bearer {tokens['users']['erin']}"},
        )
        opened, _ = post(url, INITIALIZE, auth)[1:]
        headers = {
            **auth,
            "mcp-session-id": opened["mcp-session-id"],
            "mcp-protocol-version": "2025-06-18",
        }
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, headers)
        post(url, _call("list_users", {}), headers)  # the memory is loaded
        answer: list[str] = []
        call = threading.Thread(
            target=lambda: answer.append(
                post(url, _call("add_facts", {"facts": FACTS}), headers, timeout=120)[2]
            )
        )
        call.start()
        time.sleep(1.0)
        proc.terminate()
        call.join(timeout=120)
    finally:
        proc.terminate()
        proc.wait(timeout=120)
    assert proc.returncode == 143
    assert answer and "Stored 3000 fact(s) for user 'erin'" in answer[0], answer
