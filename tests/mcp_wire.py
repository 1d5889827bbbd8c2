"""What tests need to talk to a real `graphmem mcp` subprocess: the console script, an
environment that loads no model from a hub and chooses no user or token, the JSON-RPC
`initialize` request a host sends first, a free port and the wait for the server to listen on
it, a raw POST to its HTTP door, and the one shape of a failed call's text."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
ENV.pop("GRAPHMEM_MCP_TOKEN", None)
ENV.pop("GRAPHMEM_MCP_USER_ID", None)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
# every failed tool call answers one line `Kind: message` (engine/mcp_server/tool_errors.py)
REFUSAL = re.compile(r"[A-Z][A-Za-z]*Error: \S[^\n]*")


def free_port() -> int:
    """A TCP port of the loopback address no one listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[Any], host: str = "127.0.0.1") -> None:
    """Return once the server `proc` started listens on `port` (90 s at most).

    Raises:
        AssertionError: it did not, or it exited first.
    """
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"the server did not listen on {port} (exit code {proc.poll()})")


def post(
    url: str, body: dict[str, Any], headers: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, dict[str, str], str]:
    """POST `body` as JSON-RPC over HTTP: (status, headers, body), an error status included."""
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as exc:
        with exc:  # holds the response open until closed
            return exc.code, dict(exc.headers), exc.read().decode()
