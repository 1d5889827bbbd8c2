"""Batch-ingest throughput on LoCoMo, plus evidence recall@10 for the offline extractor.

Runs `Memory.ingest` on the first N turns of the LoCoMo file (file order) into a fresh graph:
- with the offline extractor (spaCy rules, no LLM);
- with the LLM extractor against the scripted OpenAI-compatible server of the test suite, every
  call delayed by `--latency` seconds (500 ms by default), at each `--concurrency`.
The scripted server answers each call with one fact drawn from the message (USER MENTIONED
<its longest word>), so every message costs a real resolution, embedding and graph write.

Reports messages/s and the share of wall time spent applying (resolution + graph write), and
for the offline run LoCoMo evidence recall@10 over the questions whose evidence turns were
all ingested. Writes JSON to benchmarks/results/ and a markdown table to stdout.

    python benchmarks/ingest_locomo.py --limit-messages 300
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.embedding import Embedder  # noqa: E402
from engine.ingest import ChatRecord, load_locomo_qa, read_chat_log  # noqa: E402
from engine.ingest.report import IngestReport  # noqa: E402
from engine.memory import Memory  # noqa: E402
from engine.testing.scripted_llm import ScriptedLLMProcess, ToolCall  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"
_WORD = re.compile(r"[A-Za-z]{4,}")
_CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.S)


def mention_fact(body: dict[str, Any]) -> ToolCall:
    """The scripted reply: USER MENTIONED the longest word of the last user message."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    match = _CONVERSATION.search(prompt)
    said = " ".join(line.partition(": ")[2] for line in (match[1] if match else "").splitlines())
    word = max(_WORD.findall(said) or ["something"], key=len).lower()
    return ToolCall(
        {
            "entities": [{"name": "USER", "type": "Person"}, {"name": word, "type": "Thing"}],
            "facts": [
                {
                    "source": "USER",
                    "predicate": "MENTIONED",
                    "target": word,
                    "fact": f"USER mentioned {word}",
                }
            ],
            "invalidations": [],
        }
    )


def run_one(
    records: list[ChatRecord],
    home: Path,
    concurrency: int,
    llm_url: str | None,
    recall_data: Path | None = None,
) -> tuple[IngestReport, dict[str, Any] | None]:
    """Ingest into a fresh embedded store in `home`; evidence recall when `recall_data`.

    Every run gets its own embedder (model in its own process, loaded before the clock
    starts), so no run finds vectors an earlier run kept."""
    overrides: dict[str, Any] = {"data_dir": home}
    if llm_url is not None:
        overrides |= {"openai_base_url": llm_url, "openai_api_key": "bench", "llm_max_retries": 0}
    embedder = Embedder(process=True)
    embedder.encode(["warm up"])
    try:
        with Memory(embedder=embedder, **overrides) as mem:
            report = mem.ingest(records, concurrency=concurrency, users_from_file=True)
            ingested = {f"{r.user_id}/{r.source}" for r in records}
            recall = evidence_recall(mem, recall_data, ingested) if recall_data else None
    finally:
        embedder.close()
    return report, recall


def evidence_recall(mem: Memory, data: Path, ingested: set[str], k: int = 10) -> dict[str, Any]:
    """Mean over questions (all evidence ingested) of the share of evidence turns found among
    the source turns of the top-k facts' episodes."""
    scores: list[float] = []
    for question in load_locomo_qa(data):
        wanted = {f"{question.sample_id}/{e}" for e in question.evidence}
        if not wanted or not wanted <= ingested:
            continue
        result = mem.search(question.question, user_id=question.sample_id, limit=k)
        uids = sorted({uid for hit in result.facts for uid in hit.fact.episodes})
        episodes = mem.reads.episodes_by_uids(question.sample_id, uids) if uids else []
        found = {f"{question.sample_id}/{ep.source}" for ep in episodes}
        scores.append(len(wanted & found) / len(wanted))
    mean = sum(scores) / len(scores) if scores else 0.0
    return {"k": k, "questions": len(scores), "recall": round(mean, 4)}


def row(label: str, concurrency: int, report: IngestReport) -> dict[str, Any]:
    return {
        "extractor": label,
        "concurrency": concurrency,
        "messages": report.messages_added + report.messages_failed,
        "failed": report.messages_failed,
        "elapsed_s": round(report.elapsed_s, 2),
        "messages_per_s": round(report.messages_per_s, 2),
        "write_share": round(report.write_share, 3),
        "facts_added": report.facts_added,
        "facts_updated": report.facts_updated,
        "llm_calls": report.llm_calls,
        "tokens": report.tokens,
        "extract_s": round(report.extract_s, 1),
        "write_s": round(report.write_s, 1),
        "first_errors": [str(e) for e in report.errors[:5]],
    }


def markdown(rows: list[dict[str, Any]], recall: dict[str, Any] | None, args: Any) -> str:
    lines = [
        f"LoCoMo ingest: first {args.limit_messages or 'all'} turns of {args.data}; "
        f"scripted LLM latency {args.latency * 1000:.0f} ms per call",
        "",
        "| extractor | concurrency | messages | failed | seconds | messages/s | write share |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| {r['extractor']} | {r['concurrency']} | {r['messages']} | {r['failed']} | "
        f"{r['elapsed_s']} | {r['messages_per_s']} | {r['write_share']:.0%} |"
        for r in rows
    ]
    if recall is not None:
        lines += [
            "",
            f"offline extractor, LoCoMo evidence recall@{recall['k']}: "
            f"{recall['recall']:.3f} over {recall['questions']} questions "
            "(those whose evidence turns were all ingested)",
        ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument(
        "--limit-messages",
        type=int,
        default=300,
        help="ingest only the first N turns, in file order (0: all; default 300)",
    )
    parser.add_argument(
        "--latency",
        type=float,
        default=0.5,
        help="seconds the scripted LLM waits per call (default 0.5)",
    )
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--skip-offline", action="store_true")
    parser.add_argument("--skip-llm", action="store_true")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    records = read_chat_log(args.data, format="locomo").records
    records = records[: args.limit_messages] if args.limit_messages else records
    rows: list[dict[str, Any]] = []
    recall: dict[str, Any] | None = None
    with tempfile.TemporaryDirectory(prefix="gm-bench-") as tmp:
        if not args.skip_offline:
            report, recall = run_one(records, Path(tmp) / "offline", 4, None, args.data)
            rows.append(row("offline", 4, report))
        for concurrency in [] if args.skip_llm else args.concurrency:
            with ScriptedLLMProcess(default=mention_fact, latency_s=args.latency) as llm:
                home = Path(tmp) / f"llm{concurrency}"
                report, _ = run_one(records, home, concurrency, llm.base_url)
            rows.append(row("llm (scripted)", concurrency, report))
    payload = {
        "when": datetime.now(UTC).isoformat(),
        "data": str(args.data),
        "limit_messages": args.limit_messages,
        "latency_s": args.latency,
        "cpus": os.cpu_count(),
        "runs": rows,
        "offline_recall": recall,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    out = args.out / f"ingest_locomo_{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(payload, indent=2))
    print(markdown(rows, recall, args))
    print(f"\nJSON: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
