"""How fast a search would be if the graph leg's reads cost nothing: a bound for issue 51.

python benchmarks/reads_bound.py --hops 1 2 3 --sample 300
python benchmarks/reads_bound.py --only neighbours probe relation_types shared_neighbours

On the MetaQA store of `benchmarks/metaqa.py` (loaded by it first), two `Memory` objects share
one store in one process. One searches as usual ("live"); the other's graph leg reads through
a recorder that answers every read it has seen before from memory ("replayed"; `--only`: just
those reads). Each question is searched once to record its reads, then both search it, in
turns (the first of each pair alternating), for `--rounds` rounds. The replayed searches are
what a search costs when those reads are free (an in-process graph answering them would be
slower): the rest is embedding, scoring, fusion and the reads not replayed. Both return the
same results (the replay returns what the store returned). Reported per hop: p50 and p95 of
each, the semantic leg's p95 measured in the same rounds, and their ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from metaqa import DEFAULT_DATA, USER, load_questions, wait_for_vector_indexes

from engine import Memory
from engine.embedding import Embedder
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer


class Recorder:
    """The reads of `reads`, each answered from memory after its first time."""

    def __init__(self, reads: Any, only: set[str] | None = None) -> None:
        self._reads, self._only = reads, only
        self._seen: dict[tuple[str, str], Any] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._reads, name)
        if not callable(found) or (self._only is not None and name not in self._only):
            return found

        def replayed(*args: Any, **kwargs: Any) -> Any:
            key = (name, repr((args, sorted(kwargs.items()))))
            if key not in self._seen:
                self._seen[key] = found(*args, **kwargs)
            return self._seen[key]

        return replayed


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def measure(
    searches: dict[str, Callable[[str], float]], texts: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    times: dict[str, list[float]] = {name: [] for name in searches}
    names = list(searches)
    for _ in range(rounds):
        for i, text in enumerate(texts):
            for name in names if i % 2 else reversed(names):
                times[name].append(searches[name](text))
    return {
        name: {"p50": statistics.median(t), "p95": percentile(t, 0.95)} for name, t in times.items()
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".graphmem-bench-metaqa")
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--sample", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument(
        "--only", nargs="+", metavar="READ", help="replay only these `Reads` methods "
        "(e.g. the walk's: neighbours probe relation_types shared_neighbours); default all",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not args.data_dir.exists():
        sys.exit(f"no MetaQA store at {args.data_dir}: run benchmarks/metaqa.py first")
    embedder = Embedder(cache_size=0)
    store = FalkorDBStore.embedded(EmbeddedServer(args.data_dir))
    live, replayed = Memory(store=store, embedder=embedder), Memory(store=store, embedder=embedder)
    leg = replayed.retriever.graph_leg
    leg.reads = leg.ends.reads = Recorder(leg.reads, set(args.only) if args.only else None)  # type: ignore[assignment]
    wait_for_vector_indexes(live)

    def timed(memory: Memory, mode: Any) -> Callable[[str], float]:
        return lambda text: memory.search(text, user_id=USER, mode=mode).timings_ms["total"]

    searches = {
        "live": timed(live, "dual"),
        "replayed": timed(replayed, "dual"),
        "semantic": timed(live, "semantic"),
    }
    print("| hops | live p50 / p95 | replayed p50 / p95 | semantic p95 | live / semantic "
          "| replayed / semantic |\n|---|---|---|---|---|---|")  # fmt: skip
    for hop in args.hops:
        texts = [q.text for q in load_questions(args.data, hop, args.sample, 0)]
        for text in texts:
            searches["replayed"](text)  # record its reads
        t = measure(searches, texts, args.rounds)
        live_t, bound, semantic = t["live"], t["replayed"], t["semantic"]["p95"]
        print(
            f"| {hop} | {live_t['p50']:.1f} / {live_t['p95']:.1f} | {bound['p50']:.1f} / "
            f"{bound['p95']:.1f} | {semantic:.1f} | {live_t['p95'] / semantic:.1f}x | "
            f"{bound['p95'] / semantic:.1f}x |",
            flush=True,
        )
    live.close()
    replayed.close()
    store.close()
    embedder.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
