"""Does one user's message index load block every other user's search?

python benchmarks/episode_lock.py --big 150000 --rounds 3

The store: one user ("big") with `--big` messages and one small user ("small") with 20,
in one embedded FalkorDB. The big user's messages are written in bulk through
`GraphStore.write` with cheap random unit vectors (embedding 150k texts takes hours on two
cores; the index load reads only the texts); the small user's are added with `Memory.add`
and the real model. Per round: the small user's warm search alone (median of 5), then the
big user's first search (its message index dropped before) started in a thread and, once
it is loading, the small user's search timed beside it. Reported: each round's times and
the ratio beside / alone (target: <= 2). Run it with PYTHONPATH pointing at the tree to
measure (main, then a branch) for a before / after. `--data-dir` keeps the store for the
next run (a build stopped early is reused with `--big 0`: the messages it holds);
`--prime` searches as the big user once first (what a store in use has seen: an older
store's messages then have their index terms stored).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import tempfile
import threading
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

_WORDS = (
    "lake kayak pottery bowl puppy shelter bike garden recipe concert guitar novel painting "
    "hiking camping museum train island coffee market festival chess soccer violin bakery "
    "library harbour mountain river forest desert village castle bridge tower lantern"
).split()
_BATCH = 2000
_SMALL = [
    "I adopted a cat called Miso last spring.",
    "My sister lives in Porto and teaches maths.",
    "I play the cello in a community orchestra on Thursdays.",
    "We went camping near the glacier in August.",
    "I am allergic to peanuts.",
]


def build(
    memory: Memory, store: FalkorDBStore, big: int, dimension: int, seed: int, old_store: bool
) -> None:
    """Write `big` messages for "big" in bulk and a few real ones for "small"."""
    rng = random.Random(seed)
    vectors = np.random.default_rng(seed)
    session = 0
    for start in range(0, big, _BATCH):
        rows = []
        for i in range(start, min(big, start + _BATCH)):
            session += i % 20 == 0
            text = " ".join(rng.choice(_WORDS) for _ in range(12))
            uid = f"{rng.getrandbits(128):032x}"
            rows.append(
                message_row(uid, f"s{session}", "user", text, float(i), old_store=old_store)
            )
        write_messages(store, "big", rows, vectors, dimension)
    add_small(memory)


def add_small(memory: Memory) -> None:
    for index, text in enumerate(_SMALL * 4):
        memory.add(text, user_id="small", ts=1_700_000_000.0 + index)


def timed(memory: Memory, query: str, user_id: str) -> float:
    start = time.perf_counter()
    memory.search(query, user_id=user_id)
    return time.perf_counter() - start


def small_alone(memory: Memory, runs: int = 5) -> float:
    return statistics.median(
        timed(memory, "Where does my sister live?", "small") for _ in range(runs)
    )


def beside_big(memory: Memory, delay_s: float) -> tuple[float, float]:
    """The small user's search while the big user's first search loads; both times."""
    memory.retriever.forget("big")
    big: list[float] = []
    thread = threading.Thread(target=lambda: big.append(timed(memory, "kayak on the lake", "big")))
    thread.start()
    time.sleep(delay_s)
    small = timed(memory, "Where does my sister live?", "small")
    thread.join()
    return small, big[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", type=int, default=150_000, help="messages of the big user")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.3, help="s between the two searches")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--old-store",
        action="store_true",
        help=OLD_STORE_HELP,
    )
    parser.add_argument(
        "--data-dir", type=Path, help="keep the store here (reused when it holds the users)"
    )
    parser.add_argument("--out", type=json_out("episode_lock"), help=OUT_HELP)
    parser.add_argument(
        "--prime",
        action="store_true",
        help="search as the big user once before the rounds (a store in use has been loaded)",
    )
    args = parser.parse_args()
    with contextlib.ExitStack() as stack:
        data_dir = args.data_dir or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        data_dir.mkdir(parents=True, exist_ok=True)
        rounds = run(args, data_dir)
    ratio = statistics.median(x["beside_s"] / x["alone_s"] for x in rounds)
    print(f"median ratio beside / alone: {ratio:.2f} (target <= 2)")
    if args.out:
        args.out.write_text(json.dumps({"big": args.big, "rounds": rounds}, indent=1))


def run(args: argparse.Namespace, data_dir: Path) -> list[dict[str, float]]:
    embedder = Embedder()
    store = FalkorDBStore.embedded(EmbeddedServer(data_dir), "episode_lock")
    memory = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=data_dir)
    try:
        if args.big <= 0:  # whatever the kept store holds
            args.big = memory.stats("big").episodes
        if memory.stats("big").episodes != args.big:
            memory.reset()
            start = time.perf_counter()
            build(memory, store, args.big, embedder.dimension, args.seed, args.old_store)
            print(f"built in {time.perf_counter() - start:.1f} s", flush=True)
        if not memory.stats("small").episodes:  # a build stopped before its last step
            add_small(memory)
        while store.warming():  # vector indexes built after a reopen: not what is measured
            time.sleep(1.0)
        timed(memory, "warm up", "small")
        if args.prime:
            print(f"primed: big first search {timed(memory, 'kayak', 'big'):.2f} s", flush=True)
        rounds = []
        for r in range(args.rounds):
            alone = small_alone(memory)
            small, big = beside_big(memory, args.delay)
            rounds.append({"alone_s": alone, "beside_s": small, "big_first_s": big})
            print(
                f"round {r + 1}: small alone {alone * 1000:.1f} ms, beside the big user's "
                f"first search {small * 1000:.1f} ms ({small / alone:.1f}x); big first "
                f"search {big:.2f} s",
                flush=True,
            )
        return rounds
    finally:
        memory.close()
        store.close()  # a store passed to a Memory stays open: its owner closes it
        embedder.close()


if __name__ == "__main__":
    main()
