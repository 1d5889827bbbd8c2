"""The search threads, and the one thread aside for work no search waits for."""

from __future__ import annotations

import threading
import time

from engine.retrieval.background import BackgroundReads


def _aside_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("graphmem-aside")}


def test_work_aside_runs_one_at_a_time_in_order_and_stops_with_the_pool() -> None:
    others = _aside_threads()  # the process's own pool's, if other tests started it
    pool = BackgroundReads(2)
    pool.hold()
    done: list[int] = []
    running, most = [0], [0]
    lock = threading.Lock()

    def work(i: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
            done.append(i)

    for i in range(5):
        pool.aside(work, i)
    assert pool.submit(lambda: "read").result(timeout=5) == "read"  # the pool is its own
    pool.drain()
    assert done == [0, 1, 2, 3, 4] and most[0] == 1
    assert len(_aside_threads() - others) == 1
    pool.release()
    assert not pool.running()
    assert _aside_threads() <= others
