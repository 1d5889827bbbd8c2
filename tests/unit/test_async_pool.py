"""`AsyncMemory`'s pool (`engine/async_pool.py`): a call whose caller stops awaiting it runs
to its end, even one still queued behind others when its caller gave up. Such a call was
dropped unrun (asyncio cancels a pool call that has not started), while docs/api.md says it
still runs: an app's `wait_for(mem.add(...), 1)` under load wrote or did not write, by luck."""

from __future__ import annotations

import asyncio
import gc
import logging
import threading

import pytest

from engine.async_pool import Pooled, in_pool


class _Wrapped:
    def __init__(self) -> None:
        self.release = threading.Event()
        self.done: list[str] = []

    def hold(self) -> None:
        assert self.release.wait(10)

    def record(self, what: str) -> str:
        self.done.append(what)
        return what

    def fail(self) -> None:
        raise ValueError("no")

    def close(self) -> None:
        self.done.append("closed")


class _Async(Pooled[_Wrapped]):
    hold = in_pool(_Wrapped.hold)
    record = in_pool(_Wrapped.record)
    fail = in_pool(_Wrapped.fail)


def test_a_queued_call_its_caller_stopped_awaiting_still_runs() -> None:
    wrapped = _Wrapped()

    async def scenario() -> None:
        pooled = _Async(wrapped, owned=True, max_workers=1, name="test")
        busy = asyncio.create_task(pooled.hold())
        await asyncio.sleep(0.01)  # the only worker is taken: the next calls queue
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pooled.record("timed out"), 0.01)
        cancelled = asyncio.create_task(pooled.record("cancelled"))
        await asyncio.sleep(0.01)
        cancelled.cancel()
        with pytest.raises(asyncio.CancelledError):
            await cancelled
        wrapped.release.set()
        await busy
        await pooled.aclose()

    asyncio.run(scenario())
    assert wrapped.done == ["timed out", "cancelled", "closed"]


def test_a_call_nobody_awaits_any_more_fails_without_an_unretrieved_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wrapped = _Wrapped()

    async def scenario() -> None:
        pooled = _Async(wrapped, owned=True, max_workers=1, name="test")
        busy = asyncio.create_task(pooled.hold())
        await asyncio.sleep(0.01)
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(pooled.fail(), 0.01)
        wrapped.release.set()
        await busy
        await pooled.aclose()
        gc.collect()  # an unretrieved error is logged when its future is collected

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(scenario())
    assert "never retrieved" not in caplog.text


def test_a_second_aclose_returns_once_the_first_has_closed() -> None:
    """Two shutdown hooks each awaiting `aclose()`: the second returned at once, while the
    first still waited for a call in flight and the store was open under it."""
    wrapped = _Wrapped()

    async def scenario() -> list[str]:
        pooled = _Async(wrapped, owned=True, max_workers=1, name="test")
        busy = asyncio.create_task(pooled.hold())
        await asyncio.sleep(0.01)
        first = asyncio.create_task(pooled.aclose())
        await asyncio.sleep(0.01)
        asyncio.get_running_loop().call_later(0.2, wrapped.release.set)
        await pooled.aclose()
        seen = list(wrapped.done)
        await asyncio.gather(first, busy)
        await pooled.aclose()  # once closed: returns
        return seen

    assert asyncio.run(scenario()) == ["closed"]
    assert wrapped.done == ["closed"]
