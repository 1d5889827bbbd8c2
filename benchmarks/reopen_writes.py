"""Writes right after a reopen: how long an `add` waits while FalkorDB builds the vector indexes.

Each run is a fresh interpreter, timed from just before it is spawned, on a stopped store (the
last close dropped its vector indexes, so the reopen builds them again in the background). It
opens the store, loads the models (`warm_s`, outside the adds), then adds two messages and
searches once while the indexes are built, waits for the build, and adds two more and searches
again: the same process, the same kind of write, with and without a build running. Each add is
split into `prepare` (reads, extraction, embedding) and `apply` (the one write).

`--probe SECONDS` instead opens the store once and, for SECONDS, sends a one-node write and a
`RETURN 1` read on two connections of their own every quarter second, printing every call that
waited over a second beside the builds' progress (`db.indexes()`): what the server does to a
write during a build, and to the reads that come after it.

    python benchmarks/reopen_writes.py --data-dir DIR --user kb --runs 5
    python benchmarks/reopen_writes.py --data-dir DIR --probe 110
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPT = """
import json, sys, time
started = float(sys.argv[2])
from engine import Memory
mem = Memory(data_dir=sys.argv[1])
user = sys.argv[3]
marks = {"opened": time.time() - started}
mem._setup(vectors=True)
marks["warming"] = mem.store.warming()
t = time.time(); mem.embedder.encode(["warm up"]); mem.prepare_add("I like tea", user_id="warm-up")
marks["warm_s"] = time.time() - t

def add(name, text):
    t = time.time(); prepared = mem.prepare_add(text, user_id=user); t2 = time.time()
    mem.apply_add(prepared)
    marks[name] = {"at": t - started, "prepare": t2 - t, "apply": time.time() - t2}

def search(name, question):
    t = time.time(); result = mem.search(question, user_id=user)
    marks[name] = {"s": time.time() - t, "warming": result.warming}

add("add1", f"My friend Nora moved to Porto ({started})")
add("add2", f"Nora has a cat named Pixel ({started})")
search("search1", "Where did Nora move?")
while mem.store.warming() and time.time() - started < 600:
    time.sleep(0.5)
marks["built_at"] = time.time() - started
add("add3", f"Nora's sister Ines lives in Braga ({started})")
add("add4", f"Ines works at a bakery ({started})")
search("search2", "Where does Ines live?")
mem.close()
print(json.dumps(marks))
"""


def run_once(data_dir: Path, user_id: str) -> dict[str, Any]:
    """One fresh process on the stopped store at `data_dir`; its marks."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data_dir), repr(started), user_id],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    marks: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return marks


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Medians over the runs; `ratio`: the two adds during the build over the two after it
    (their writes), paired within each run."""

    def median(values: list[float]) -> float:
        return round(statistics.median(values), 2)

    def apply(run: dict[str, Any], *names: str) -> float:
        return float(sum(run[name]["apply"] for name in names))

    return {
        "add1_s": median([r["add1"]["prepare"] + r["add1"]["apply"] for r in runs]),
        "add2_s": median([r["add2"]["prepare"] + r["add2"]["apply"] for r in runs]),
        "slowest_write_in_build_s": median([max(apply(r, "add1"), apply(r, "add2")) for r in runs]),
        "writes_after_build_s": median([apply(r, "add3", "add4") / 2 for r in runs]),
        "ratio": median([apply(r, "add1", "add2") / apply(r, "add3", "add4") for r in runs]),
        "search_during_build_s": median([r["search1"]["s"] for r in runs]),
        "search_after_build_s": median([r["search2"]["s"] for r in runs]),
        "built_at_s": median([r["built_at"] for r in runs]),
    }


def probe(data_dir: Path, seconds: float) -> None:
    """Time a tiny write and a tiny read, each on its own connection, during the builds."""
    from falkordb import FalkorDB

    from engine import Memory

    started = time.time()
    mem = Memory(data_dir=str(data_dir))
    mem._setup(vectors=True)
    server = mem.store._server  # type: ignore[attr-defined]
    clients = [FalkorDB(unix_socket_path=str(server.socket_path)) for _ in range(3)]
    writer, reader, watcher = (client.select_graph("graphmem") for client in clients)
    writer.query("MERGE (:ReopenProbe {id: 1})")
    waits: dict[str, list[float]] = {"write": [], "read": []}

    def timed(kind: str, call: Any, query: str) -> None:
        while time.time() - started < seconds:
            t = time.time()
            call(query)
            waits[kind].append(time.time() - t)
            if waits[kind][-1] > 1:
                print(f"{t - started:6.1f} s: a {kind} waited {waits[kind][-1]:.1f} s", flush=True)
            time.sleep(0.25)

    def builds() -> None:
        seen = None
        query = "CALL db.indexes() YIELD label, status RETURN label, status"
        while time.time() - started < seconds:
            rows = watcher.ro_query(query).result_set
            building = sorted(
                f"{label} {status}" for label, status in rows if status != "OPERATIONAL"
            )
            if building != seen:
                print(f"{time.time() - started:6.1f} s: building {building}", flush=True)
                seen = building
            time.sleep(0.5)

    threads = [
        threading.Thread(target=timed, args=("read", reader.ro_query, "RETURN 1")),
        threading.Thread(target=builds),
    ]
    for thread in threads:
        thread.start()
    timed("write", writer.query, "MATCH (n:ReopenProbe) SET n.t = timestamp()")
    for thread in threads:
        thread.join()
    writer.query("MATCH (n:ReopenProbe) DELETE n")
    for kind, values in waits.items():
        over = sum(value > 1 for value in values)
        print(f"{kind}s: {len(values)}, over 1 s: {over}, max {max(values):.1f} s")
    for client in clients:
        client.connection.close()  # else the close below leaves the server running for them
    mem.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="a stopped, loaded store")
    parser.add_argument("--user", default="kb", help="the user the adds write to")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--probe", type=float, help="probe the server for this many seconds")
    args = parser.parse_args()
    if args.probe:
        probe(args.data_dir, args.probe)
        return
    runs = []
    for number in range(args.runs):
        runs.append(run_once(args.data_dir, args.user))
        print(f"run {number + 1}: {json.dumps(runs[-1])}", flush=True)
    print(json.dumps(summary(runs), indent=2))


if __name__ == "__main__":
    main()
