"""Where a reopen's time goes: a new process opens a stopped store and searches once.

Each run is a fresh interpreter, timed from just before it is spawned; it reports the moment
(seconds since that start) each stage ended, in the order a first search meets them:

- `imports`: the interpreter started and `engine` imported;
- `store_open`: `Memory(...)` returned: the embedded server started and loaded its files (the
  model loads in a thread meanwhile);
- `setup`: the schema declared (vector indexes dropped by the last close declared again;
  FalkorDB builds them in the background);
- `model_ready`: the embedding model loaded and warmed up (0 when it was ready before setup);
- `first_search`: the first search answered (while vector indexes warm, their reads scan).

`server` holds what the server's log says of its start: seconds to load its files.
`cold_start` runs the same script on an empty data directory, back to back with the reopen.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
QUERY = "who directed Kismet"
# the engine the reopened process imports: this tree, or another (a base to compare with)
ENGINE = os.environ.get("GRAPHMEM_BENCH_ENGINE", str(REPO))
SCRIPT = """
import sys, time, json
started = float(sys.argv[2])
marks = {}
from engine import Memory
marks["imports"] = time.time() - started
mem = Memory(data_dir=sys.argv[1])
marks["store_open"] = time.time() - started
mem._setup()
marks["setup"] = time.time() - started
mem.embedder.wait_loaded()
marks["model_ready"] = time.time() - started
result = mem.search(sys.argv[3], user_id=sys.argv[4])
marks["first_search"] = time.time() - started
again = time.time()
second = mem.search("what films did Marlene Dietrich star in", user_id=sys.argv[4])
print(json.dumps({"marks": marks, "warming": result.warming,
                  "second_search_s": time.time() - again, "second_warming": second.warming,
                  "top": [h.fact.text for h in result.facts[:3]]}))
mem.close()
"""
_LOADED = re.compile(r"DB loaded from (?:append only file|disk): ([0-9.]+) seconds")


def run_once(data_dir: Path, user_id: str = "metaqa") -> dict[str, Any]:
    """One fresh process: open `data_dir`, search once; stage marks in seconds from spawn."""
    started = time.time()
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data_dir.resolve()), repr(started), QUERY, user_id],
        capture_output=True, text=True, check=True, env=os.environ | {"PYTHONPATH": ENGINE},
        cwd=ENGINE,  # `-c` puts the working folder first on the path: it must be the engine's
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["server"] = server_log(data_dir)
    result["reopen_to_first_search_s"] = round(result["marks"]["first_search"], 2)
    result["stages_s"] = stages(result["marks"])
    return result


def stages(marks: dict[str, float]) -> dict[str, float]:
    """Each stage's own seconds (a stage that ended before the previous one counts 0)."""
    out, last = {}, 0.0
    for name, at in marks.items():
        out[name] = round(max(0.0, at - last), 3)
        last = max(last, at)
    return out


def server_log(data_dir: Path) -> dict[str, float | None]:
    """Seconds the server's last start spent loading its files, from its log."""
    try:
        text = (data_dir / "falkordb.log").read_text(errors="replace")
    except OSError:
        return {"files_load_s": None}
    found = _LOADED.findall(text)
    return {"files_load_s": float(found[-1]) if found else None}


def cold_start(scratch: Path) -> dict[str, Any]:
    """The same script on an empty data directory (made and removed here)."""
    empty = scratch / "cold-start"
    shutil.rmtree(empty, ignore_errors=True)
    try:
        return run_once(empty)
    finally:
        shutil.rmtree(empty, ignore_errors=True)


def paired(data_dir: Path, rounds: int) -> dict[str, Any]:
    """`rounds` reopens of `data_dir`, each followed by a cold start; medians and the ratio."""
    reopens, colds = [], []
    for _ in range(rounds):
        reopens.append(run_once(data_dir))
        colds.append(cold_start(data_dir.parent))
    reopen_s = median([r["reopen_to_first_search_s"] for r in reopens])
    cold_s = median([c["reopen_to_first_search_s"] for c in colds])
    return {
        "reopen_to_first_search_s": reopen_s,
        "cold_start_to_first_search_s": cold_s,
        "ratio": round(reopen_s / cold_s, 2),
        "reopen_stages_s": median_stages([r["stages_s"] for r in reopens]),
        "cold_start_stages_s": median_stages([c["stages_s"] for c in colds]),
        "reopens": reopens,
        "cold_starts": colds,
    }


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2, 3)


def median_stages(runs: list[dict[str, float]]) -> dict[str, float]:
    return {name: median([run[name] for run in runs]) for name in runs[0]}
