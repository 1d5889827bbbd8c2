"""A chat user's first search in a new process against that user's warm search (LoCoMo).

    python benchmarks/first_search_chat.py --conversations 4 --rounds 2

Uses the stores `context_locomo.py` builds (run it once first; messages and the offline
extractor's facts). Each measurement is a fresh interpreter: it opens the user's store,
searches another user once (what a process pays once, not per user: the model's first
shapes, the search threads), then times the user's first search (`--mode`, dual by
default) and the median of `--warm` later searches of the user's own questions. The stored
per-user indexes a search writes are kept between rounds, as a store keeps them between
processes. Reported: per user and round, first, warm and first / warm; the median ratio.
Run it with PYTHONPATH pointing at the tree to measure (main, then a branch).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from outputs import OUT_HELP, json_out

REPO = Path(__file__).resolve().parent.parent

_CHILD = """
import json, statistics, sys, time
sys.path.insert(0, {bench!r})
from context_locomo import code_digest, parse_args, store_dir
from engine.ingest import load_locomo_qa
from engine.memory import Memory
args = parse_args([])
user, mode, warm = {user!r}, {mode!r}, {warm}
asked = [q.question for q in load_locomo_qa(args.data) if q.evidence and q.sample_id == user]
with Memory(data_dir=store_dir(args.store_root, args.data, user, code_digest())) as mem:
    mem.search("what happened last week", user_id="someone else", mode=mode)
    start = time.perf_counter()
    mem.search(asked[0], user_id=user, mode=mode)
    first = time.perf_counter() - start
    times = []
    for question in asked[1 : warm + 1]:
        start = time.perf_counter()
        mem.search(question, user_id=user, mode=mode)
        times.append(time.perf_counter() - start)
print(json.dumps({{"first": first, "warm": statistics.median(times)}}))
"""


def measure(user: str, mode: str, warm: int) -> dict[str, float]:
    code = _CHILD.format(bench=str(REPO / "benchmarks"), user=user, mode=mode, warm=warm)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warm", type=int, default=8, help="warm searches per user (median)")
    parser.add_argument("--mode", default="dual")
    parser.add_argument("--out", type=json_out("first_search_chat"), help=OUT_HELP)
    args = parser.parse_args()
    users = [f"conv-{n}" for n in (26, 30, 41, 42, 43, 44, 47, 48, 49, 50)][: args.conversations]
    rows: list[dict[str, Any]] = []
    for round_ in range(args.rounds):
        for user in users:
            row: dict[str, Any] = {
                "round": round_,
                "user": user,
                **measure(user, args.mode, args.warm),
            }
            rows.append(row)
            print(
                f"round {round_} {user}: first {row['first'] * 1000:.1f} ms, "
                f"warm {row['warm'] * 1000:.1f} ms, ratio {row['first'] / row['warm']:.2f}",
                flush=True,
            )
    ratio = statistics.median(r["first"] / r["warm"] for r in rows)
    first = statistics.median(r["first"] for r in rows) * 1000
    warm = statistics.median(r["warm"] for r in rows) * 1000
    print(f"{args.mode}: first {first:.1f} ms, warm {warm:.1f} ms, median ratio {ratio:.2f}")
    if args.out:
        args.out.write_text(json.dumps({"args": vars(args) | {"out": None}, "rows": rows}))


if __name__ == "__main__":
    main()
