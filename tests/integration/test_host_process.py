"""A library leaves its host process alone: importing graphmem, or opening and closing a
`Memory` with the default settings, changes nothing process-wide (garbage collector, BLAS
threads, threads left running). The cases that check process-wide state run in a fresh interpreter;
a `Memory` left open is released without taking a lock its collector's thread may hold."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import weakref
from pathlib import Path
from typing import Any

from engine.embedding import Embedder
from engine.memory import Memory
from engine.retrieval.background import BACKGROUND
from engine.store.base import GraphStore

IMPORT = """
    import gc, json, threading
    from threadpoolctl import ThreadpoolController
    import numpy  # the host's BLAS, loaded before graphmem
    def state():
        blas = [lib["num_threads"] for lib in ThreadpoolController().info()
                if lib["user_api"] == "blas"]
        return {"frozen": gc.get_freeze_count(), "gc": [gc.isenabled(), *gc.get_threshold()],
                "threads": sorted(t.name for t in threading.enumerate()), "blas": blas}
    before = state()
    import engine, engine.memory, engine.retrieval.retriever, engine.cli, engine.async_memory
    print(json.dumps([before, state()]))
"""

OPEN_CLOSE = """
    import gc, json, sys, threading
    import openvino  # its import starts a telemetry thread of OpenVINO's, not graphmem's
    from threadpoolctl import ThreadpoolController
    from engine import Memory
    from engine.retrieval.scorer import PredicateScorer
    controller = ThreadpoolController()
    def blas():
        return sorted({lib["num_threads"] for lib in controller.info()
                       if lib["user_api"] == "blas"})
    during = []
    match = PredicateScorer.match
    def watched(self, *args, **kwargs):
        during.extend(blas())
        return match(self, *args, **kwargs)
    PredicateScorer.match = watched
    threads = {t.name for t in threading.enumerate()}
    with controller.limit(limits=2, user_api="blas"):  # the host's own setting
        with Memory(data_dir=sys.argv[1]) as mem:
            mem.add_facts([("Alice", "KNOWS", "Bob")], user_id="a")
            hits = len(mem.search("who does Alice know?", user_id="a").facts)
            searching = sorted(t.name for t in threading.enumerate())
        left = sorted(t.name for t in threading.enumerate() if t.name not in threads)
        print(json.dumps({"hits": hits, "searching": searching, "left": left,
                          "during": sorted(set(during)), "after": blas(),
                          "frozen": gc.get_freeze_count()}))
"""


def _run(script: str, *args: str) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_graphmem_changes_no_process_state() -> None:
    before, after = _run(IMPORT)
    assert before["blas"]  # numpy's BLAS is there to be changed
    assert after == before


def test_a_memory_opened_and_closed_leaves_the_process_as_it_found_it(tmp_path: Path) -> None:
    """The search threads stop at close, a search runs with the host's BLAS threads, and
    no object is frozen out of the garbage collector's view."""
    seen = _run(OPEN_CLOSE, str(tmp_path / "data"))
    assert seen["hits"] >= 1
    assert any(name.startswith("graphmem-search") for name in seen["searching"])
    assert seen["left"] == []
    assert seen["during"] == [2] and seen["after"] == [2]
    assert seen["frozen"] == 0


def test_a_closed_memory_frees_its_model_without_a_garbage_collection(tmp_path: Path) -> None:
    """The model it loaded (~400 MB, and its runtime's threads) goes at `close`, not at the
    next full collection: a host opening memories in turn does not grow by a model each."""
    gc.disable()
    try:
        with Memory(data_dir=tmp_path / "data") as mem:
            mem.add_facts([("Alice", "KNOWS", "Bob")], user_id="a")
            model = weakref.ref(mem.embedder.model)
        assert model() is None
    finally:
        gc.enable()


def test_a_memory_collected_inside_graphmems_own_lock_is_released_without_a_deadlock(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """The cycle collector runs inside whichever thread allocates: once it collected an
    unclosed `Memory` while that thread was starting a search thread under the pool's lock,
    and the release waited for that lock forever (a whole CI run hung)."""
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    mem.cycle = mem  # type: ignore[attr-defined]  # garbage only the cycle collector finds
    finalizer = mem._finalizer
    del mem

    def collect_holding_the_lock() -> None:
        with BACKGROUND._lock:
            gc.collect()

    worker = threading.Thread(target=collect_holding_the_lock, daemon=True)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "the collected Memory's release waited for a lock its thread held"
    assert not finalizer.alive  # collected, and its release begun
    deadline = time.monotonic() + 30
    while _releasing() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _releasing()  # and finished once the lock was free


def _releasing() -> bool:
    return any(t.name == "graphmem-release" for t in threading.enumerate())


OPENVINO = """
    import json, sys
    from openvino_telemetry.utils.opt_in_checker import OptInChecker
    check = OptInChecker.check
    from engine import Memory
    with Memory(data_dir=sys.argv[1]) as mem:  # its model exported afresh: a new cache
        mem.add_facts([("Alice", "LIKES", "tea")], user_id="u")
        hits = len(mem.search("What does Alice like?", user_id="u").facts)
    openvino = sys.modules["openvino"]
    print(json.dumps({"hits": hits, "converter": hasattr(openvino, "convert_model"),
                      "check_restored": OptInChecker.check is check}))
"""


def test_graphmems_use_of_openvino_sends_and_writes_nothing(tmp_path: Path) -> None:
    """OpenVINO's import and model conversion send usage events to Intel and write ~/intel/
    unless declined (or in CI): graphmem, whose default runtime it is, declines them."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL")}
    env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(OPENVINO), str(tmp_path / "data")],
        capture_output=True, text=True, timeout=600, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"hits": 1, "converter": True, "check_restored": True}
    assert any((tmp_path / "cache" / "graphmem" / "openvino").iterdir())  # it converted
    assert not (tmp_path / "intel").exists(), sorted(p.name for p in (tmp_path / "intel").iterdir())
