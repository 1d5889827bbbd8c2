"""Bulk load benchmark: the 128k-fact MetaQA KB through `Memory.load`, then a cold reopen.

Loads `kb_reconstructed.txt` (subject|predicate|object) into a fresh data dir (--data-dir is
emptied first: give it a directory of its own) for the user
`metaqa` (the user benchmarks/metaqa.py asks), reports facts/s end to end (embeddings
included), where the time went, the peak memory of this process and of the database server,
then stops the server and measures, in new processes, how long a reopen takes to its first
answered search (process start included), stage by stage, against a cold start on an empty
store run back to back (`reopen_stages.py`). The data dir is left ready for
`python benchmarks/metaqa.py --data-dir DIR` (a marker file says it is loaded);
`--reopen-only` measures the reopen of such a dir again without loading it. `--floor` then
embeds, alone, every text the load embedded (the new entities' names, then the facts' texts,
in the load's chunks and with its workers) and reports the load's time against that floor.

    python benchmarks/load_metaqa.py --data-dir ~/.graphmem-bench-load --floor
    python benchmarks/load_metaqa.py --data-dir ~/.graphmem-bench-load --reopen-only --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from outputs import OUT_HELP, json_out

sys.path.insert(0, str(Path(__file__).resolve().parent))
from reopen_stages import paired

from engine import Memory
from engine.config import Settings
from engine.embedding import Embedder
from engine.load import Limits
from engine.load.plan import make_plan
from engine.load.read import Triple, TripleFormat, read_triples
from engine.load.run import EMBED_WORKERS

REPO = Path(__file__).resolve().parent.parent
DEFAULT_KB = REPO.parent / "shared" / "data" / "metaqa" / "kb_reconstructed.txt"
USER = "metaqa"
KB_FORMAT: TripleFormat = "tsv"
KB_DELIMITER = "|"  # subject|predicate|object


def server_peak_kb(data_dir: Path) -> int | None:
    """Peak resident memory (VmHWM) of the embedded server, from its pid file."""
    try:
        pid = int((data_dir / "falkordb.pid").read_text())
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError):
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def server_cpu_s(data_dir: Path) -> float | None:
    """CPU seconds (user + system) the embedded server has used, from its pid file."""
    try:
        pid = int((data_dir / "falkordb.pid").read_text())
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, ValueError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kb", type=Path, default=DEFAULT_KB)
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".graphmem-bench-load")
    parser.add_argument("--chunk-size", type=int, default=2000)
    parser.add_argument("--limit", type=int, default=0, help="first N lines only (0 = all)")
    parser.add_argument(
        "--out",
        type=json_out("load"),
        default=REPO / "benchmarks" / "results" / "load.json",
        help=OUT_HELP,
    )
    parser.add_argument("--rounds", type=int, default=1, help="reopens (each with a cold start)")
    parser.add_argument(
        "--reopen-only", action="store_true", help="measure the reopen of a loaded --data-dir"
    )
    parser.add_argument(
        "--floor", action="store_true", help="after the load, time embedding its texts alone"
    )
    args = parser.parse_args(argv)
    if args.reopen_only:
        if not (args.data_dir / "metaqa.loaded").exists():
            parser.error(f"{args.data_dir} was not loaded by this benchmark")
        return write(args.out, {"data_dir": str(args.data_dir), **measure_reopen(args)})
    source = args.kb
    if args.limit:
        source = Path(args.data_dir.parent / f"kb-first-{args.limit}.txt")
        lines = args.kb.read_text(encoding="utf-8").splitlines()[: args.limit]
        source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.rmtree(args.data_dir, ignore_errors=True)
    with open("/proc/loadavg") as handle:
        load_before = handle.read().split()[:3]
    started = time.perf_counter()
    mem = Memory(data_dir=args.data_dir)
    report = mem.load(
        source, USER, format=KB_FORMAT, delimiter=KB_DELIMITER, chunk_size=args.chunk_size
    )
    total = time.perf_counter() - started
    facts = mem.stats(USER).facts
    peak_server = server_peak_kb(args.data_dir)
    server_cpu = server_cpu_s(args.data_dir)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    close_started = time.perf_counter()
    mem.close()
    close_s = time.perf_counter() - close_started
    (args.data_dir / "metaqa.loaded").write_text(f"{facts} facts by load_metaqa.py\n")
    result: dict[str, Any] = {
        "kb": str(args.kb),
        "lines": report.lines_read,
        "facts": facts,
        "load": report.model_dump(),
        "end_to_end_s": round(total, 1),
        "facts_per_s_end_to_end": round(report.facts_added / total, 1),
        "peak_rss_mb": {
            "python": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "server": round(peak_server / 1024) if peak_server else None,
        },
        # CPU seconds over the load (both cores count): what the 2 cores had to give
        "cpu_s": {
            "python": round(usage.ru_utime + usage.ru_stime, 1),
            "server": round(server_cpu, 1) if server_cpu is not None else None,
        },
        "close_s": round(close_s, 1),
        "loadavg_before": load_before,
    }
    if args.floor:  # after the peak memory was read: it loads a model of its own
        result |= embedding_floor(source, args.chunk_size, report.seconds)
    return write(args.out, result | measure_reopen(args))


def embedding_floor(source: Path, chunk_size: int, load_s: float) -> dict[str, Any]:
    """The time embedding alone takes for what the load embedded (a fresh user's plan: every
    entity new), chunk by chunk as the load does, and the load's time against it."""
    settings = Settings()
    limits = Limits(settings.max_name_chars, settings.max_text_chars)
    triples = [
        t for t in read_triples(source, KB_FORMAT, limits, KB_DELIMITER) if isinstance(t, Triple)
    ]
    plan = make_plan(None, USER, triples, fresh=True, now=time.time())  # type: ignore[arg-type]
    names = [e.name for e in plan.entities if e.uid in plan.new_entities]
    texts = [f.text for f in plan.facts]
    embedder = Embedder()
    embedder.encode_bulk(names[:64], EMBED_WORKERS)  # the model loaded and warm, as in a load
    started = time.perf_counter()
    for part in (names, texts):
        for at in range(0, len(part), chunk_size):
            embedder.encode_bulk(part[at : at + chunk_size], EMBED_WORKERS)
    floor_s = time.perf_counter() - started
    embedder.close()
    return {
        "embedding_floor": {
            "texts": len(names) + len(texts),
            "seconds": round(floor_s, 1),
            "load_over_floor": round(load_s / floor_s, 2),
        }
    }


def measure_reopen(args: argparse.Namespace) -> dict[str, Any]:
    with open("/proc/loadavg") as handle:
        load_before = handle.read().split()[:3]
    reopen = paired(args.data_dir, args.rounds)
    with open("/proc/loadavg") as handle:
        return {"reopen": reopen, "reopen_loadavg": [load_before, handle.read().split()[:3]]}


def write(out: Path, result: dict[str, Any]) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
