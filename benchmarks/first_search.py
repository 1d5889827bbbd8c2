"""A user's first search in a process against that user's warm search, per leg.

python benchmarks/first_search.py --users 6 --messages 500 --words 200

The store: `--users` users, each with `--messages` messages of about `--words` words (drawn
from a vocabulary of a few thousand made-up words, so that terms are many and mostly rare),
written in bulk through `GraphStore.write` with cheap random unit vectors (the first search
reads the texts; what their vectors are does not change its cost). Per user and mode (modes
in turn, a different user first each round): the user's in-process state is dropped
(`Retriever.forget`, what a fresh process starts from), then one search is timed (first),
then the median of `--warm` searches (warm). Reported per mode: the median of the first
searches, of the warm ones, and of each user's ratio first / warm (target: <= 3). The
expansion leg is measured only when the users hold facts; these users hold messages only.
Before that, each user is searched once ("unindexed": no process has searched the user, so
nothing has stored the user's message index; it is stored then), as every user of a store
was by some earlier process; `--unindexed` measures without that step.
Run it with PYTHONPATH pointing at the tree to measure (main, then a branch).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from bulk_messages import OLD_STORE_HELP, message_row, write_messages
from outputs import OUT_HELP, json_out

from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.message_index import MessageIndexes

_QUERIES = ["what did I say about the harbour trip", "when did we talk about my sister"]


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    letters = "abcdefghijklmnoprstuvwy"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def build(store: FalkorDBStore, args: argparse.Namespace, dimension: int) -> list[str]:
    """Write every user's messages in bulk; the user ids."""
    rng, old_store = random.Random(args.seed), args.old_store
    words = vocabulary(rng) + "harbour trip sister lake market went said talk".split()
    vectors = np.random.default_rng(args.seed)
    users = [f"user{u}" for u in range(args.users)]
    for user in users:
        rows = []
        for i in range(args.messages):
            text = " ".join(
                rng.choice(words) for _ in range(rng.randint(args.words // 2, args.words * 3 // 2))
            )
            uid = f"{rng.getrandbits(128):032x}"
            role = "user" if i % 2 == 0 else "assistant"
            rows.append(message_row(uid, f"s{i // 20}", role, text, float(i), old_store=old_store))
        write_messages(store, user, rows, vectors, dimension)
    return users


def timed(memory: Memory, user_id: str, mode: str, query: str) -> float:
    start = time.perf_counter()
    memory.search(query, user_id=user_id, mode=mode)  # type: ignore[arg-type]
    return time.perf_counter() - start


def measure(
    memory: Memory, users: list[str], modes: list[str], warm: int
) -> dict[str, list[tuple[float, float]]]:
    """Per mode, one (first, warm median) pair per user; modes and users in turn."""
    out: dict[str, list[tuple[float, float]]] = {mode: [] for mode in modes}
    for round_ in range(len(users)):
        for m, mode in enumerate(modes):
            user = users[(round_ + m) % len(users)]
            query = _QUERIES[round_ % len(_QUERIES)]
            memory.retriever.forget(user)
            first = timed(memory, user, mode, query)
            again = statistics.median(timed(memory, user, mode, query) for _ in range(warm))
            out[mode].append((first, again))
            print(f"{user} {mode}: first {first * 1000:.1f} ms, warm {again * 1000:.1f} ms")
    return out


def index_once(memory: Memory, users: list[str]) -> None:
    """Search each user once, as a process before this one did, storing the user's index."""
    stored = MessageIndexes(memory.store)
    for user in users:
        memory.retriever.forget(user)
        first = timed(memory, user, "episodes", _QUERIES[0])
        deadline = time.monotonic() + 30.0
        while stored.stored(user) is None and time.monotonic() < deadline:
            time.sleep(0.05)  # the index is stored in the background
        print(f"{user} unindexed: first {first * 1000:.1f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=6)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--warm", type=int, default=5, help="warm searches per user (median)")
    parser.add_argument("--modes", nargs="+", default=["episodes", "dual"])
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--unindexed", action="store_true", help="no search before the measured ones"
    )
    parser.add_argument("--old-store", action="store_true", help=OLD_STORE_HELP)
    parser.add_argument("--data-dir", type=Path, help="keep the store here")
    parser.add_argument("--out", type=json_out("first_search"), help=OUT_HELP)
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data_dir = args.data_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        data_dir.mkdir(parents=True, exist_ok=True)
        results = run(args, data_dir)
    summary = {}
    for mode, pairs in results.items():
        first = statistics.median(f for f, _ in pairs)
        warm = statistics.median(w for _, w in pairs)
        ratio = statistics.median(f / w for f, w in pairs)
        summary[mode] = {"first_ms": first * 1000, "warm_ms": warm * 1000, "ratio": ratio}
        print(
            f"{mode}: first {first * 1000:.1f} ms, warm {warm * 1000:.1f} ms, "
            f"median ratio {ratio:.2f} (target <= 3)"
        )
    if args.out:
        args.out.write_text(
            json.dumps(
                {
                    "args": vars(args) | {"data_dir": None, "out": None},
                    "summary": summary,
                    "pairs": results,
                },
                indent=1,
            )
        )


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, list[tuple[float, float]]]:
    embedder = Embedder()
    store = FalkorDBStore.embedded(EmbeddedServer(data_dir), "first_search")
    memory = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=data_dir)
    try:
        users = [f"user{u}" for u in range(args.users)]
        if any(memory.stats(u).episodes != args.messages for u in users):
            memory.reset()
            start = time.perf_counter()
            build(store, args, embedder.dimension)
            print(f"built in {time.perf_counter() - start:.1f} s", flush=True)
        while store.warming():
            time.sleep(1.0)
        timed(memory, users[0], "semantic", "warm up")
        if not args.unindexed:
            index_once(memory, users)
        return measure(memory, users, args.modes, args.warm)
    finally:
        memory.close()
        store.close()  # a store passed to a Memory stays open: its owner closes it
        embedder.close()


if __name__ == "__main__":
    main()
