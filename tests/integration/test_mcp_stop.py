"""`graphmem mcp` over stdio stops on SIGINT (Ctrl-C) and SIGTERM while its host still holds
stdin open: the SDK reads stdin in a thread that only input or EOF wakes, and the server
waited for the host's next line for ever (the embedded database still running after Ctrl-C);
and one started without stdin says so, not with a traceback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import IO, Any

import pytest

from tests.mcp_wire import ENV, GRAPHMEM, INITIALIZE

ADD = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "add_facts", "arguments": {"facts": [["Alice", "LIKES", "Tea"]]}},
}


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def _answer(stdout: IO[str]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(stdout.readline())
    return answer


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_a_stdio_server_whose_host_holds_stdin_open(
    tmp_path: Path, signum: int, status: int
) -> None:
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "alice"]
    pipe = subprocess.PIPE
    with subprocess.Popen(cmd, env=ENV, text=True, stdin=pipe, stdout=pipe, stderr=pipe) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        try:
            _send(proc.stdin, INITIALIZE)
            assert _answer(proc.stdout)["id"] == 1
            _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(proc.stdin, ADD)
            assert not _answer(proc.stdout)["result"]["isError"]
            socket_file = Path(
                json.loads((tmp_path / "server.json").read_text(encoding="utf-8"))["socket"]
            )
            proc.send_signal(signum)
            code = proc.wait(timeout=30)  # stdin stays open: the host has not hung up
        except subprocess.TimeoutExpired:
            code = None
        finally:
            proc.kill()
    assert code == status
    assert not (tmp_path / "falkordb.pid").exists()
    assert not socket_file.exists()


def test_a_stdio_server_without_stdin_says_so_before_anything_loads(tmp_path: Path) -> None:
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "alice"]

    done = subprocess.run(
        cmd, env=ENV, text=True, capture_output=True, timeout=120,
        preexec_fn=lambda: os.close(0),  # a host that gave it no stdin
    )  # fmt: skip

    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith(
        "graphmem: error: graphmem mcp serves stdio, and its stdin is closed"
    )
    assert not (tmp_path / "server.json").exists()
