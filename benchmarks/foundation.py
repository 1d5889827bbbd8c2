"""Foundation benchmark: cold start, add_facts throughput and search latency at 10k facts.

python benchmarks/foundation.py --facts 10000 --queries 200
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from outputs import OUT_HELP, json_out

from engine import Memory

REPO = Path(__file__).resolve().parent.parent
PREDICATES = [
    "FRIEND_OF",
    "LIVES_IN",
    "WORKS_AT",
    "LIKES",
    "OWNS",
    "VISITED",
    "KNOWS",
    "STUDIED_AT",
]
WORDS = (
    "amber birch cedar delta ember fjord grove harbor iris juniper kestrel lumen maple nova onyx "
    "pine quartz raven sage tundra"
).split()


def synthetic_facts(n: int, seed: int) -> list[tuple[str, str, str]]:
    """People, places and things with a power-law-ish degree, like a real memory graph."""
    rng = random.Random(seed)
    people = [f"{rng.choice(WORDS).title()} {rng.choice(WORDS).title()} {i}" for i in range(n // 4)]
    things = [f"{rng.choice(WORDS)} {rng.choice(WORDS)} {i}" for i in range(n // 8)]
    facts: set[tuple[str, str, str]] = set()
    while len(facts) < n:
        s = people[min(int(rng.paretovariate(1.2)) - 1, len(people) - 1)]
        o = rng.choice(people if rng.random() < 0.4 else things)
        facts.add((s, rng.choice(PREDICATES), o))
    return sorted(facts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--out",
        type=json_out("foundation"),
        default=REPO / "benchmarks" / "results" / "foundation.json",
        help=OUT_HELP,
    )
    args = parser.parse_args(argv)
    facts = synthetic_facts(args.facts, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        mem = Memory(data_dir=tmp)
        mem.add_facts(facts[:1], user_id="bench")
        mem.search("who does Amber know?", user_id="bench")
        cold = time.perf_counter() - start
        start = time.perf_counter()
        mem.add_facts(facts, user_id="bench", show_progress=True)
        add_s = time.perf_counter() - start
        rng = random.Random(args.seed)
        latencies = []
        for s, p, _ in rng.sample(facts, args.queries):
            query = f"what does {s} {p.replace('_', ' ').lower()}?"
            t = time.perf_counter()
            mem.search(query, user_id="bench")
            latencies.append((time.perf_counter() - t) * 1000)
        mem.close()
    latencies.sort()
    report = {
        "facts": args.facts,
        "cold_start_s": cold,
        "add_facts_s": add_s,
        "add_facts_per_s": args.facts / add_s,
        "queries": args.queries,
        "search_p50_ms": latencies[len(latencies) // 2],
        "search_p95_ms": latencies[int(len(latencies) * 0.95) - 1],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print("| metric | value |\n|---|---|")
    for key, value in report.items():
        print(f"| {key} | {value:.2f} |" if isinstance(value, float) else f"| {key} | {value} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
