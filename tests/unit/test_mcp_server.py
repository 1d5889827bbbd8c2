"""`graphmem mcp`'s own messages and checks, without a store or a model."""

from __future__ import annotations

from engine.mcp_server.server import _unknown_arguments


def test_an_unknown_argument_of_a_tool_without_arguments_says_it_takes_none() -> None:
    said = _unknown_arguments("list_users", ["user_id"], [])

    assert said == "InvalidInputError: list_users has no argument 'user_id'; it takes no arguments"


def test_an_unknown_argument_names_the_close_one_and_those_the_tool_takes() -> None:
    said = _unknown_arguments("search_memory", ["limt"], ["query", "limit"])

    assert said.endswith("no argument 'limt' (did you mean 'limit'?); it takes query, limit")

