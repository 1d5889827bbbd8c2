"""The MCP doors (issue 48 H1, M1): `graphmem mcp --http` answers only requests carrying a
bearer token in the Authorization header, each token acts for the user it is bound to, and
a server serves the one user it was started for.

One real `graphmem mcp --any-user --http` subprocess on a temporary data dir, with its token
file holding the any-user token and a token bound to alice; raw HTTP for what must be refused
(nothing may reach the MCP SDK), the SDK's own client for what must work.
"""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from engine.errors import ConfigError, InvalidInputError
from engine.mcp_server.access import ANY_USER, act_for, choose_mode
from engine.mcp_server.session_cap import PER_TOKEN
from engine.mcp_server.tokens import Grant, token_for, token_table
from tests.mcp_wire import ENV, GRAPHMEM, INITIALIZE, free_port, post, wait_for_port

FACT = {"subject": "Mallory", "predicate": "OWNS", "object": "Key", "text": "Mallory owns a key"}


@dataclass
class Server:
    url: str
    any_token: str
    alice_token: str
    data_dir: Path


def _graphmem(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [GRAPHMEM, "--data-dir", str(data_dir), "mcp", *args]
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data_dir = tmp_path_factory.mktemp("mcp-doors")
    alice = _graphmem(data_dir, "--user", "alice", "--print-token").stdout.strip()
    any_user = _graphmem(data_dir, "--any-user", "--print-token").stdout.strip()
    port = free_port()
    args = [GRAPHMEM, "--data-dir", str(data_dir), "mcp", "--any-user", "--http"]
    proc = subprocess.Popen([*args, "--port", str(port)], env=ENV, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc)
        yield Server(f"http://127.0.0.1:{port}/mcp", any_user, alice, data_dir)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def _raw_add_facts(url: str, headers: dict[str, str]) -> list[int]:
    """A client that speaks MCP by hand: initialize, then store a fact for bob."""
    status, got, _ = post(url, INITIALIZE, headers)
    session = {"mcp-session-id": got["mcp-session-id"]} if "mcp-session-id" in got else {}
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "add_facts", "arguments": {"facts": [FACT], "user_id": "bob"}},
    }
    return [status, post(url, note, {**headers, **session})[0],
            post(url, call, {**headers, **session})[0]]  # fmt: skip


async def _tool(url: str, token: str, tool: str, **arguments: Any) -> CallToolResult:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        result = await client.call_tool(tool, arguments, read_timeout_seconds=180)
    assert isinstance(result, CallToolResult)
    return result


def _text(result: CallToolResult) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


def _bobs_facts(server: Server) -> str:
    found = anyio.run(
        lambda: _tool(server.url, server.any_token, "export_graph", user_id="bob", limit=50)
    )
    assert not found.is_error, _text(found)
    assert found.structured_content is not None
    return json.dumps(found.structured_content["facts"])


def test_without_a_token_every_request_is_refused_and_nothing_is_stored(server: Server) -> None:
    statuses = _raw_add_facts(server.url, {})
    status, headers, body = post(server.url, INITIALIZE)
    assert statuses == [401, 401, 401]
    assert (status, headers["www-authenticate"]) == (401, 'Bearer realm="graphmem"')
    assert "Authorization: Bearer" in json.loads(body)["error_description"]
    assert "Mallory" not in _bobs_facts(server)


def test_a_wrong_token_is_refused(server: Server) -> None:
    wrong = server.any_token[:-4] + "AAAA"
    for token in (wrong, "", server.any_token + "x", server.any_token.lower()):
        statuses = _raw_add_facts(server.url, {"Authorization": f"Bearer {token}"})
        assert statuses == [401, 401, 401], token
    status, headers, _ = post(server.url, INITIALIZE, {"Authorization": f"Basic {wrong}"})
    assert status == 401
    assert headers["www-authenticate"].startswith("Bearer ")
    status, headers, _ = post(server.url, INITIALIZE, {"Authorization": f"Bearer {wrong}"})
    assert 'error="invalid_token"' in headers["www-authenticate"]
    assert "Mallory" not in _bobs_facts(server)


@pytest.mark.parametrize("query", ["access_token={t}", "token={t}", "x={t}", "api_key=abc"])
def test_a_token_in_the_url_is_refused_even_with_the_right_header(
    server: Server, query: str
) -> None:
    url = f"{server.url}?{query.format(t=server.any_token)}"
    status, headers, body = post(url, INITIALIZE, {"Authorization": f"Bearer {server.any_token}"})
    assert status == 400
    assert 'error="invalid_request"' in headers["www-authenticate"]
    assert "a token in the URL is refused" in json.loads(body)["error_description"]


def test_the_right_token_works(server: Server) -> None:
    added = anyio.run(
        lambda: _tool(server.url, server.any_token, "add_facts", facts=[FACT], user_id="carol")
    )
    found = anyio.run(
        lambda: _tool(server.url, server.any_token, "search_memory", query="key", user_id="carol")
    )
    assert not added.is_error, _text(added)
    assert "Mallory owns a key" in _text(found)


def test_a_token_bound_to_alice_acts_for_alice_only(server: Server) -> None:
    def call(tool: str, **args: Any) -> CallToolResult:
        return anyio.run(lambda: _tool(server.url, server.alice_token, tool, **args))

    as_bob = call("add_facts", facts=[FACT], user_id="bob")
    read_bob = call("search_memory", query="key", user_id="bob")
    mine = call("add_facts", facts=[FACT])
    assert as_bob.is_error and read_bob.is_error
    assert "this connection acts for user 'alice' only" in _text(as_bob)
    assert "user_id 'bob' is refused" in _text(read_bob)
    assert not mine.is_error and mine.structured_content is not None
    assert mine.structured_content["user_id"] == "alice"
    assert "Mallory" not in _bobs_facts(server)


def test_the_token_file_is_private(server: Server) -> None:
    path = server.data_dir / "mcp_tokens.json"
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["users"]["alice"] == server.alice_token
    assert doc["any_user"] == server.any_token
    assert server.any_token != server.alice_token and len(server.any_token) >= 40


def test_no_token_on_an_address_other_machines_reach_refuses_to_start(tmp_path: Path) -> None:
    done = _graphmem(tmp_path, "--any-user", "--http", "--host", "0.0.0.0", "--no-token")
    assert done.returncode == 2
    assert "needs a token" in done.stderr


@pytest.mark.parametrize("host", ["127.0.0.2", "0:0:0:0:0:0:0:1"])
def test_a_tokenless_server_on_any_loopback_address_answers_no_other_site(
    tmp_path: Path, host: str
) -> None:
    """A web page a DNS name rebound to the loopback address leads there names its own host
    (and origin): refused, as the SDK refuses it on 127.0.0.1, localhost and ::1 only. The
    server answered it, any user's memory included."""
    port = free_port()
    args = ["--any-user", "--http", "--no-token", "--host", host, "--port", str(port)]
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", *args]
    proc = subprocess.Popen(cmd, env=ENV, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port, proc, host)
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"
        rebound = post(url, INITIALIZE, {"Host": f"rebound.example:{port}"})[0]
        other_page = post(url, INITIALIZE, {"Origin": "http://rebound.example"})[0]
        own = post(url, INITIALIZE)[0]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert (rebound, other_page, own) == (421, 403, 200)


def test_a_server_must_say_whom_it_serves(tmp_path: Path) -> None:
    done = _graphmem(tmp_path, "--http")
    assert done.returncode == 2
    assert "--user USER" in done.stderr and "--any-user" in done.stderr


def test_an_unusable_token_from_the_environment_is_refused(tmp_path: Path) -> None:
    cmd = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "a", "--http"]
    done = subprocess.run(cmd, env={**ENV, "GRAPHMEM_MCP_TOKEN": "short"},
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 1
    assert "GRAPHMEM_MCP_TOKEN must be 16 to 512" in done.stderr


# -- the parts, without a server ---------------------------------------------------------


def test_act_for_holds_a_bound_call_to_its_user() -> None:
    assert act_for("alice", None) == "alice"
    assert act_for("alice", "alice") == "alice"
    assert act_for(ANY_USER, "bob") == "bob"
    for binding, requested, says in [
        ("alice", "bob", "user_id 'bob' is refused"),
        ("alice", "alice ", "not in canonical form"),
        (ANY_USER, None, "user_id is required"),
    ]:
        with pytest.raises(InvalidInputError) as caught:
            act_for(binding, requested)
        assert says in str(caught.value)


def test_tokens_are_checked_whole_and_bound(tmp_path: Path) -> None:
    alice = token_for(tmp_path, "alice")
    table = token_table(tmp_path, choose_mode(None, True), None)
    any_user = json.loads((tmp_path / "mcp_tokens.json").read_text(encoding="utf-8"))["any_user"]
    only_alice = token_table(tmp_path, choose_mode("alice", False), None)
    assert table.check(alice) == Grant("alice") and table.check(any_user) == Grant(None)
    assert only_alice.check(alice) == Grant("alice") and only_alice.check(any_user) is None
    assert table.check(alice[:-1]) is None and table.check(alice + " ") is None
    assert token_for(tmp_path, "alice") == alice  # kept, not renewed


@pytest.mark.parametrize(
    ("mode", "content", "says"),
    [
        (0o644, None, "others may have read it"),
        (0o600, '{"users": {"bob ": "' + "t" * 20 + '"}}', "not in canonical form"),
        (0o600, '{"users": {"bob": "short"}}', "users must map user ids to tokens"),
        (0o600, "[1]", "cannot read the token file"),
    ],
)
def test_an_unsafe_or_broken_token_file_is_refused(
    tmp_path: Path, mode: int, content: str | None, says: str
) -> None:
    path = tmp_path / "mcp_tokens.json"
    token_for(tmp_path, "alice")
    if content is not None:
        path.write_text(content)
    path.chmod(mode)
    with pytest.raises(ConfigError) as caught:
        token_table(tmp_path, choose_mode("alice", False), None)
    assert says in str(caught.value)


def _delete(url: str, headers: dict[str, str]) -> int:
    request = urllib.request.Request(url, method="DELETE", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        with exc:
            return int(exc.code)


def test_one_token_cannot_take_every_session(server: Server) -> None:
    """The SDK's limit is the whole server's (10,000 sessions, each kept 30 minutes idle): a
    client with one user's token opened them all, and every other client was refused a
    session (503) until they expired."""
    carol = _graphmem(server.data_dir, "--user", "carol", "--print-token").stdout.strip()
    headers = {"Authorization": f"Bearer {carol}"}
    opened = [post(server.url, INITIALIZE, headers) for _ in range(PER_TOKEN)]

    past, _, said = post(server.url, INITIALIZE, headers)
    others = post(server.url, INITIALIZE, {"Authorization": f"Bearer {server.any_token}"})[0]
    ended = _delete(server.url, {**headers, "mcp-session-id": opened[0][1]["mcp-session-id"]})
    again = post(server.url, INITIALIZE, headers)[0]

    assert [status for status, _, _ in opened] == [200] * PER_TOKEN
    assert past == 429 and "too many open sessions for this token" in said
    assert others == 200
    assert ended == 200 and again == 200


def test_clients_without_a_token_cannot_take_every_session(tmp_path: Path) -> None:
    """A tokenless server's clients, whom nothing tells apart (any local account, from any
    loopback address it binds), hold `PER_TOKEN` sessions between them; one of them opened
    the SDK's 10,000 and every other was refused (503) until they expired."""
    port = free_port()
    args = ["--user", "dave", "--http", "--no-token", "--port", str(port)]
    proc = subprocess.Popen(
        [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", *args], env=ENV, stderr=subprocess.DEVNULL
    )
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}/mcp"
        opened = [post(url, INITIALIZE) for _ in range(PER_TOKEN)]
        past, _, said = post(url, INITIALIZE)
        ended = _delete(url, {"mcp-session-id": opened[0][1]["mcp-session-id"]})
        again = post(url, INITIALIZE)[0]
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    assert [status for status, _, _ in opened] == [200] * PER_TOKEN
    assert past == 429 and "too many open sessions for clients without a token" in said
    assert ended == 200 and again == 200
