"""`graphmem mcp` end to end: the official MCP SDK's client spawns the real server over stdio
(and once over streamable HTTP), on a temporary data dir with the embedded FalkorDB."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from engine.mcp_server.render import render_search
from engine.models import ScoredEpisode, SearchResult, Snippet

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
TOOLS = {
    "add_memory", "add_facts", "search_memory", "get_entity", "list_entities",
    "delete_memory", "export_graph",
}  # fmt: skip
FACTS = [
    {"subject": "Alice", "predicate": "friend of", "object": "John", "subject_type": "person"},
    {
        "subject": "John",
        "predicate": "OWNS",
        "object": "Tommy",
        "text": "John has a dog named Tommy",
    },
]
ENV = {k: os.environ[k] for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") if k in os.environ}


def _params(data_dir: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=GRAPHMEM, args=["--data-dir", str(data_dir), "mcp", *extra], env=ENV
    )


@asynccontextmanager
async def session(data_dir: Path, *extra: str) -> AsyncIterator[ClientSession]:
    transport = stdio_client(_params(data_dir, *extra))
    async with transport as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


async def call(client: ClientSession, tool: str, /, **arguments: Any) -> CallToolResult:
    result = await client.call_tool(tool, arguments, read_timeout_seconds=120)
    assert isinstance(result, CallToolResult)
    return result


def text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


def ok(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, text(result)
    assert result.structured_content is not None
    return result.structured_content


async def _scenario(data_dir: Path) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    async with session(data_dir) as client:
        seen["tools"] = {t.name for t in (await client.list_tools()).tools}
        seen["added"] = ok(await call(client, "add_facts", facts=FACTS, user_id="alice"))
        seen["message"] = ok(
            await call(
                client,
                "add_memory",
                messages="I like hiking",
                user_id="alice",
                speaker="Alice",
                time="2024-05-01T09:30:00Z",
            )
        )
        seen["hiking"] = ok(await call(client, "search_memory", query="hiking", user_id="alice"))
        question = "What pet does Alice's friend have?"
        found = await call(client, "search_memory", query=question, user_id="alice")
        seen["search"], seen["search_text"] = ok(found), text(found)
        seen["entity"] = text(await call(client, "get_entity", name="john", user_id="alice"))
        seen["entities"] = ok(await call(client, "list_entities", user_id="alice", limit=5))
        seen["bob"] = text(await call(client, "search_memory", query="Tommy", user_id="bob"))
        seen["export"] = ok(await call(client, "export_graph", user_id="alice"))
        seen["errors"] = await _bad_calls(client)
        uid = seen["search"]["facts"][0]["fact"]["uid"]
        seen["deleted"] = ok(await call(client, "delete_memory", fact_id=uid, user_id="alice"))
        after = ok(await call(client, "search_memory", query="Tommy", user_id="alice"))
        seen["after_delete"] = [h["fact"]["uid"] for h in after["facts"]]
        seen["uid"] = uid
    return seen


async def _bad_calls(client: ClientSession) -> dict[str, CallToolResult]:
    return {
        "no_user": await call(client, "search_memory", query="Tommy"),
        "spaced_user": await call(client, "search_memory", query="Tommy", user_id=" alice"),
        "limit": await call(client, "search_memory", query="Tommy", user_id="alice", limit=0),
        "no_query": await call(client, "search_memory", user_id="alice"),
        "bad_predicate": await call(
            client,
            "add_facts",
            user_id="alice",
            facts=[{"subject": "A", "predicate": "!!!", "object": "B"}],
        ),
        "unknown_fact": await call(client, "delete_memory", fact_id="nope", user_id="alice"),
        "unknown_entity": await call(client, "get_entity", name="Zed", user_id="alice"),
        "bad_time": await call(
            client, "add_memory", messages="hi", user_id="alice", time="yesterday-ish"
        ),
        "bad_format": await call(client, "export_graph", user_id="alice", format="pdf"),
    }


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return anyio.run(_scenario, tmp_path_factory.mktemp("mcp"))


def test_the_server_lists_every_tool(scenario: dict[str, Any]) -> None:
    assert scenario["tools"] >= TOOLS


def test_facts_and_messages_go_in(scenario: dict[str, Any]) -> None:
    assert scenario["added"]["facts_added"] == 2
    assert scenario["message"]["user_id"] == "alice"
    assert len(scenario["message"]["episode_uids"]) == 1
    (said,) = [e["episode"] for e in scenario["hiking"]["episodes"]]
    assert (said["speaker"], said["ts"][:16]) == ("Alice", "2024-05-01T09:30")


def test_search_answers_as_text_and_as_data(scenario: dict[str, Any]) -> None:
    facts = [h["fact"]["text"] for h in scenario["search"]["facts"]]
    assert "John has a dog named Tommy" in facts
    assert "John has a dog named Tommy" in scenario["search_text"]
    assert scenario["search"]["facts"][0]["fact"]["uid"] in scenario["search_text"]


def test_entities_read_back(scenario: dict[str, Any]) -> None:
    assert scenario["entity"].startswith("John")
    assert "John has a dog named Tommy" in scenario["entity"]
    names = {e["entity"]["name"] for e in scenario["entities"]["entities"]}
    assert {"Alice", "John", "Tommy"} <= names


def test_users_are_separate(scenario: dict[str, Any]) -> None:
    assert scenario["bob"].startswith("No memory of user 'bob'")


def test_export_and_delete(scenario: dict[str, Any]) -> None:
    assert scenario["export"]["graph"]["user_id"] == "alice"
    assert len(scenario["export"]["graph"]["facts"]) >= 2
    assert scenario["deleted"]["deleted"] == scenario["uid"]
    assert scenario["uid"] not in scenario["after_delete"]


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("no_user", "user_id is required"),
        ("spaced_user", "not in canonical form"),
        ("limit", "limit"),
        ("no_query", "query"),
        ("bad_predicate", "cannot be a relationship type"),
        ("unknown_fact", "has no fact 'nope'"),
        ("unknown_entity", "has no entity named 'Zed'"),
        ("bad_time", "is not ISO 8601"),
        ("bad_format", "format"),
    ],
)
def test_bad_arguments_get_a_clear_tool_error(
    scenario: dict[str, Any], case: str, says: str
) -> None:
    result = scenario["errors"][case]
    assert result.is_error
    assert says in text(result)


async def _default_user(data_dir: Path) -> tuple[str, str]:
    async with session(data_dir, "--user", "carol") as client:
        await call(client, "add_facts", facts=FACTS)
        mine = text(await call(client, "search_memory", query="Who owns Tommy?"))
        theirs = text(await call(client, "search_memory", query="Who owns Tommy?", user_id="dave"))
    return mine, theirs


def test_the_server_default_user_applies_when_a_call_names_none(tmp_path: Path) -> None:
    mine, theirs = anyio.run(_default_user, tmp_path)
    assert "John has a dog named Tommy" in mine
    assert theirs.startswith("No memory of user 'dave'")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _over_http(url: str) -> tuple[set[str], str]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        names = {t.name for t in (await client.list_tools()).tools}
        ok(await call(client, "add_facts", facts=FACTS, user_id="erin"))
        found = text(await call(client, "search_memory", query="Tommy", user_id="erin"))
    return names, found


def test_streamable_http_serves_the_same_tools_on_localhost(tmp_path: Path) -> None:
    port = _free_port()
    args = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--http", "--port", str(port)]
    proc = subprocess.Popen(args, env={**os.environ, **ENV}, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        names, found = anyio.run(_over_http, f"http://127.0.0.1:{port}/mcp")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert names >= TOOLS
    assert "John has a dog named Tommy" in found
    # stopped by SIGTERM, the server closed its memory: the embedded database stopped too
    socket_file = Path(json.loads((tmp_path / "server.json").read_text())["socket"])
    assert not (tmp_path / "falkordb.pid").exists()
    assert not socket_file.exists()


def test_render_quotes_the_messages_behind_the_answer() -> None:
    result = SearchResult(query="pets?", user_id="alice")
    assert render_search(result) == "No memory of user 'alice' matches 'pets?'."
    when = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
    said = Snippet(uid="e1", speaker="Alice", role="user", session_id="s1", ts=when,
                   text="I adopted a cat called Miso")  # fmt: skip
    result.episodes = [ScoredEpisode(episode=said, score=0.5)]
    rendered = render_search(result)
    assert '- [2024-05-01 09:30, session s1] Alice: "I adopted a cat called Miso"' in rendered
