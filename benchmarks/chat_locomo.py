"""Chat recall on LoCoMo: which messages a search brings back, against embedding raw turns.

Ingests the LoCoMo conversations (offline extractor, no LLM) into a fresh embedded store, then
asks every question of every conversation and walks each result in rank order, counting at most
10 distinct source turns (the "10-turn budget"); evidence recall@10 is the share of the
question's evidence turns among them. Modes:
- dual: `search(...)` as an agent calls it: the messages (`result.episodes`), then the facts'
  source messages;
- episodes / semantic / expansion: one leg alone (`mode=...`), the fact legs through their
  facts' source messages;
- raw turns: the baselines, measured in the same run: every turn embedded as "Speaker: text"
  with the same model, cosine top-10 within the conversation ("raw"), and that ranking fused
  with BM25 over the turns' words by reciprocal-rank fusion ("raw_bm25", `raw_turns.py`).
Also reports ingest messages/s, search latency (p50/p95 per mode) and where the slowest 5% of
each mode's searches spent their time (`timings_ms`). JSON goes to benchmarks/results/, a
markdown table to stdout.

    python benchmarks/chat_locomo.py                      # all 10 conversations
    python benchmarks/chat_locomo.py --conversations 3    # the first 3
    python benchmarks/chat_locomo.py --roles user-assistant

`--roles user-assistant` replays each conversation as an agent's history: the first speaker's
turns become unnamed `user` messages (their "I" is the user's self entity), the other's
`assistant` messages, and the questions ask in the first person ("What did Caroline research?"
-> "What did I research?"). A check that graphmem holds up when the log names no one.

`--facts observations` builds the graph from LoCoMo's own LLM-written observations instead of
the turns (`observation_facts.py`): what the fact legs and fusion do with facts of LLM quality,
measured with no model (a store built so is kept apart: give `--store` a directory of its own).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.append(str(REPO))  # after PYTHONPATH: another checkout's engine can be measured
sys.path.insert(0, str(REPO / "benchmarks"))

from observation_facts import ObservationExtractor  # noqa: E402
from raw_turns import Turns, build_turns  # noqa: E402
from tails import slowest_stages, stages_text  # noqa: E402

from engine.embedding import Embedder  # noqa: E402
from engine.ingest import ChatRecord, LocomoQuestion, load_locomo_qa, read_chat_log  # noqa: E402
from engine.memory import Memory  # noqa: E402
from engine.models import SearchResult  # noqa: E402
from engine.retrieval.retriever import Mode  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"
MODES: tuple[Mode, ...] = ("dual", "episodes", "semantic", "expansion")
BUDGET = 10
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


def turns_walked(result: SearchResult, budget: int = BUDGET) -> list[str]:
    """Source turns in rank order: the messages first, then the facts' messages."""
    walked: dict[str, None] = {}
    sources = [hit.episode.source for hit in result.episodes]
    sources += [s.source for hit in result.facts for s in hit.sources]
    for source in sources:
        if source is not None and len(walked) < budget:
            walked.setdefault(source, None)
    return list(walked)


def raw_turn_ranker(records: list[ChatRecord], embedder: Embedder) -> dict[str, Turns]:
    """The baselines' turns per conversation: sources, lines, vectors, a BM25 index."""
    return build_turns(records, embedder)


def as_agent_history(
    records: list[ChatRecord], questions: list[LocomoQuestion]
) -> tuple[list[ChatRecord], list[LocomoQuestion]]:
    """Each conversation's first speaker as the agent's unnamed user, the other as the
    assistant; questions about the first speaker asked in the first person."""
    first: dict[str, str] = {}
    for record in records:
        first.setdefault(record.user_id or "", record.speaker or "")
    replayed = [
        r.model_copy(
            update={
                "role": "user" if r.speaker == first[r.user_id or ""] else "assistant",
                "speaker": None,
            }
        )
        for r in records
    ]
    asked = []
    for question in questions:
        name = re.escape(first.get(question.sample_id, ""))
        text = re.sub(rf"\b{name}'s\b", "my", question.question) if name else question.question
        text = re.sub(rf"\b{name}\b", "I", text) if name else text
        asked.append(question.model_copy(update={"question": text}))
    return replayed, asked


def recall(found: list[str], question: LocomoQuestion) -> float:
    wanted = set(question.evidence)
    return len(wanted & set(found)) / len(wanted)


def evaluate(mem: Memory, questions: list[LocomoQuestion], raw: dict[str, Turns]) -> dict[str, Any]:
    modes = (*MODES, "raw", "raw_bm25")
    scores: dict[str, dict[int, list[float]]] = {m: defaultdict(list) for m in modes}
    latency: dict[str, list[float]] = defaultdict(list)
    stages: dict[str, list[dict[str, float]]] = defaultdict(list)
    for question in questions:
        for mode in MODES:
            started = time.perf_counter()
            result = mem.search(question.question, user_id=question.sample_id, mode=mode)
            latency[mode].append((time.perf_counter() - started) * 1000.0)
            stages[mode].append(result.timings_ms)
            scores[mode][question.category].append(recall(turns_walked(result), question))
        turns = raw[question.sample_id]
        query = mem.embedder.encode([question.question])[0]
        top = turns.by_embedding(query)[:BUDGET]
        scores["raw"][question.category].append(recall([turns.sources[i] for i in top], question))
        fused = turns.fused(question.question, query)[:BUDGET]
        scores["raw_bm25"][question.category].append(
            recall([turns.sources[i] for i in fused], question)
        )
    return {
        "recall": _summary(scores),
        "latency_ms": _percentiles(latency),
        "slowest_5pct_stages_ms": {m: slowest_stages(latency[m], stages[m]) for m in latency},
    }


def _summary(scores: dict[str, dict[int, list[float]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode, by_category in scores.items():
        every = [s for values in by_category.values() for s in values]
        out[mode] = {
            "all": round(float(np.mean(every)), 4) if every else 0.0,
            "questions": len(every),
            **{
                CATEGORIES.get(c, str(c)): round(float(np.mean(v)), 4)
                for c, v in sorted(by_category.items())
            },
        }
    return out


def _percentiles(latency: dict[str, list[float]]) -> dict[str, Any]:
    return {
        mode: {
            "p50": round(float(np.percentile(values, 50)), 1),
            "p95": round(float(np.percentile(values, 95)), 1),
        }
        for mode, values in latency.items()
    }


def ingest(mem: Memory, records: list[ChatRecord], concurrency: int) -> dict[str, Any]:
    report = mem.ingest(records, concurrency=concurrency, users_from_file=True)
    return {
        "messages": report.messages_added,
        "failed": report.messages_failed,
        "seconds": round(report.elapsed_s, 1),
        "messages_per_s": round(report.messages_per_s, 2),
        "facts_added": report.facts_added,
        "errors": [str(e) for e in report.errors[:5]],
    }


def markdown(payload: dict[str, Any]) -> str:
    recall_by_mode = payload["recall"]
    columns = ["all", *CATEGORIES.values()]
    lines = [
        f"LoCoMo, {payload['conversations']} conversations, {payload['questions']} questions "
        f"with evidence; evidence recall@10 with a {BUDGET}-turn budget (offline extractor"
        + (" reading LoCoMo's observations)" if payload.get("facts") == "observations" else ")"),
        "",
        "| mode | " + " | ".join(columns) + " | search p50 ms | p95 ms |",
        "|---|" + "---:|" * (len(columns) + 2),
    ]
    for mode, row in recall_by_mode.items():
        cells = [f"{row.get(c, 0.0):.3f}" for c in columns]
        times = payload["latency_ms"].get(mode, {"p50": "-", "p95": "-"})
        label = {"raw": "raw turns (baseline)", "raw_bm25": "raw turns, BM25 + embedding"}.get(
            mode, mode
        )
        lines.append(f"| {label} | " + " | ".join(cells) + f" | {times['p50']} | {times['p95']} |")
    tails = payload.get("slowest_5pct_stages_ms", {})
    if tails:
        lines += ["", "slowest 5% of searches, median ms per stage (`timings_ms`):"]
        lines += [f"- {m}: {stages_text(t)}" for m, t in tails.items()]
    p95 = {mode: t["p95"] for mode, t in payload["latency_ms"].items()}
    if {"dual", "episodes", "semantic"} <= p95.keys():
        legs = p95["episodes"] + p95["semantic"]
        lines.append(
            f"dual p95 {p95['dual']} ms; episodes + semantic p95 + 25 = {legs + 25:.1f} ms"
        )
    ingest_row = payload["ingest"]
    lines += [
        "",
        f"ingest: {ingest_row['messages']} messages in {ingest_row['seconds']} s "
        f"({ingest_row['messages_per_s']} messages/s, {ingest_row['facts_added']} facts)",
        *failed_lines(ingest_row),
    ]
    return "\n".join(lines)


def failed_lines(ingest_row: dict[str, Any]) -> list[str]:
    """The messages an ingest could not store, said where the reader looks: a count buried in
    the JSON went unseen once (an extractor fault on one message)."""
    errors = ingest_row.get("errors") or []
    if not ingest_row.get("failed") and not errors:
        return []
    return [f"FAILED: {ingest_row.get('failed', 0)} message(s)", *(f"  {e}" for e in errors[:5])]


def add_roles_argument(parser: argparse.ArgumentParser) -> None:
    """`--roles`: LoCoMo as it is, or replayed as an agent's history (`as_agent_history`)."""
    parser.add_argument(
        "--roles",
        choices=["names", "user-assistant"],
        default="names",
        help="names: every turn names its speaker (LoCoMo as it is); user-assistant: replayed "
        "as an agent's unnamed user and its assistant, questions in the first person",
    )


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument(
        "--conversations", type=int, default=0, help="only the first N conversations (0: all)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="ingest concurrency")
    parser.add_argument(
        "--store", type=Path, help="data directory to keep (reused when it holds the graph)"
    )
    add_roles_argument(parser)
    parser.add_argument(
        "--facts",
        choices=["extracted", "observations"],
        default="extracted",
        help="extracted: the offline extractor reads the turns; observations: it reads "
        "LoCoMo's LLM-written observations of each turn instead (facts of LLM quality)",
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    records = read_chat_log(args.data, format="locomo").records
    questions = [q for q in load_locomo_qa(args.data) if q.evidence]
    users = list(dict.fromkeys(r.user_id for r in records))
    if args.conversations:
        users = users[: args.conversations]
    records = [r for r in records if r.user_id in users]
    questions = [q for q in questions if q.sample_id in users]
    if args.roles == "user-assistant":
        records, questions = as_agent_history(records, questions)
    with tempfile.TemporaryDirectory(prefix="gm-chat-") as tmp:
        home = args.store or Path(tmp)
        embedder = Embedder()
        embedder.encode(["warm up"])
        extractor = ObservationExtractor(args.data) if args.facts == "observations" else None
        with Memory(embedder=embedder, data_dir=home, extractor=extractor) as mem:
            ingested = ingest(mem, records, args.concurrency)
            raw = raw_turn_ranker(records, embedder)
            # searches embed every query afresh: no vector kept from ingest or another mode
            cold = Embedder(cache_size=0)
            cold.encode(["warm up"])
            searcher = Memory(store=mem.store, embedder=cold, data_dir=home)
            measured = evaluate(searcher, questions, raw)
    payload = {
        "when": datetime.now(UTC).isoformat(),
        "data": str(args.data),
        "conversations": len(users),
        "roles": args.roles,
        "facts": args.facts,
        "questions": len(questions),
        "budget_turns": BUDGET,
        "cpus": os.cpu_count(),
        "ingest": ingested,
        **measured,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"chat_locomo_{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(payload, indent=2))
    print(markdown(payload))
    print(f"\nJSON: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
