"""Hub-heavy synthetic knowledge graphs: one-, two- and three-hop and two-anchor questions.

Six invented domains (tests/synthetic_kg.py: a football league, a world of organisations,
families in the style of a Freebase dump, a software industry with relations named as
Wikidata names its properties, bands named as DBpedia names things, politics with Wikidata's
property labels; the last two written after the engine was tuned), each in its own user's
graph: a few hub nodes with hundreds of edges, several relations per member, most relations
also stored the other way round (an `_INVERSE` twin or a differently named one); and the
families graph asked as PathQuestion asks (`kinship`: kinship chained by possessives and
"of", two and three hops only). Questions come from templates with paraphrases; the
retriever gets the question text alone and must find the named entities itself. Protocol
as benchmarks/metaqa.py: answer hits@k over the entities of the top-k facts (the named
entities themselves do not count unless they are answers), latency per search
(`timings_ms`). Each search mode asked runs on the same questions in the same run, each
question in every mode before the next (`paired.each_mode`): `dual` (graphmem) and `semantic`
(the vector leg alone: the baseline that needs no graph).

    python benchmarks/hub_kg.py --per-kind 200
    python benchmarks/hub_kg.py --per-kind 50 --modes dual
    python benchmarks/hub_kg.py --domains football --scale 4   # 16k facts, larger hubs
"""

from __future__ import annotations

import argparse
import inspect
import json
import statistics
import sys
import time
from collections import defaultdict
from functools import partial
from pathlib import Path
from typing import Any

from loadavg import LoadSampler
from metaqa import wait_for_vector_indexes
from outputs import OUT_HELP, json_out
from paired import each_mode
from tails import ratio_text, slowest_stages, stages_text
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine import Memory
from engine.embedding import Embedder
from engine.normalize import entity_key
from tests.synthetic_kg import (
    COMPANIES,
    FAMILIES,
    FOOTBALL,
    KINDS,
    KINSHIP,
    MUSIC,
    ORGANISATIONS,
    POLITICS,
    Graph,
    Question,
    Spec,
    ask,
    companies,
    families,
    football,
    kinship,
    music,
    organisations,
    politics,
)

REPO = Path(__file__).resolve().parent.parent
DOMAINS = {
    "football": (football, FOOTBALL),
    "organisations": (organisations, ORGANISATIONS),
    "families": (families, FAMILIES),
    "companies": (companies, COMPANIES),
    "music": (music, MUSIC),
    "politics": (politics, POLITICS),
    "kinship": (kinship, KINSHIP),
}
MODES = ("dual", "expansion", "semantic")
KS = (1, 5, 10)


def ensure_loaded(mem: Memory, g: Graph, data_dir: Path, seed: int) -> float:
    """Load the domain's triples unless this data dir holds them already (a marker says so)."""
    marker = data_dir / f"hub_kg.{g.domain}.{seed}.{len(g.triples)}.loaded"
    if marker.exists():
        return 0.0
    mem.delete_all(g.domain)
    start = time.perf_counter()
    batch = 2000
    for i in tqdm(range(0, len(g.triples), batch), desc=f"loading {g.domain}", unit="batch"):
        mem.add_facts(g.triples[i : i + batch], user_id=g.domain)
    elapsed = time.perf_counter() - start
    marker.write_text(f"{len(g.triples)} triples in {elapsed:.0f} s\n")
    return elapsed


def score(mem: Memory, user: str, q: Question, mode: Any = "dual") -> dict[str, Any]:
    result = mem.search(q.text, user_id=user, limit=max(KS), mode=mode)
    gold = {entity_key(a) for a in q.answers}
    named = {entity_key(t) for t in q.topics}
    first = direct = None  # direct: a fact joining a named entity itself to an answer
    for rank, hit in enumerate(result.facts, start=1):
        names = {entity_key(hit.fact.subject), entity_key(hit.fact.object)}
        if direct is None and names & named and (names - named) & gold:
            direct = rank
        if first is None and {n for n in names if n not in named or n in gold} & gold:
            first = rank
    return {
        "kind": q.kind,
        "hub": q.hub_start,
        "hits": {k: first is not None and first <= k for k in KS},
        "direct": {k: direct is not None and direct <= k for k in KS},
        "rr": 1.0 / first if first else 0.0,
        "latency_ms": result.timings_ms["total"],
        "timings": result.timings_ms,
        "question": q.text,
        "found": first,
    }


def summarize(rows: list[dict[str, Any]]) -> dict[str, float]:
    lat = sorted(r["latency_ms"] for r in rows)
    out = {f"hits@{k}": statistics.mean(r["hits"][k] for r in rows) for k in KS}
    out |= {f"direct@{k}": statistics.mean(r["direct"][k] for r in rows) for k in KS}
    out["mrr"] = statistics.mean(r["rr"] for r in rows)
    out["p50_ms"] = lat[len(lat) // 2]
    out["p95_ms"] = lat[min(len(lat) - 1, int(len(lat) * 0.95))]
    out["n"] = len(rows)
    stages: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        for stage, ms in r["timings"].items():
            stages[stage].append(ms)
    out |= {f"mean_{s}_ms": statistics.mean(v) for s, v in stages.items() if s != "total"}
    out["slowest_5pct_stages_ms"] = slowest_stages(
        [r["latency_ms"] for r in rows], [r["timings"] for r in rows]
    )
    return out


def groups(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {k: [r for r in rows if r["kind"] == k] for k in KINDS}
    out["2-hop (leaf + hub)"] = out["2-hop leaf"] + out["2-hop hub"]
    out["all"] = rows
    return {k: v for k, v in out.items() if v}


def run(args: argparse.Namespace) -> dict[str, Any]:
    report: dict[str, Any] = {
        "per_kind": args.per_kind,
        "seed": args.seed,
        "scale": args.scale,
        "modes": args.modes,
        "domains": {},
    }
    embedder = Embedder(cache_size=0)  # every query embedded cold
    with Memory(data_dir=args.data_dir, embedder=embedder) as mem:
        for name in args.domains:
            g, specs = graph(name, args.seed, args.scale)
            load_s = ensure_loaded(mem, g, args.data_dir, args.seed)
            wait_for_vector_indexes(mem)  # rebuilt in the background after a reopen
            mem.search("warm up", user_id=g.domain)
            questions = _questions(g, specs, args)
            part: dict[str, Any] = {"facts": mem.stats(g.domain).facts, "load_s": load_s}
            asked = each_mode(questions, args.modes, partial(score, mem, g.domain), name)
            for mode, rows in asked.items():
                part[mode] = {
                    "results": {k: summarize(v) for k, v in groups(rows).items()},
                    "misses": [r["question"] for r in rows if not r["hits"][10]][:40],
                    # each question's first answering rank (None: none in the top 10), for
                    # comparing two runs question by question
                    "ranks": [[r["kind"], r["question"], r["found"]] for r in rows],
                }
            report["domains"][g.domain] = part
    embedder.close()
    return report


def graph(name: str, seed: int, scale: int = 1) -> tuple[Graph, list[Spec]]:
    """The domain's graph and question specs; `scale` times its members (the builder's second
    argument), in a user of its own when scaled."""
    build, specs = DOMAINS[name]
    if scale == 1:
        return build(seed), specs
    members = list(inspect.signature(build).parameters.values())[1].default
    g = build(seed, members * scale)
    g.domain = f"{name}_x{scale}"
    return g, specs


def _questions(g: Graph, specs: list[Spec], args: argparse.Namespace) -> list[Question]:
    return ask(g, specs, args.per_kind, args.seed)


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| domain / questions | mode | n | hits@1 | hits@5 | hits@10 | MRR | direct@10 | p50 ms "
        "| p95 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, part in report["domains"].items():
        kinds = next(part[m]["results"] for m in report["modes"])
        for kind in kinds:
            for mode in report["modes"]:
                s = part[mode]["results"][kind]
                lines.append(
                    f"| {name} / {kind} | {mode} | {s['n']} | {s['hits@1']:.3f} | "
                    f"{s['hits@5']:.3f} | {s['hits@10']:.3f} | {s['mrr']:.3f} | "
                    f"{s['direct@10']:.3f} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} |"
                )
    return "\n".join(lines + tail_lines(report))


def tail_lines(report: dict[str, Any]) -> list[str]:
    """Per domain and mode, where its slowest 5% of searches went (all kinds together), and
    its p95 as a multiple of the semantic leg's in the same run."""
    lines = ["", "slowest 5% of searches (all kinds), median ms per stage (`timings_ms`):"]
    for name, part in report["domains"].items():
        semantic = part.get("semantic", {}).get("results", {}).get("all", {}).get("p95_ms", 0.0)
        for mode in report["modes"]:
            s = part[mode]["results"]["all"]
            lines.append(
                f"- {name} / {mode}: {stages_text(s['slowest_5pct_stages_ms'])}; "
                f"p95 {ratio_text(s['p95_ms'], semantic)} the semantic leg's"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path.home() / ".graphmem-bench-hubkg",
        help="embedded store for the benchmark graphs (kept between runs)",
    )
    parser.add_argument("--per-kind", type=int, default=200, help="questions per kind and domain")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--scale", type=int, default=1, help="graph size as a multiple of the default (hubs grow)"
    )
    parser.add_argument("--modes", nargs="+", default=["dual", "semantic"], choices=MODES)
    parser.add_argument("--domains", nargs="+", default=list(DOMAINS), choices=list(DOMAINS))
    parser.add_argument(
        "--out",
        type=json_out("hub_kg"),
        default=REPO / "benchmarks" / "results" / "hub_kg.json",
        help=OUT_HELP,
    )
    args = parser.parse_args(argv)
    with LoadSampler() as load:
        report = run(args)
    report["load_average"], report["load_text"] = load.summary(), load.text()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    size = f", {args.scale} times the default size" if args.scale > 1 else ""
    print(f"\nHub-heavy synthetic graphs ({args.per_kind} per kind, seed {args.seed}{size})\n")
    print(markdown(report))
    print(f"\n{report['load_text']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
