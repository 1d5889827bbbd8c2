"""MetaQA retrieval benchmark: dual vs expansion-only vs semantic-only, no LLM anywhere.

Loads `kb_reconstructed.txt` into one user's graph with `add_facts` (cached in --data-dir, so a
rerun skips the load), asks a fixed random sample of 1-hop and 2-hop dev questions (3-hop
with `--hops 3`) with the topic entity's brackets removed (the retriever must find it), and
reports answer hits@k, recall@k and MRR over the entities of the top-k facts,
candidate-subgraph size and latency. Each question is asked in every mode before the next,
the modes' order turning (`paired.each_mode`), so latency ratios between modes are paired.
Metric definitions: ../shared/data/README.md.

    python benchmarks/metaqa.py --sample 1000
    python benchmarks/metaqa.py --sample 500 --hops 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from loadavg import LoadSampler
from outputs import OUT_HELP, json_out
from paired import each_mode
from tails import ratio_text, slowest_stages, stages_text
from tqdm import tqdm

from engine import Memory
from engine.embedding import Embedder
from engine.normalize import entity_key

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data" / "metaqa"
USER = "metaqa"
KS = (1, 5, 10, 20)
MODES = ("dual", "expansion", "semantic")
RELATION = {
    "actor": "starred_actors", "director": "directed_by", "writer": "written_by",
    "year": "release_year", "genre": "has_genre", "tags": "has_tags", "tag": "has_tags",
    "language": "in_language", "imdbrating": "has_imdb_rating", "imdbvotes": "has_imdb_votes",
}  # fmt: skip


@dataclass(frozen=True)
class Question:
    hop: int
    text: str
    topic: str
    answers: frozenset[str]
    qtype: str


def load_kb(path: Path) -> list[tuple[str, str, str]]:
    triples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 3:
            triples.append((parts[0], parts[1], parts[2]))
    return triples


def load_questions(data: Path, hop: int, sample: int, seed: int) -> list[Question]:
    lines = (
        (data / f"{hop}-hop" / "vanilla" / "qa_dev.txt").read_text(encoding="utf-8").splitlines()
    )
    qtypes = (data / f"{hop}-hop" / "qa_dev_qtype.txt").read_text(encoding="utf-8").splitlines()
    out = []
    for line, qtype in zip(lines, qtypes, strict=True):
        question, answers = line.split("\t")
        topic = re.search(r"\[(.+?)\]", question)
        if topic is None:
            continue
        text = question.replace("[", "").replace("]", "")
        out.append(Question(hop, text, topic.group(1), frozenset(answers.split("|")), qtype))
    rng = random.Random(seed)
    return out if sample <= 0 or sample >= len(out) else rng.sample(out, sample)


class Reachability:
    """Which answers a question type's relation path reaches from the topic entity."""

    def __init__(self, triples: list[tuple[str, str, str]]) -> None:
        self.forward: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.backward: dict[tuple[str, str], set[str]] = defaultdict(set)
        for s, r, o in triples:
            self.forward[(s, r)].add(o)
            self.backward[(o, r)].add(s)

    def reachable(self, topic: str, qtype: str) -> set[str]:
        kinds = qtype.split("_to_")
        frontier = {topic}
        for here, there in itertools.pairwise(kinds):
            step: set[str] = set()
            for node in frontier:
                if here == "movie":
                    step |= self.forward[(node, RELATION[there])]
                else:
                    step |= self.backward[(node, RELATION[here])]
            frontier = step
        return frontier


def ensure_loaded(
    mem: Memory, triples: list[tuple[str, str, str]], data_dir: Path, reload: bool
) -> float:
    """Load the KB unless this data dir already holds it; return the load time in seconds.
    (Names that differ only in case are one entity, so the graph has a few facts fewer than
    the file has triples: a marker file, not a count, says the load completed.)"""
    marker = data_dir / "metaqa.loaded"
    if reload:
        mem.delete_all(USER)
        marker.unlink(missing_ok=True)
    if marker.exists():
        return 0.0
    start = time.perf_counter()
    batch = 10_000
    for i in tqdm(range(0, len(triples), batch), desc="loading MetaQA KB", unit="batch"):
        mem.add_facts(triples[i : i + batch], user_id=USER)
    elapsed = time.perf_counter() - start
    marker.write_text(f"{len(triples)} triples in {elapsed:.0f} s\n")
    return elapsed


def wait_for_vector_indexes(mem: Memory) -> None:
    """After a reopen the vector indexes are built in the background; measure once built."""
    started = time.perf_counter()
    while warming := mem.stats().warming:
        print(f"vector indexes still building: {', '.join(warming)}", file=sys.stderr)
        time.sleep(10)
    if time.perf_counter() - started > 1:
        print(f"built after {time.perf_counter() - started:.0f} s", file=sys.stderr)


def score(mem: Memory, q: Question, mode: str) -> dict[str, Any]:
    result = mem.search(q.text, user_id=USER, limit=max(KS), mode=mode)  # type: ignore[arg-type]
    gold = {entity_key(a) for a in q.answers}
    topic = entity_key(q.topic)
    ranks_hit: list[int] = []
    found_at: dict[int, set[str]] = {}
    direct = None  # the first fact joining the topic itself to an answer (1-hop: the answer's fact)
    for rank, hit in enumerate(result.facts, start=1):
        names = {entity_key(hit.fact.subject), entity_key(hit.fact.object)}
        if direct is None and topic in names and (names - {topic}) & gold:
            direct = rank
        names = {n for n in names if n != topic or n in gold}
        if names & gold:
            ranks_hit.append(rank)
        found_at[rank] = (found_at.get(rank - 1, set()) | names) & gold
    first = ranks_hit[0] if ranks_hit else None
    last = len(result.facts)
    recall = {k: len(found_at.get(min(k, last), set())) / len(gold) for k in KS}
    return {
        "question": q.text,
        "found": first,
        "hits": {k: first is not None and first <= k for k in KS},
        "direct": {k: direct is not None and direct <= k for k in KS},
        "recall": recall,
        "rr": 1.0 / first if first else 0.0,
        "candidates": result.candidates,
        "latency_ms": result.timings_ms["total"],
        "timings": result.timings_ms,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    if not rows:
        return {}
    lat = sorted(r["latency_ms"] for r in rows)
    out = {f"hits@{k}": statistics.mean(r["hits"][k] for r in rows) for k in KS}
    out |= {f"direct@{k}": statistics.mean(r["direct"][k] for r in rows) for k in KS}
    out |= {f"recall@{k}": statistics.mean(r["recall"][k] for r in rows) for k in KS}
    out["mrr"] = statistics.mean(r["rr"] for r in rows)
    out["candidates_mean"] = statistics.mean(r["candidates"] for r in rows)
    out["p50_ms"] = lat[len(lat) // 2]
    out["p95_ms"] = lat[min(len(lat) - 1, int(len(lat) * 0.95))]
    out["n"] = len(rows)
    out["slowest_5pct_stages_ms"] = slowest_stages(
        [r["latency_ms"] for r in rows], [r["timings"] for r in rows]
    )
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    triples = load_kb(args.data / "kb_reconstructed.txt")
    reach = Reachability(triples)
    report: dict[str, Any] = {"sample_per_hop": args.sample, "seed": args.seed, "results": {}}
    # no vectors kept: each mode asks the same questions, and a query embedded for one mode
    # must not make the next one look faster
    embedder = Embedder(cache_size=0)
    with Memory(data_dir=args.data_dir, embedder=embedder) as mem:
        report["load_s"] = ensure_loaded(mem, triples, args.data_dir, args.reload)
        report["facts"] = mem.stats(USER).facts
        wait_for_vector_indexes(mem)
        mem.search("warm up", user_id=USER)
        for hop in args.hops:
            questions = load_questions(args.data, hop, args.sample, args.seed)
            answerable = [reach.reachable(q.topic, q.qtype) & q.answers != set() for q in questions]
            asked = each_mode(questions, args.modes, partial(score, mem), f"{hop}-hop")
            for mode, rows in asked.items():
                report["results"][f"{hop}-hop/{mode}"] = {
                    "all": summarize(rows),
                    "answerable": summarize(
                        [r for r, ok in zip(rows, answerable, strict=True) if ok]
                    ),
                    # each question's first answering rank (None: not in the top 20), for
                    # comparing two runs question by question
                    "ranks": [[r["question"], r["found"]] for r in rows],
                }
    embedder.close()
    return report


def markdown(report: dict[str, Any]) -> str:
    head = (
        "| hops / mode | n | hits@1 | hits@5 | hits@10 | hits@20 | MRR | direct@1 | direct@10 "
        "| candidates | p50 ms | p95 ms |"
    )
    lines = [head, "|" + "---|" * 12]
    for name, parts in report["results"].items():
        for subset in ("all", "answerable"):
            s = parts[subset]
            if not s:
                continue
            lines.append(
                f"| {name} ({subset}) | {s['n']} | {s['hits@1']:.3f} | {s['hits@5']:.3f} | "
                f"{s['hits@10']:.3f} | {s['hits@20']:.3f} | {s['mrr']:.3f} | "
                f"{s['direct@1']:.3f} | {s['direct@10']:.3f} | "
                f"{s['candidates_mean']:.0f} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} |"
            )
    return "\n".join(lines + tail_lines(report["results"]))


def tail_lines(results: dict[str, Any]) -> list[str]:
    """Per hop and mode, where its slowest 5% of searches went, and its p95 as a multiple
    of the semantic leg's in the same run."""
    lines = ["", "slowest 5% of searches (all questions), median ms per stage (`timings_ms`):"]
    for name, parts in results.items():
        hop = name.split("/")[0]
        semantic = results.get(f"{hop}/semantic", {}).get("all", {}).get("p95_ms", 0.0)
        s = parts["all"]
        if not s:
            continue
        lines.append(
            f"- {name}: {stages_text(s['slowest_5pct_stages_ms'])}; "
            f"p95 {ratio_text(s['p95_ms'], semantic)} the semantic leg's"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the metaqa/ folder")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path.home() / ".graphmem-bench-metaqa",
        help="embedded store for the benchmark graph (kept between runs)",
    )
    parser.add_argument("--sample", type=int, default=1000, help="questions per hop (0 = all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hops", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--reload", action="store_true", help="reload the KB even if cached")
    parser.add_argument(
        "--out",
        type=json_out("metaqa"),
        default=REPO / "benchmarks" / "results" / "metaqa.json",
        help=OUT_HELP,
    )
    args = parser.parse_args(argv)
    with LoadSampler() as load:
        report = run(args)
    report["load_average"], report["load_text"] = load.summary(), load.text()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(
        f"\nMetaQA ({report['facts']} facts, load {report['load_s']:.0f} s, "
        f"{args.sample or 'all'} questions per hop, seed {args.seed})\n"
    )
    print(markdown(report))
    print(f"\n{report['load_text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
