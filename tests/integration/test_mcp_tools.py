"""The MCP tools as plain functions over a real `Memory`: what they take and what they answer
(the wire itself: test_mcp.py, test_mcp_logs.py)."""

from __future__ import annotations

from engine.mcp_server import tools
from engine.mcp_server.tools import FactIn
from engine.memory import Memory


def test_a_fact_repeated_in_one_add_facts_call_counts_once(memory: Memory) -> None:
    tea = FactIn(subject="Bob", predicate="likes", object="Tea")
    out = tools.add_facts(memory, "bob", [tea, ["Bob", "LIKES", "Tea"], tea])
    (fact,) = memory.get_all("bob")
    assert (out.data["facts_added"], fact.mentions) == (1, 1)
    assert memory.entity("Bob", "bob").entity.mentions == 1
