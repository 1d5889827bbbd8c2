"""`graphmem mcp` end to end: the official MCP SDK's client spawns the real server over stdio
(and once over streamable HTTP), on a temporary data dir with the embedded FalkorDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import CallToolResult, TextContent

from engine.mcp_server.render import render_search
from engine.models import ScoredEpisode, SearchResult, Snippet
from engine.prompt_block import estimate_tokens
from tests.mcp_wire import REFUSAL, free_port, wait_for_port

GRAPHMEM = str(Path(sys.executable).with_name("graphmem"))
TOOLS = {
    "add_memory", "add_facts", "search_memory", "get_entity", "list_entities",
    "delete_memory", "export_graph", "update_memory", "memory_history", "delete_message",
    "list_users",
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
ARRAYS = [["Frank", "lives in", "Oslo"], ["Frank", "OWNS", "Rex", "Frank has a cat named Rex"]]
# PYTHONPATH: the server runs the engine of the tree under test, not the installed one
ENV = {
    k: os.environ[k]
    for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "PYTHONPATH")
    if k in os.environ
}


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
    async with session(data_dir, "--any-user") as client:
        seen["tools"] = {t.name for t in (await client.list_tools()).tools}
        seen["added"] = ok(await call(client, "add_facts", facts=FACTS, user_id="alice"))
        seen["message"] = ok(
            await call(
                client,
                "add_memory",
                messages="I like hiking",
                user_id="alice",
                speaker="Alice",
                ts="2024-05-01T09:30:00Z",
            )
        )
        seen["hiking"] = ok(await call(client, "search_memory", query="hiking", user_id="alice"))
        question = "What pet does Alice's friend have?"
        found = await call(client, "search_memory", query=question, user_id="alice")
        seen["search"], seen["search_text"] = ok(found), text(found)
        block = await call(client, "search_memory", query=question, user_id="alice", max_tokens=40)
        seen["block"] = text(block)
        seen["entity"] = text(await call(client, "get_entity", name="john", user_id="alice"))
        seen["entities"] = ok(await call(client, "list_entities", user_id="alice", limit=5))
        seen["bob"] = text(await call(client, "search_memory", query="Tommy", user_id="bob"))
        seen["export"] = await _export_pages(client)
        seen["arrays"] = ok(await call(client, "add_facts", facts=ARRAYS, user_id="frank"))
        seen["window"] = await _windows(client)
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
        "budget": await call(client, "search_memory", query="Tommy", user_id="alice", max_tokens=0),
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
            client, "add_memory", messages="hi", user_id="alice", ts="yesterday-ish"
        ),
        "bad_cursor": await call(client, "export_graph", user_id="alice", cursor="x:1"),
        "unknown_argument": await call(
            client, "add_memory", messages="I met Zoe", user_id="gina", time="2024-05-01"
        ),
        "two_unknown": await call(
            client, "search_memory", query="Zoe", user_id="gina", limt=3, mode="semantic"
        ),
        "short_array": await call(client, "add_facts", user_id="alice", facts=[["A", "B"]]),
        "bad_since": await call(client, "search_memory", query="x", user_id="a", since="soon"),
        "gina": await call(client, "search_memory", query="Zoe", user_id="gina"),
    }


async def _export_pages(client: ClientSession) -> dict[str, Any]:
    """The whole graph of alice, two records a page, following the cursors."""
    pages = [ok(await call(client, "export_graph", user_id="alice", limit=2))]
    while pages[-1]["next_cursor"] is not None and len(pages) < 50:
        cursor = pages[-1]["next_cursor"]
        pages.append(
            ok(await call(client, "export_graph", user_id="alice", limit=2, cursor=cursor))
        )
    one = await call(client, "export_graph", user_id="alice")
    return {"pages": pages, "whole": ok(one), "whole_chars": len(text(one))}


async def _windows(client: ClientSession) -> dict[str, Any]:
    said = {"messages": "I adopted a cat named Miso", "user_id": "hal"}
    ok(await call(client, "add_memory", **said, ts="2023-03-01T10:00:00Z"))
    out = {}
    for name, window in {
        "before": {"until": "2023-01-01"},
        "after": {"since": "2024-01-01T00:00:00Z"},
        "around": {"since": 1672531200, "until": "2023-12-31"},
    }.items():
        found = ok(await call(client, "search_memory", query="cat Miso", user_id="hal", **window))
        out[name] = [e["episode"]["text"] for e in found["episodes"]]
    return out


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


def test_a_budget_answers_with_one_prompt_block(scenario: dict[str, Any]) -> None:
    block = scenario["block"]
    assert block.startswith("Facts:") and "John has a dog named Tommy" in block
    assert sum(estimate_tokens(line) for line in block.splitlines()) <= 40


def test_entities_read_back(scenario: dict[str, Any]) -> None:
    assert scenario["entity"].startswith("John")
    assert "John has a dog named Tommy" in scenario["entity"]
    names = {e["entity"]["name"] for e in scenario["entities"]["entities"]}
    assert {"Alice", "John", "Tommy"} <= names


def test_users_are_separate(scenario: dict[str, Any]) -> None:
    assert scenario["bob"].startswith("No memory of user 'bob'")


def test_export_pages_hold_the_graph_without_embeddings(scenario: dict[str, Any]) -> None:
    pages, whole = scenario["export"]["pages"], scenario["export"]["whole"]
    assert all(len(p["entities"] + p["facts"] + p["episodes"] + p["history"]) <= 2 for p in pages)
    assert [p["truncated"] for p in pages] == [True] * (len(pages) - 1) + [False]
    assert {p["user_id"] for p in pages} == {"alice"}
    for section in ("entities", "facts", "episodes", "history"):
        paged = [r["uid"] for p in pages for r in p[section]]
        assert paged == [r["uid"] for r in whole[section]], section
    assert len(whole["facts"]) >= 2 and not whole["truncated"]
    assert '"embedding":' not in json.dumps(pages) + json.dumps(whole)
    assert scenario["export"]["whole_chars"] < 10_000


def test_facts_as_arrays_and_search_windows(scenario: dict[str, Any]) -> None:
    assert scenario["arrays"]["facts_added"] == 2
    assert scenario["window"]["before"] == []
    assert scenario["window"]["after"] == []
    assert scenario["window"]["around"] == ["I adopted a cat named Miso"]


def test_unknown_arguments_are_refused_and_nothing_is_stored(scenario: dict[str, Any]) -> None:
    assert "add_memory has no argument 'time'; it takes messages, user_id" in text(
        scenario["errors"]["unknown_argument"]
    )
    two = text(scenario["errors"]["two_unknown"])
    assert "no argument 'limt' (did you mean 'limit'?), 'mode'" in two
    assert text(scenario["errors"]["gina"]).startswith("No memory of user 'gina'")


def test_delete(scenario: dict[str, Any]) -> None:
    assert scenario["deleted"]["deleted"] == scenario["uid"]
    assert scenario["uid"] not in scenario["after_delete"]


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("no_user", "user_id is required"),
        ("spaced_user", "not in canonical form"),
        ("limit", "limit"),
        ("budget", "max_tokens"),
        ("no_query", "query"),
        ("bad_predicate", "cannot be a relationship type"),
        ("unknown_fact", "has no fact 'nope'"),
        ("unknown_entity", "has no entity named 'Zed'"),
        ("bad_time", "ts 'yesterday-ish' is not a time"),
        ("bad_cursor", "is not one export_graph gave"),
        ("unknown_argument", "has no argument 'time'"),
        ("short_array", "got 2 items"),
        ("bad_since", "since 'soon' is not a time"),
    ],
)
def test_bad_arguments_get_a_clear_tool_error(
    scenario: dict[str, Any], case: str, says: str
) -> None:
    result = scenario["errors"][case]
    assert result.is_error
    assert says in text(result)
    assert REFUSAL.fullmatch(text(result)), text(result)


async def _bound(data_dir: Path) -> dict[str, CallToolResult]:
    seen = {}
    async with session(data_dir, "--user", "carol") as client:
        seen["added"] = await call(client, "add_facts", facts=FACTS)
        seen["mine"] = await call(client, "search_memory", query="Who owns Tommy?")
        seen["named"] = await call(client, "search_memory", query="Tommy", user_id="carol")
        seen["read_dave"] = await call(client, "search_memory", query="Tommy", user_id="dave")
        seen["write_dave"] = await call(client, "add_facts", facts=FACTS, user_id="dave")
        seen["export_dave"] = await call(client, "export_graph", user_id="dave")
    async with session(data_dir, "--user", "dave") as client:
        seen["dave"] = await call(client, "search_memory", query="Who owns Tommy?")
    return seen


def test_a_server_bound_to_a_user_refuses_calls_naming_another(tmp_path: Path) -> None:
    seen = anyio.run(_bound, tmp_path)
    assert ok(seen["added"])["user_id"] == "carol"
    assert "John has a dog named Tommy" in text(seen["mine"])
    assert "John has a dog named Tommy" in text(seen["named"])
    for refused in ("read_dave", "write_dave", "export_dave"):
        assert seen[refused].is_error, refused
        assert text(seen[refused]).startswith(
            "InvalidInputError: user_id 'dave' is refused: this connection acts for user 'carol'"
        )
    assert text(seen["dave"]).startswith("No memory of user 'dave'")


def test_a_server_that_does_not_say_whom_it_serves_does_not_start(tmp_path: Path) -> None:
    done = subprocess.run(
        [GRAPHMEM, "--data-dir", str(tmp_path), "mcp"],
        env={**os.environ, **ENV}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2
    assert "say whose memory this server serves: --user USER" in done.stderr
    assert not (tmp_path / "server.json").exists()


async def _over_http(url: str, token: str) -> tuple[set[str], str]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        names = {t.name for t in (await client.list_tools()).tools}
        ok(await call(client, "add_facts", facts=FACTS))
        found = text(await call(client, "search_memory", query="Tommy"))
    return names, found


def test_streamable_http_serves_the_same_tools_on_localhost(tmp_path: Path) -> None:
    port = free_port()
    args = [GRAPHMEM, "--data-dir", str(tmp_path), "mcp", "--user", "erin", "--http"]
    proc = subprocess.Popen(
        [*args, "--port", str(port)], env={**os.environ, **ENV}, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_for_port(port, proc)
        token = json.loads((tmp_path / "mcp_tokens.json").read_text(encoding="utf-8"))["users"][
            "erin"
        ]
        names, found = anyio.run(_over_http, f"http://127.0.0.1:{port}/mcp", token)
        socket_file = Path(
            json.loads((tmp_path / "server.json").read_text(encoding="utf-8"))["socket"]
        )
    finally:
        proc.terminate()
        _, log = proc.communicate(timeout=30)
    assert names >= TOOLS
    assert "John has a dog named Tommy" in found
    # stopped by SIGTERM, the server closed its memory: the embedded database stopped too
    assert not (tmp_path / "falkordb.pid").exists()
    assert not socket_file.exists()
    # plain one-line records, not boxes drawn for a terminal; no token written to the log
    assert log.strip() and not set("│╭╰─") & set(log), log
    assert all(" INFO " in line or " WARNING " in line for line in log.strip().splitlines())
    assert token not in log


def test_render_quotes_the_messages_behind_the_answer() -> None:
    result = SearchResult(query="pets?", user_id="alice")
    assert render_search(result) == "No memory of user 'alice' matches 'pets?'."
    when = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
    said = Snippet(uid="e1", speaker="Alice", role="user", session_id="s1", ts=when,
                   text="I adopted a cat called Miso")  # fmt: skip
    result.episodes = [ScoredEpisode(episode=said, score=0.5)]
    rendered = render_search(result)
    assert '- [2024-05-01 09:30, session s1] Alice: "I adopted a cat called Miso"' in rendered
