"""What the process-wide settings a host may ask for save: search latency on LoCoMo with each
of `freeze_gc` and `search_blas_threads=1`, both and neither, alternated in one process.

Ingests the first LoCoMo conversations (offline extractor; kept in --store and reused), then
asks every question with evidence (dual mode) once per configuration per round, the order of
the configurations turning each round, so the machine's load falls on each alike. Both
settings change the whole process, which is why they are off by default (docs/performance.md):
here `gc.freeze()` / `gc.unfreeze()` and the retriever's BLAS limit switch them between blocks.
JSON goes to benchmarks/results/, a markdown table to stdout.

    python benchmarks/host_defaults.py --conversations 2 --rounds 3
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from chat_locomo import DEFAULT_DATA, ingest  # noqa: E402
from loadavg import LoadSampler  # noqa: E402

from engine.embedding import Embedder  # noqa: E402
from engine.ingest import LocomoQuestion, load_locomo_qa, read_chat_log  # noqa: E402
from engine.memory import Memory  # noqa: E402

# name: (gc frozen, BLAS threads while a search runs)
CONFIGS: dict[str, tuple[bool, int | None]] = {
    "neither (default)": (False, None),
    "freeze_gc": (True, None),
    "search_blas_threads=1": (False, 1),
    "both (defaults before)": (True, 1),
}


def _apply(mem: Memory, frozen: bool, blas: int | None) -> None:
    gc.unfreeze()
    if frozen:
        gc.collect()
        gc.freeze()
    mem.retriever.blas_threads = blas


def _block(mem: Memory, questions: list[LocomoQuestion]) -> list[float]:
    times = []
    for question in questions:
        started = time.perf_counter()
        mem.search(question.question, user_id=question.sample_id)
        times.append((time.perf_counter() - started) * 1000.0)
    return times


def measure(mem: Memory, questions: list[LocomoQuestion], rounds: int) -> dict[str, list[float]]:
    """Latencies (ms) per configuration, every question once per configuration per round."""
    names = list(CONFIGS)
    seen: dict[str, list[float]] = {name: [] for name in names}
    for turn in range(rounds):
        for name in names[turn % len(names) :] + names[: turn % len(names)]:
            _apply(mem, *CONFIGS[name])
            seen[name].extend(_block(mem, questions))
    _apply(mem, False, None)
    return seen


def _at(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 1)


def summary(seen: dict[str, list[float]]) -> dict[str, Any]:
    base = float(np.mean(seen["neither (default)"]))
    return {
        name: {
            "searches": len(values),
            "mean": round(float(np.mean(values)), 1),
            "p50": _at(values, 50),
            "p95": _at(values, 95),
            "p99": _at(values, 99),
            "mean_vs_default": round(float(np.mean(values)) / base, 3),
        }
        for name, values in seen.items()
    }


def markdown(payload: dict[str, Any]) -> str:
    lines = [
        f"LoCoMo, {payload['conversations']} conversations, {payload['questions']} questions "
        f"x {payload['rounds']} rounds per configuration, dual search, one process; load "
        f"average {payload['load']}",
        "",
        "| configuration | mean ms | p50 | p95 | p99 | mean / default |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, row in payload["latency_ms"].items():
        lines.append(
            f"| {name} | {row['mean']} | {row['p50']} | {row['p95']} | {row['p99']} "
            f"| {row['mean_vs_default']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    records = read_chat_log(args.data, format="locomo").records
    users = list(dict.fromkeys(r.user_id for r in records))[: args.conversations]
    records = [r for r in records if r.user_id in users]
    questions = [q for q in load_locomo_qa(args.data) if q.evidence and q.sample_id in users]
    embedder = Embedder(cache_size=0)  # every search embeds its query afresh
    embedder.encode(["warm up"])
    with Memory(embedder=embedder, data_dir=args.store) as mem:
        ingested = ingest(mem, records, 4)
        _block(mem, questions[:20])  # warm: the user's caches and the model's shapes
        with LoadSampler() as load:
            seen = measure(mem, questions, args.rounds)
    payload = {
        "when": datetime.now(UTC).isoformat(),
        "conversations": len(users),
        "questions": len(questions),
        "rounds": args.rounds,
        "cpus": os.cpu_count(),
        "load": load.text(),
        "ingest": ingested,
        "latency_ms": summary(seen),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"host_defaults_{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(payload, indent=2))
    print(markdown(payload))
    print(f"\nJSON: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--conversations", type=int, default=2, help="the first N conversations")
    parser.add_argument("--rounds", type=int, default=3, help="blocks per configuration")
    parser.add_argument(
        "--store",
        type=Path,
        default=Path.home() / ".graphmem-bench-host",
        help="data directory (kept; reused when it holds the conversations)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main())
