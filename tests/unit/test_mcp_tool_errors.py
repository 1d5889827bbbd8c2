"""Every failed MCP tool call answers in one shape: the error flag set and one line
`Kind: message` in graphmem's words, whoever refused it (graphmem, the SDK's argument check,
the SDK's tool lookup) and whatever crashed. In process, on a server bound to alice whose
memory is never built: every call here is refused before it would need it. An error about the
server (its store, its extractor) says what failed, not where (no path, no address)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from engine.errors import InvalidInputError, StoreUnavailableError
from engine.mcp_server.access import Mode
from engine.mcp_server.server import Dispatch, build_server
from engine.mcp_server.tool_errors import extraction_failure
from tests.mcp_wire import REFUSAL


class _NoMemory:
    """A memory holder whose memory a call must not reach (a crash if it does)."""

    def get(self) -> Any:
        raise RuntimeError("a refused call reached the memory")


class _BadMemory:
    """A memory holder whose memory graphmem refuses to build."""

    def get(self) -> Any:
        raise InvalidInputError("bad memory\nsecond line")


def _answers(holder: Any, calls: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    server = build_server(Dispatch(holder, Mode("alice", False), gated=False))

    async def run() -> dict[str, CallToolResult]:
        async with Client(server) as client:
            return {
                name: await client.call_tool(tool, args) for name, (tool, args) in calls.items()
            }

    return anyio.run(run)


def _text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "argument": ("add_memory", {"messages": "x", "time": "x"}),
    "user": ("search_memory", {"query": "x", "user_id": "bob"}),
    "missing": ("search_memory", {"user_id": "alice"}),
    "range": ("search_memory", {"query": "x", "limit": 0}),
    "type": ("search_memory", {"query": "x", "limit": "many"}),
    "tool": ("forget_everything", {}),
    "crash": ("search_memory", {"query": "x"}),
}


@pytest.fixture(scope="module")
def answers() -> dict[str, Any]:
    return _answers(_NoMemory(), CALLS)


def test_every_failed_call_is_one_line_kind_colon_message(answers: dict[str, Any]) -> None:
    for name, result in answers.items():
        assert result.is_error, name
        assert REFUSAL.fullmatch(_text(result)), (name, _text(result))
        assert "Error executing tool" not in _text(result), name


def test_a_refused_user_and_an_unknown_argument_read_alike(answers: dict[str, Any]) -> None:
    assert _text(answers["argument"]) == (
        "InvalidInputError: add_memory has no argument 'time'; it takes messages, user_id, "
        "session_id, speaker, ts, metadata"
    )
    assert _text(answers["user"]).startswith(
        "InvalidInputError: user_id 'bob' is refused: this connection acts for user 'alice' only"
    )


def test_arguments_the_schema_refuses_are_named_in_one_line(answers: dict[str, Any]) -> None:
    assert (
        _text(answers["missing"])
        == "InvalidInputError: search_memory: argument 'query' is required"
    )
    assert _text(answers["range"]).startswith(
        "InvalidInputError: search_memory: argument 'limit': Input should be greater than or"
    )
    assert _text(answers["type"]).startswith(
        "InvalidInputError: search_memory: argument 'limit': Input should be a valid integer"
    )


def test_an_unknown_tool_is_named_with_the_tools_there_are(answers: dict[str, Any]) -> None:
    said = _text(answers["tool"])

    assert said.startswith("InvalidInputError: there is no tool 'forget_everything'; the tools")
    assert "search_memory" in said


def test_a_crash_says_nothing_of_its_exception(answers: dict[str, Any]) -> None:
    said = _text(answers["crash"])

    assert said.startswith("InternalError: search_memory failed on the server")
    assert "reached the memory" not in said


def test_graphmem_s_own_error_keeps_its_kind_and_message() -> None:
    answers = _answers(_BadMemory(), {"read": ("search_memory", {"query": "x"})})

    assert answers["read"].is_error
    assert _text(answers["read"]) == "InvalidInputError: bad memory second line"


class _StoreDown:
    """A memory holder whose data directory is unusable."""

    def get(self) -> Any:
        raise StoreUnavailableError("cannot use the data directory '/srv/secret/memory'")


def test_an_error_about_the_server_says_what_failed_not_where() -> None:
    answers = _answers(_StoreDown(), {"read": ("search_memory", {"query": "x"})})

    said = _text(answers["read"])
    assert answers["read"].is_error
    assert said == (
        "StoreUnavailableError: the memory store is unavailable; the server's log has the details"
    )


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("unreachable: http://10.0.0.7:8080/v1: ConnectionRefusedError: refused (gave up after "
         "1 call)", "fact extraction failed: the LLM did not answer"),
        ("messages 21-40 of 40: http_error: HTTP 401: Incorrect API key provided: sk-ab**yz",
         "fact extraction failed: the LLM refused the request"),
        ("invalid_output: content is not valid JSON: Expecting value", "fact extraction failed: "
         "the LLM's answer was unusable"),
        ("something new at http://10.0.0.7", "fact extraction failed"),
    ],
)  # fmt: skip
def test_an_extraction_fault_is_told_without_the_llm_s_address_or_answer(
    fault: str, said: str
) -> None:
    assert extraction_failure(fault) == said
