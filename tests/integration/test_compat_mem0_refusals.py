"""Calls of Mem0's API the facade cannot honour the way Mem0 code expects: each raises what
Mem0 raises (or a clear `InvalidInputError`) saying what to do instead, and changes nothing."""

from __future__ import annotations

import asyncio

import pytest

import engine.compat.mem0 as facade
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
