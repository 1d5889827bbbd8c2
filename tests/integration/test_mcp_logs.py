"""What `graphmem mcp` writes to its log, over the wire: a failed call is one WARNING line
naming the tool and the kind of error, never what the caller sent (names, ids, values: the
answer carries those to the caller alone); an unknown id of `memory_history` answers that it
was not found; the address of an IPv6 HTTP server is written bracketed; a client that leaves
during a call is one line."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.mcp_wire import ENV, GRAPHMEM, INITIALIZE, REFUSAL, post

SECRET = "zq-secret"  # in every argument of the failing calls: it must reach no log line
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "history": ("memory_history", {"fact_id": f"{SECRET}-id"}),
    "entity": ("get_entity", {"name": f"{SECRET} name"}),
    "predicate": ("add_facts", {"facts": [["Ann", f"9{SECRET}", "Oslo"]]}),
    "argument": ("add_memory", {"messages": "hi", f"{SECRET}_arg": 1}),
    "validation": ("search_memory", {"query": SECRET, "limit": 0}),
    "user": ("search_memory", {"query": "tea", "user_id": f"{SECRET}-user"}),
    "stored": ("add_memory", {"messages": "I like tea", "metadata": {"topic": SECRET}}),
}


def _send(stdin: IO[str], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message) + "\n")
    stdin.flush()


def _answers(stdout: IO[str], count: int) -> dict[int, dict[str, Any]]:
    """The answers to `count` requests by id, in whatever order they come."""
    out: dict[int, dict[str, Any]] = {}
    while len(out) < count:
        message = json.loads(stdout.readline())
        if "id" in message:
            out[message["id"]] = message
    return out


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    """The answer to each of `CALLS` by name, and the server's whole log."""
    data_dir = tmp_path_factory.mktemp("mcp_logs")
    cmd = [GRAPHMEM, "--data-dir", str(data_dir), "mcp", "--user", "alice"]
    pipe = subprocess.PIPE
    with subprocess.Popen(cmd, env=ENV, text=True, stdin=pipe, stdout=pipe, stderr=pipe) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        _send(proc.stdin, INITIALIZE)
        _answers(proc.stdout, 1)
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for number, (tool, arguments) in enumerate(CALLS.values(), start=2):
            params = {"name": tool, "arguments": arguments}
            _send(proc.stdin, {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                               "params": params})  # fmt: skip
        answers = _answers(proc.stdout, len(CALLS))
        _, log = proc.communicate(timeout=60)  # stdin closed: the host hung up
    by_name = {name: answers[n]["result"] for n, name in enumerate(CALLS, start=2)}
    return by_name, log


def _in_turn(
    data_dir: Path, env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]
) -> tuple[list[dict[str, Any]], str]:
    """The answers to `calls`, each sent once the one before was answered, and the log."""
    cmd = [GRAPHMEM, "--data-dir", str(data_dir), "mcp", "--user", "alice"]
    pipe = subprocess.PIPE
    with subprocess.Popen(cmd, env=env, text=True, stdin=pipe, stdout=pipe, stderr=pipe) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        _send(proc.stdin, INITIALIZE)
        _answers(proc.stdout, 1)
        _send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        answers = []
        for number, (tool, arguments) in enumerate(calls, start=2):
            params = {"name": tool, "arguments": arguments}
            _send(proc.stdin, {"jsonrpc": "2.0", "id": number, "method": "tools/call",
                               "params": params})  # fmt: skip
            answers.append(_answers(proc.stdout, 1)[number]["result"])
        _, log = proc.communicate(timeout=60)
    return answers, log


def _text(result: dict[str, Any]) -> str:
    return "\n".join(block["text"] for block in result["content"])


def test_an_unknown_history_id_is_not_found_naming_it(served: tuple[dict[str, Any], str]) -> None:
    answer = served[0]["history"]
    assert answer["isError"]
    assert f"NotFoundError: user 'alice' has no fact or entity '{SECRET}-id'" in _text(answer)


def test_every_failed_call_answers_one_line_in_one_shape(
    served: tuple[dict[str, Any], str],
) -> None:
    answers = served[0]
    failed = {name: _text(answer) for name, answer in answers.items() if answer["isError"]}
    assert all(REFUSAL.fullmatch(said) for said in failed.values()), failed
    assert failed["argument"].startswith(f"InvalidInputError: add_memory has no argument '{SECRET}")
    assert failed["user"].startswith(f"InvalidInputError: user_id '{SECRET}-user' is refused")
    assert failed["validation"] == (
        "InvalidInputError: search_memory: argument 'limit': Input should be greater than or "
        "equal to 1"
    )


def test_a_failed_call_is_logged_as_a_warning_without_what_the_caller_sent(
    served: tuple[dict[str, Any], str],
) -> None:
    answers, log = served
    assert not answers["stored"]["isError"], _text(answers["stored"])
    failed = [name for name, answer in answers.items() if answer["isError"]]
    assert failed == [name for name in CALLS if name != "stored"]
    assert SECRET not in log, log
    lines = log.splitlines()
    assert not [line for line in lines if "failed" in line and " WARNING " not in line], log
    warnings = [line.split(" WARNING ", 1)[1] for line in lines if " failed: " in line]
    assert sorted(warnings) == sorted(  # the calls run concurrently: in any order
        [
            "graphmem.mcp: memory_history failed: NotFoundError",
            "graphmem.mcp: get_entity failed: NotFoundError",
            "graphmem.mcp: add_facts failed: InvalidInputError",
            "graphmem.mcp: add_memory failed: InvalidInputError",
            "graphmem.mcp: search_memory failed: ValidationError",
            "graphmem.mcp: search_memory failed: InvalidInputError",
        ]
    )


def _free_ipv6_port() -> int:
    try:
        with socket.create_server(("::1", 0), family=socket.AF_INET6) as sock:
            return int(sock.getsockname()[1])
    except OSError:
        pytest.skip("no IPv6 loopback here")


def test_an_ipv6_address_is_logged_bracketed(tmp_path: Path) -> None:
    port = _free_ipv6_port()
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "erin", "--http",
           "--host", "::1", "--port", str(port), "--no-token"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=ENV, text=True, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    try:  # stopped once open (a stop while opening: tests/unit/test_mcp_server.py)
        deadline, lines = time.monotonic() + 120, []
        while time.monotonic() < deadline and not any(" ready: " in line for line in lines):
            lines.append(proc.stderr.readline())
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    (serving,) = [line for line in lines if "serving" in line]
    assert f"serving http://[::1]:{port}/mcp without a token" in serving


def test_an_unusable_data_dir_is_answered_without_its_path(tmp_path: Path) -> None:
    (tmp_path / "a_file").write_text("not a directory")
    data_dir = tmp_path / "a_file" / "memory"
    calls = [("search_memory", {"query": "tea"}), ("add_memory", {"messages": "I like tea"})]

    answers, log = _in_turn(data_dir, ENV, calls)

    for answer in answers:
        assert answer["isError"]
        said = _text(answer)
        assert said.startswith("StoreUnavailableError: the memory store is unavailable"), said
        assert REFUSAL.fullmatch(said), said
        assert "a_file" not in said and str(tmp_path) not in said, said
    assert f"cannot use the data directory '{data_dir}'" in log  # the operator's detail


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_llm_that_does_not_answer_is_named_without_its_address(tmp_path: Path) -> None:
    address = f"127.0.0.1:{_closed_port()}"
    env = {**ENV, "OPENAI_BASE_URL": f"http://{address}/v1", "GRAPHMEM_LLM_MAX_RETRIES": "0"}
    calls = [("add_memory", {"messages": "I like tea"}), ("export_graph", {})]

    (added, exported), log = _in_turn(tmp_path, env, calls)

    assert not added["isError"], _text(added)  # the message is kept, marked failed
    assert "fact extraction failed: the LLM did not answer" in _text(added)
    said = added["structuredContent"]["extraction_error"]
    assert said == "fact extraction failed: the LLM did not answer"
    (episode,) = exported["structuredContent"]["episodes"]
    assert (episode["status"], episode["error"]) == ("failed", said)
    for answer in (added, exported):
        assert address not in json.dumps(answer), answer
    assert f"unreachable: http://{address}/v1" in log  # the operator's detail


async def _leave_during(url: str, tool: str, arguments: dict[str, Any]) -> None:
    """An SDK client that gives up on a call after a second and leaves (it sends the call's
    cancellation, then ends its session)."""
    async with (
        create_mcp_http_client() as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        with anyio.move_on_after(1.0):
            await client.call_tool(tool, arguments)


def test_a_client_that_leaves_during_a_call_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    """The session's end (the client's DELETE) raced the SDK's handing on of the call's
    cancellation: the SDK logged its ClosedResourceError, then uvicorn "Exception in ASGI
    application", two tracebacks for a client that left."""
    with _erin_server(tmp_path) as (url, _, log_path):
        anyio.run(_leave_during, url, "add_facts", {"facts": SLOW_FACTS})
        said = _wait_for(log_path, "left")
        still = post(url, INITIALIZE)[0]
    assert still == 200
    assert "Traceback" not in said and " ERROR " not in said, said
    (left,) = [line for line in said.splitlines() if "left" in line]
    assert " INFO graphmem.mcp: add_facts: its client cancelled the call (it left" in left, left


SLOW_FACTS = [[f"Eater {i}", "likes", f"Dish {i}"] for i in range(3000)]  # seconds to store


@contextlib.contextmanager
def _erin_server(tmp_path: Path) -> Iterator[tuple[str, int, Path]]:
    """`graphmem mcp --http` for user erin, ready: its URL, port and log."""
    port, log_path = _closed_port(), tmp_path / "server.log"
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path / "data"), "mcp", "--user", "erin", "--http",
           "--no-token", "--port", str(port)]  # fmt: skip
    with log_path.open("w") as log, subprocess.Popen(cmd, env=ENV, stderr=log) as proc:
        try:
            _wait_for(log_path, " ready: ")
            yield f"http://127.0.0.1:{port}/mcp", port, log_path
        finally:
            proc.terminate()


def _wait_for(log_path: Path, text: str) -> str:
    deadline = time.monotonic() + 120
    while text not in (said := log_path.read_text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(1.0)  # what the server logs after it
    return said


def test_a_client_that_drops_its_connection_during_a_call_is_one_line(tmp_path: Path) -> None:
    """A client that closed its TCP connection during a call, without a cancellation or a
    DELETE, left no trace: the call ran to its end and its answer went nowhere."""
    with _erin_server(tmp_path) as (url, port, log_path):
        session = _opened(url)
        _drop_during(port, session, {"name": "add_facts", "arguments": {"facts": SLOW_FACTS}})
        said = _wait_for(log_path, "dropped")
        still = post(url, INITIALIZE)[0]
    assert still == 200
    assert "Traceback" not in said and " ERROR " not in said, said
    (dropped,) = [line for line in said.splitlines() if "dropped" in line]
    assert " INFO graphmem.mcp: a client dropped its connection during a call" in dropped, dropped
    assert session not in dropped  # a session id is a credential


def _opened(url: str) -> str:
    """A new session's id, its client initialized."""
    status, headers, _ = post(url, INITIALIZE)
    session = {k.lower(): v for k, v in headers.items()}["mcp-session-id"]
    ready = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, ready)
    assert status == 200
    return session


def _drop_during(port: int, session: str, params: dict[str, Any]) -> None:
    """Send a tools/call on a connection of its own and close it half a second later."""
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": params}
    body = json.dumps(call).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nContent-Length: {len(body)}\r\n"
        f"mcp-session-id: {session}\r\nmcp-protocol-version: 2025-06-18\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(head.encode() + body)
        time.sleep(0.5)
