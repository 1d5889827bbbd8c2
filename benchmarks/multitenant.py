"""Multi-tenant benchmark: is every user's own top 10 found, and how fast, in one shared store
where one user is a thousand times larger than the others?

python benchmarks/multitenant.py --users 1000 --facts-per-user 100 --big 100000

The store: 1,000 users with 100 facts and 20 entities each, plus one user ("big") with 100,000
facts and 20,000 entities, all written through `GraphStore.write`. Vectors are written
directly: embedding 220,000 texts would take hours on two cores. They are the real model's
embeddings of 2,000 fact sentences (and of their entity names), each stored fact a small
random perturbation of one of them (cosine about 0.9 to its sentence). This does not flatter
the result: every user draws from the same sentences, so the big user has about 50 vectors
next to every query of every small user (the global index's nearest neighbours are all the
big user's: the starvation case), and the big user's own neighbours come in tight bundles of
near-equal distance (hard for an approximate index to rank exactly).

Measured per group (small users: one query each; big user: --big-queries queries), with the
query being one of the user's own fact sentences, embedded by the real model:
- recall@10 of `vector_facts` and `vector_entities` against a brute-force scan of that user's
  stored vectors (a neighbour tied with the 10th counts), and for comparison what the shared
  index alone gives at its widest read (4,096 neighbours, the user's best 10 kept);
- latency of the store's vector read, of `Memory.search(mode="semantic")` and of the default
  dual search (query embedding included, cold);
- for the cost model: the exact scan and the index read of the big user at 25%, 50% and 100%
  of its size, and the server's memory.
`--layout per-user` writes each user into a graph of its own instead (the alternative on
FalkorDB) and measures the store's vector reads there.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import redis
from outputs import OUT_HELP, json_out

sys.path.insert(0, str(Path(__file__).resolve().parent))
from foundation import synthetic_facts

from engine.embedding import Embedder
from engine.memory import Memory
from engine.normalize import entity_key, predicate_words
from engine.store import nearest as vector_reads
from engine.store.base import EntityRow, FactRow, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads

REPO = Path(__file__).resolve().parent.parent
SIGMA = 0.5  # perturbation: cosine about 1 / sqrt(1 + SIGMA^2) = 0.89 to the sentence
CHUNK = 1000


class Corpus:
    """The base sentences, their entity names, and their real embeddings."""

    def __init__(self, embedder: Embedder, n: int, seed: int) -> None:
        self.triples = synthetic_facts(n, seed)
        self.texts = [f"{s} {predicate_words(p)} {o}" for s, p, o in self.triples]
        self.names = sorted({name for s, _, o in self.triples for name in (s, o)})
        self.name_index = {name: i for i, name in enumerate(self.names)}
        self.text_vectors = embedder.encode(self.texts).astype(np.float32)
        self.name_vectors = embedder.encode(self.names).astype(np.float32)


class User:
    """One user's stored vectors (facts and entities) and the sentences it was built from."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.fact_uids: list[str] = []
        self.fact_vectors: list[np.ndarray] = []
        self.entity_uids: list[str] = []
        self.entity_vectors: list[np.ndarray] = []
        self.sentences: list[int] = []


def perturb(rng: np.random.Generator, base: np.ndarray) -> np.ndarray:
    noisy = base + SIGMA * rng.standard_normal(base.shape).astype(np.float32) / np.sqrt(base.size)
    out: np.ndarray = (noisy / np.linalg.norm(noisy)).astype(np.float32)
    return out


def batches(
    corpus: Corpus, user: User, facts: int, entities: int, rng: np.random.Generator
) -> Iterator[WriteBatch]:
    """The user's entities (perturbed name vectors), then its facts (perturbed sentence
    vectors) between them, `CHUNK` at a time."""
    now = time.time()
    names = rng.choice(len(corpus.names), size=entities, replace=entities > len(corpus.names))
    for start in range(0, entities, CHUNK):
        batch = WriteBatch()
        for i in range(start, min(entities, start + CHUNK)):
            uid, name = f"{user.name}-e{i}", f"{corpus.names[names[i]]} #{i}"
            vector = perturb(rng, corpus.name_vectors[names[i]])
            batch.entities.append(EntityRow(uid, entity_key(name), name, None, now))
            batch.entity_embeddings[uid] = vector.tolist()
            user.entity_uids.append(uid)
            user.entity_vectors.append(vector)
        yield batch
    for start in range(0, facts, CHUNK):
        batch = WriteBatch()
        for i in range(start, min(facts, start + CHUNK)):
            j = int(rng.integers(len(corpus.texts)))
            p = corpus.triples[j][1]
            subject = f"{user.name}-e{int(rng.integers(entities))}"
            obj = f"{user.name}-e{int(rng.integers(entities))}"
            uid, vector = f"{user.name}-f{i}", perturb(rng, corpus.text_vectors[j])
            batch.facts.append(FactRow(uid, subject, obj, p, corpus.texts[j], now))
            batch.fact_embeddings[uid] = vector.tolist()
            user.fact_uids.append(uid)
            user.fact_vectors.append(vector)
            user.sentences.append(j)
        yield batch


def recall(found: list[str], uids: list[str], vectors: list[np.ndarray], q: np.ndarray) -> float:
    """Share of the brute-force top 10 found; a found node tied with the 10th counts."""
    sims = np.stack(vectors) @ q
    order = np.argsort(-sims)[:10]
    tenth = sims[order[-1]]
    by_uid = dict(zip(uids, sims, strict=True))
    hits = {u for u in found if u in by_uid and by_uid[u] >= tenth - 1e-5}
    return min(1.0, len(hits) / len(order))


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1000


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "mean": statistics.fmean(ordered),
        "min": ordered[0],
        "p50": ordered[len(ordered) // 2],
        "p95": ordered[int(0.95 * (len(ordered) - 1))],
        "max": ordered[-1],
    }


class Bench:
    def __init__(self, args: argparse.Namespace, data_dir: Path) -> None:
        self.args = args
        self.rng = np.random.default_rng(args.seed)
        self.embedder = Embedder()
        self.corpus = Corpus(self.embedder, args.sentences, args.seed)
        self.server = EmbeddedServer(data_dir)
        self.socket = self.server.ensure_running()
        self.stores: dict[str, FalkorDBStore] = {}
        self.users: list[User] = []
        self.big = User("big")
        self.cost: list[dict[str, Any]] = []
        self.memory: Memory | None = None
        self.reused = False

    def store_of(self, user: str) -> FalkorDBStore:
        graph = f"mt-{user}" if self.args.layout == "per-user" else "multitenant"
        if graph not in self.stores:
            self.stores[graph] = FalkorDBStore.embedded(self.server, graph)
            self.stores[graph].setup(self.embedder.dimension)
        return self.stores[graph]

    def load(self) -> float:
        """Write every user's batches, or only regenerate them (the same seed gives the same
        vectors) when --data-dir already holds the store from an earlier run."""
        start = time.perf_counter()
        stored = Reads(self.store_of("big")).counts("big")["facts"] == self.args.big
        self.reused = stored
        for i in range(self.args.users):
            user = User(f"u{i:04d}")
            for batch in batches(self.corpus, user, self.args.facts_per_user, 20, self.rng):
                if not stored:
                    self.store_of(user.name).write(user.name, batch)
            self.users.append(user)
        big_batches = batches(self.corpus, self.big, self.args.big, self.args.big // 5, self.rng)
        checkpoints = {self.args.big // 4, self.args.big // 2, self.args.big}
        if stored:  # a reopened store builds its vector indexes in the background
            for _ in big_batches:
                pass
            while self.store_of("big").warming():
                time.sleep(1.0)
            self.cost.append(self.cost_point())
            return time.perf_counter() - start
        for batch in big_batches:
            self.store_of("big").write("big", batch)
            if batch.facts and len(self.big.fact_uids) in checkpoints:
                self.cost.append(self.cost_point())
            print(f"big: {len(self.big.fact_uids)} facts", file=sys.stderr, flush=True)
        return time.perf_counter() - start

    def cost_point(self) -> dict[str, Any]:
        """The big user's exact scan and index read at its current size."""
        store, scans, reads = self.store_of("big"), [], []
        for j in random.Random(len(self.big.fact_uids)).sample(range(len(self.corpus.texts)), 20):
            q = self.corpus.text_vectors[j].tolist()
            params = {"user_id": "big", "embedding": q, "include_invalid": False, "limit": 10}
            index = {**params, "k": 10 * vector_reads.NEIGHBOURS_PER_RESULT}
            scans.append(timed(partial(store.run, "scan_fact_vectors", params))[1])
            reads.append(timed(partial(store.run, "search_fact_vectors", index))[1])
        client = redis.Redis(unix_socket_path=str(self.socket))
        memory = int(client.info("memory")["used_memory"])
        client.close()
        return {
            "big_facts": len(self.big.fact_uids),
            "scan_ms": summary(scans),
            "index_ms": summary(reads),
            "server_memory_bytes": memory,
        }

    def measure(self, user: User, query: int) -> dict[str, float]:
        store = self.store_of(user.name)
        reads = Reads(store)
        q = self.corpus.text_vectors[query]
        facts, read_ms = timed(
            lambda: reads.vector_facts(user.name, q.tolist(), 10, include_invalid=False)
        )
        entities = reads.vector_entities(user.name, q.tolist(), 10)
        out = {
            "fact_recall": recall([f.uid for f, _ in facts], user.fact_uids, user.fact_vectors, q),
            "entity_recall": recall(
                [e.uid for e, _ in entities], user.entity_uids, user.entity_vectors, q
            ),
            "read_ms": read_ms,
        }
        if self.memory is not None:  # the shared layout: also what the index alone gives
            wide = {"user_id": user.name, "embedding": q.tolist(), "include_invalid": False}
            wide |= {"k": vector_reads.MAX_VECTOR_K, "limit": 10}
            rows = store.run("search_fact_vectors", wide)
            found = [row[0]["uid"] for row in rows]
            out["index_only_recall"] = recall(found, user.fact_uids, user.fact_vectors, q)
            mem, text = self.memory, self.corpus.texts[query]
            _, out["semantic_ms"] = timed(lambda: mem.search(text, user.name, mode="semantic"))
            _, out["dual_ms"] = timed(lambda: mem.search(text, user.name))
        return out

    def run(self) -> dict[str, Any]:
        load_s = self.load()
        if self.args.layout == "shared":
            store = self.store_of("big")
            cold = Embedder(cache_size=0)  # every query embedded cold, as a new question is
            self.memory = Memory(store=store, embedder=cold, data_dir=self.server.data_dir)
        load = os.getloadavg()
        groups: dict[str, list[dict[str, float]]] = {"small": [], "big": []}
        for user in self.users:
            groups["small"].append(
                self.measure(user, random.Random(user.name).choice(user.sentences))
            )
        picks = random.Random(self.args.seed).sample(self.big.sentences, self.args.big_queries)
        groups["big"] = [self.measure(self.big, j) for j in picks]
        report = {
            "layout": self.args.layout,
            "users": self.args.users,
            "facts_per_user": self.args.facts_per_user,
            "big_facts": self.args.big,
            "scan_max": vector_reads.SCAN_MAX,
            "load_s": load_s,
            "reused_store": self.reused,
            "load_average_before_after": [load, os.getloadavg()],
            "cost_model_points": self.cost,
            "groups": {
                name: {key: summary([r[key] for r in rows]) for key in rows[0]}
                for name, rows in groups.items()
            },
        }
        for store in self.stores.values():
            store.close()
        return report


def markdown(report: dict[str, Any]) -> str:
    """The report as the tables of benchmarks/results/multitenant_<layout>.md."""
    load = ", ".join(f"{a[0]:.1f}" for a in report["load_average_before_after"])
    lines = [
        f"{report['users']} users x {report['facts_per_user']} facts beside one user with "
        f"{report['big_facts']} facts, one store ({report['layout']} layout); exact scan up to "
        f"{report['scan_max']} nodes of a label; load average before/after measuring: {load}",
        "",
        "| users | queries | fact recall@10 | entity recall@10 | index alone: fact recall@10 "
        "| store read p50 / p95 ms | semantic search p50 / p95 ms | dual search p50 / p95 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, group in report["groups"].items():

        def cell(key: str, group: dict[str, Any] = group) -> str:
            stats = group.get(key)
            return "-" if stats is None else f"{stats['p50']:.1f} / {stats['p95']:.1f}"

        index = group.get("index_only_recall")
        lines.append(
            f"| {name} | {group['fact_recall']['n']} | {group['fact_recall']['mean']:.3f} "
            f"| {group['entity_recall']['mean']:.3f} "
            f"| {'-' if index is None else format(index['mean'], '.3f')} "
            f"| {cell('read_ms')} | {cell('semantic_ms')} | {cell('dual_ms')} |"
        )
    lines += [
        "",
        "Cost model points (the big user's facts; 20 queries each):",
        "",
        "| big user's facts | exact scan p50 / p95 ms | index read p50 / p95 ms "
        "| server memory MB |",
        "|---:|---:|---:|---:|",
    ]
    for point in report["cost_model_points"]:
        scan, index = point["scan_ms"], point["index_ms"]
        lines.append(
            f"| {point['big_facts']} | {scan['p50']:.1f} / {scan['p95']:.1f} "
            f"| {index['p50']:.1f} / {index['p95']:.1f} "
            f"| {point['server_memory_bytes'] / 2**20:.0f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--facts-per-user", type=int, default=100)
    parser.add_argument("--big", type=int, default=100_000)
    parser.add_argument("--big-queries", type=int, default=200)
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--layout", choices=["shared", "per-user"], default="shared")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=json_out("multitenant"), default=None, help=OUT_HELP)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="keep the store here; a later run with the same options only measures",
    )
    args = parser.parse_args(argv)
    out = args.out or REPO / "benchmarks" / "results" / f"multitenant_{args.layout}.json"
    with tempfile.TemporaryDirectory(prefix="graphmem-mt-") as tmp:
        report = Bench(args, args.data_dir or Path(tmp)).run()
    out.write_text(json.dumps(report, indent=2))
    out.with_suffix(".md").write_text(markdown(report))
    print(json.dumps(report["groups"], indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
