"""`engine.compat.mem0.AsyncMemory`: Mem0's `AsyncMemory` (every verb awaited) on graphmem, as
Mem0's async documentation uses it, with `mem0` resolving to graphmem's facade."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import engine.compat.mem0 as facade
from engine.errors import ClosedError, NotFoundError, StoreError
from engine.memory import Memory as GraphMemory
from engine.store.server_record import ServerRecord

LIFECYCLE = {"close", "aclose", "from_config"}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n))}


def test_async_memory_has_every_verb_of_the_facade() -> None:
    assert _public(facade.Memory) - LIFECYCLE == _public(facade.AsyncMemory) - LIFECYCLE
    assert "AsyncMemory" in facade.__all__


def test_mem0s_async_example_runs_off_the_event_loop(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mem0's AsyncMemory walkthrough: add, search, get_all, get, update, history, delete,
    delete_all, reset, each awaited, while the event loop goes on; bob never sees alice's."""
    monkeypatch.setitem(sys.modules, "mem0", facade)
    from mem0 import AsyncMemory  # type: ignore[import-not-found]

    async def scenario() -> dict[str, Any]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.001)
                ticks += 1

        async with AsyncMemory(memory=memory) as m:
            clock = asyncio.create_task(ticker())
            added, _ = await asyncio.gather(
                m.add("I live in Paris", user_id="alice", metadata={"category": "home"}),
                m.add("I like tea", user_id="bob"),
            )
            [paris] = added["results"]
            alice, bob = await asyncio.gather(
                m.search("Where do I live?", user_id="alice", limit=5),
                m.search("Where do I live?", user_id="bob", limit=5),
            )
            listed = await m.get_all(user_id="alice")
            await m.update(paris["id"], "alice lives in Paris, France")
            got = await m.get(paris["id"], user_id="alice")
            history = await m.history(paris["id"])
            hidden = await m.get(paris["id"], user_id="bob")  # alice's id in bob's scope
            await m.delete(paris["id"])
            with pytest.raises(NotFoundError):
                await m.history(paris["id"])
            await m.delete_all(user_id="bob")
            after = await m.get_all(user_id="bob")
            await m.reset()
            clock.cancel()
        return {
            "ticks": ticks, "paris": paris, "alice": alice, "bob": bob, "listed": listed,
            "got": got, "history": history, "hidden": hidden, "after": after,
        }  # fmt: skip

    seen = asyncio.run(scenario())
    assert seen["ticks"] > 0  # the loop ran while the calls did
    assert [r["memory"] for r in seen["alice"]["results"]] == ["alice lives in Paris"]
    assert seen["alice"]["results"][0]["metadata"] == {"category": "home"}
    assert {r["user_id"] for r in seen["bob"]["results"]} == {"bob"}  # none of alice's
    assert "Paris" not in str(seen["bob"])
    assert [r["id"] for r in seen["listed"]["results"]] == [seen["paris"]["id"]]
    assert seen["got"]["memory"] == "alice lives in Paris, France"
    assert [h["event"] for h in seen["history"]] == ["ADD", "UPDATE"]
    assert seen["hidden"] is None and seen["after"]["results"] == []
    assert memory.get_all("alice") == []  # reset; a Memory passed in stays open after aclose


def test_async_memory_closes_what_it_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`await AsyncMemory.from_config(...)`, as in Mem0; leaving `async with` stops its pool
    and closes the graphmem memory (and embedded server) it built."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)

    async def scenario() -> facade.AsyncMemory:
        config = {"graphmem": {"data_dir": str(tmp_path / "m"), "embedding_preload": False}}
        m = await facade.AsyncMemory.from_config(config)
        async with m:
            m.graph.add_facts([("Alice", "LIVES_IN", "Paris")], user_id="alice")
            assert len((await m.get_all(user_id="alice"))["results"]) == 1
        with pytest.raises(ClosedError, match="AsyncMemory is closed"):
            await m.search("Paris", user_id="alice")
        await m.aclose()  # again: nothing to do
        return m

    m = asyncio.run(scenario())
    assert m._pool._shutdown  # type: ignore[attr-defined]
    with pytest.raises(StoreError):
        m.graph.stats("alice")  # its store is closed


LEFT_OPEN = """
import asyncio, sys
from engine.compat.mem0 import AsyncMemory

async def main():
    m = await AsyncMemory.from_config({"graphmem": {"data_dir": sys.argv[1]}})
    m.graph.add_facts([("Alice", "LIKES", "tea")], user_id="a")
    found = await m.search("What does Alice like?", user_id="a")
    print("found", len(found["results"]))

asyncio.run(main())
print("end")
"""


def test_an_async_memory_left_open_lets_the_host_exit(tmp_path: Path) -> None:
    """Mem0's examples never close their AsyncMemory: the interpreter still exits 0 and the
    embedded server the memory started stops."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])  # this checkout's engine
    done = subprocess.run(
        [sys.executable, "-c", LEFT_OPEN, str(tmp_path / "m")],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["found 1", "end"]
    assert ServerRecord.read(tmp_path / "m") is None
