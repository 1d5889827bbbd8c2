"""Calls of Mem0's API the facade cannot honour the way Mem0 code expects: each raises what
Mem0 raises (or a clear `InvalidInputError`) saying what to do instead, and changes nothing."""

from __future__ import annotations

import asyncio

import pytest

import engine.compat.mem0 as facade
from engine.errors import InvalidInputError
from engine.memory import Memory as GraphMemory


def test_chat_raises_not_implemented_as_mem0s_saying_what_to_do(memory: GraphMemory) -> None:
    """Mem0's `Memory.chat` raises NotImplementedError; the facade had no `chat`, so Mem0 code
    catching NotImplementedError got an AttributeError instead."""
    m = facade.Memory(memory=memory)
    with pytest.raises(NotImplementedError, match=r"no chat.*search\(.*your own LLM"):
        m.chat("What do I like?")


def test_async_chat_raises_not_implemented_as_mem0s(memory: GraphMemory) -> None:
    async def scenario() -> None:
        async with facade.AsyncMemory(memory=memory) as m:
            await m.chat("What do I like?")

    with pytest.raises(NotImplementedError, match=r"no chat.*search\("):
        asyncio.run(scenario())


def test_get_all_refuses_pages_naming_limit(memory: GraphMemory) -> None:
    """`page` / `page_size` (Mem0 Platform's `MemoryClient`) raised a bare TypeError; the
    facade answers one list, so they are refused, naming `limit`, never ignored (page 2 would
    silently be page 1)."""
    m = facade.Memory(memory=memory)
    m.add("I live in Seattle", user_id="bob")
    with pytest.raises(InvalidInputError, match=r"page.*page_size.*limit="):
        m.get_all(user_id="bob", page=2, page_size=50)
    with pytest.raises(InvalidInputError, match=r"page_size.*limit="):
        m.get_all(user_id="bob", page_size=50)
    with pytest.raises(InvalidInputError, match=r"page.*limit="):
        m.get_all(filters={"user_id": "bob"}, page=1)
    assert len(m.get_all(user_id="bob")["results"]) == 1


def test_async_get_all_refuses_pages(memory: GraphMemory) -> None:
    async def scenario() -> None:
        async with facade.AsyncMemory(memory=memory) as m:
            await m.get_all(user_id="bob", page=1, page_size=10)

    with pytest.raises(InvalidInputError, match=r"page.*limit="):
        asyncio.run(scenario())


def test_delete_all_without_an_id_points_to_reset(memory: GraphMemory) -> None:
    """Deleting every user's memories is `reset()`, as Mem0's error says; the facade said only
    that an id is required."""
    m = facade.Memory(memory=memory)
    m.add("I live in Seattle", user_id="bob")
    with pytest.raises(InvalidInputError, match=r"user_id, agent_id or run_id.*reset\(\)"):
        m.delete_all()
    assert len(m.get_all(user_id="bob")["results"]) == 1  # nothing was deleted


def test_delete_all_of_one_run_of_an_agent_keeps_its_other_runs(memory: GraphMemory) -> None:
    """`delete_all(agent_id=, run_id=)` deleted the agent's whole graph, every other run of it
    too; it is refused, as `user_id` with `agent_id` is, and deletes nothing."""
    m = facade.Memory(memory=memory)
    m.add("I live in Paris", agent_id="helper", run_id="r1")
    m.add("I work at Acme", agent_id="helper", run_id="r2")
    with pytest.raises(InvalidInputError, match="delete more than asked"):
        m.delete_all(agent_id="helper", run_id="r1")
    assert len(m.get_all(agent_id="helper", run_id="r2")["results"]) == 1
    assert len(m.get_all(agent_id="helper", run_id="r1")["results"]) == 1
