"""Answer-in-context on LoCoMo: how much of the answer a prompt block of B tokens carries.

For every question with evidence, three blocks at each budget (150 / 300 / 600 / 1200 tokens,
estimated as words x 4/3):
- graphmem: `search(question, max_tokens=B).context()` as an agent calls it (offline
  extractor, no LLM);
- raw turns, embedding: the conversation's turns ranked by cosine to the question;
- raw turns, BM25 + embedding: the two rankings joined by reciprocal-rank fusion;
the raw turns printed as graphmem prints a message, "[date] Speaker: text", and packed under
the same estimate (`raw_turns.pack`). A block "answers" when every content word of the gold
answer (stopwords out, a light stem, dates read as day, month and year) is in it. Adversarial
questions (category 5) have no gold answer: for them the table gives the share of blocks that
hold the adversarial answer (the wrong one the question invites), reported apart, and the share
whose facts claim it of the speaker the question names (a fact line "Caroline: ..." holding it,
where a message would only quote the other speaker saying it: what is wrong, not merely near);
and, per category, the share of results noting that another speaker's memories are nearer
(`SearchResult.premise`). Evidence recall@10 (10 distinct turns, as `chat_locomo.py` walks a
result) is given for the same three.

The graph is built once per conversation set and extractor code and kept in a data directory
(`--store-root`, keyed by a hash of engine/extraction and engine/add), so a rerun only searches.

    python benchmarks/context_locomo.py                    # all 10 conversations
    python benchmarks/context_locomo.py --conversations 4
    python benchmarks/context_locomo.py --roles user-assistant   # as an agent's history
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
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

from chat_locomo import (  # noqa: E402
    CATEGORIES,
    DEFAULT_DATA,
    add_roles_argument,
    as_agent_history,
    failed_lines,
    ingest,
    turns_walked,
)
from raw_turns import Turns, answered, build_turns, pack  # noqa: E402

import engine  # noqa: E402
from engine.embedding import Embedder  # noqa: E402
from engine.ingest import ChatRecord, LocomoQuestion, load_locomo_qa, read_chat_log  # noqa: E402
from engine.memory import Memory  # noqa: E402

BUDGETS = (150, 300, 600, 1200)
METHODS = ("graphmem", "raw embedding", "raw BM25 + embedding")
ADVERSARIAL = 5
Scores = dict[str, dict[int, dict[str, list[float]]]]  # budget/"recall" -> category -> method


def code_digest() -> str:
    """A hash of the extraction code imported (this tree's or not), read once per run: a store
    half-built by a run stopped before an edit is not resumed by code that differs."""
    digest = hashlib.sha256()
    package = Path(engine.__file__ or "").parent
    for folder in ("extraction", "add"):
        for path in sorted((package / folder).rglob("*.py")):
            digest.update(path.read_bytes())
    return digest.hexdigest()


def store_dir(root: Path, data: Path, user: str, code: str, roles: str = "names") -> Path:
    """The data directory for one conversation, replay and this extraction code."""
    replay = "" if roles == "names" else f"|{roles}"  # the names replay's stores keep their key
    digest = hashlib.sha256(f"{data.resolve()}|{user}|{code}{replay}".encode())
    return root / f"locomo-{user}-{digest.hexdigest()[:12]}"


def build_store(
    home: Path, mem: Memory, records: list[ChatRecord], concurrency: int
) -> dict[str, Any]:
    """Ingest once; later runs read what the first one recorded."""
    marker = home / "context_bench_ingest.json"
    if marker.exists():
        return {**json.loads(marker.read_text()), "reused": True}
    report = ingest(mem, records, concurrency)
    marker.write_text(json.dumps(report))
    return {**report, "reused": False}


def blocks(
    mem: Memory, turns: Turns, question: LocomoQuestion, query: np.ndarray
) -> tuple[dict[str, Callable[[int], str]], dict[str, list[str]], list[bool]]:
    """Per method: the block at a budget, and the first 10 turns walked (for recall); and,
    as graphmem's blocks are made, whether each search noted that another speaker's
    memories are nearer (`premise`)."""
    result = mem.search(question.question, user_id=question.sample_id)
    by_embedding = turns.by_embedding(query)
    fused = turns.fused(question.question, query)
    noted: list[bool] = []

    def graphmem(budget: int) -> str:
        found = mem.search(question.question, user_id=question.sample_id, max_tokens=budget)
        noted.append(found.premise is not None)
        return found.context()

    packers: dict[str, Callable[[int], str]] = {
        "graphmem": graphmem,
        "raw embedding": lambda b: pack([turns.lines[i] for i in by_embedding], b),
        "raw BM25 + embedding": lambda b: pack([turns.lines[i] for i in fused], b),
    }
    walked = {
        "graphmem": turns_walked(result),
        "raw embedding": [turns.sources[i] for i in by_embedding[:10]],
        "raw BM25 + embedding": [turns.sources[i] for i in fused[:10]],
    }
    return packers, walked, noted


def evaluate(
    mem: Memory,
    questions: list[LocomoQuestion],
    turns: dict[str, Turns],
    budgets: tuple[int, ...],
    scores: Scores,
    speakers: set[str],
) -> None:
    """Add each question's hits to `scores` (per measure, category and method)."""
    queries = mem.embedder.encode([q.question for q in questions])
    for question, query in zip(questions, queries, strict=True):
        packers, walked, noted = blocks(mem, turns[question.sample_id], question, query)
        gold = question.answer if question.category != ADVERSARIAL else question.adversarial_answer
        named = named_speaker(question.question, speakers)
        for method in METHODS:
            wanted = set(question.evidence)
            scores["recall"][question.category][method].append(
                len(wanted & set(walked[method])) / len(wanted)
            )
            for budget in budgets:
                block = packers[method](budget)
                hit = answered(gold or "", block)
                scores[str(budget)][question.category][method].append(float(hit))
                if question.category == ADVERSARIAL:
                    wrong = hit and named is not None and claimed(gold or "", block, named)
                    scores[f"claimed {budget}"][question.category][method].append(float(wrong))
            # the blocks' searches agree: one check per question, whatever the budget
            said = float(method == METHODS[0] and noted[0])
            scores["noted"][question.category][method].append(said)


def named_speaker(question: str, speakers: set[str]) -> str | None:
    """The one speaker of the conversation the question names, if one."""
    named = [s for s in speakers if re.search(rf"\b{re.escape(s)}\b", question)]
    return named[0] if len(named) == 1 else None


def claimed(answer: str, block: str, person: str) -> bool:
    """The block's facts about `person` (its "Facts:" lines opening with the name) hold
    every content word of `answer`."""
    facts, section = [], ""
    for line in block.splitlines():
        if line.endswith(":") and " " not in line:
            section = line
        elif section == "Facts:" and line.startswith(f"{person}:"):
            facts.append(line)
    return bool(facts) and answered(answer, "\n".join(facts))


def summary(scores: Scores) -> dict[str, Any]:
    """Means per measure, method and category; "all" leaves out the adversarial questions."""
    out: dict[str, Any] = {}
    for measure, by_category in scores.items():
        out[measure] = {}
        for method in METHODS:
            row: dict[str, Any] = {}
            answerable = [s for c, m in by_category.items() if c != ADVERSARIAL for s in m[method]]
            row["all"] = round(float(np.mean(answerable)), 4) if answerable else 0.0
            for category, by_method in sorted(by_category.items()):
                row[CATEGORIES[category]] = round(float(np.mean(by_method[method])), 4)
            out[measure][method] = row
    return out


def markdown(payload: dict[str, Any]) -> str:
    columns = ["all", *(c for c in CATEGORIES.values() if c != "adversarial")]
    lines = [
        f"LoCoMo, {payload['conversations']} conversations, {payload['questions']} questions "
        f"({payload['adversarial']} adversarial), offline extractor"
        + (", replayed as an agent's history" if payload.get("roles") == "user-assistant" else ""),
        "",
        "Answer in context (every content word of the gold answer in the block); "
        "adversarial: share of blocks holding the adversarial answer",
        "",
        "| budget | method | " + " | ".join(columns) + " | adversarial |",
        "|---:|---|" + "---:|" * (len(columns) + 1),
    ]
    for budget in payload["budgets"]:
        for method, row in payload["results"][str(budget)].items():
            cells = [f"{row.get(c, 0.0):.3f}" for c in (*columns, "adversarial")]
            lines.append(f"| {budget} | {method} | " + " | ".join(cells) + " |")
    claims = [b for b in payload["budgets"] if f"claimed {b}" in payload["results"]]
    lines += ["", "Adversarial blocks whose facts claim the invited answer of the one named", ""]
    lines += ["| budget | " + " | ".join(METHODS) + " |", "|---:|" + "---:|" * len(METHODS)]
    for budget in claims:
        row = payload["results"][f"claimed {budget}"]
        cells = [f"{row[m].get('adversarial', 0.0):.3f}" for m in METHODS]
        lines.append(f"| {budget} | " + " | ".join(cells) + " |")
    if "noted" in payload["results"]:
        row = payload["results"]["noted"][METHODS[0]]
        cells = [f"{row.get(c, 0.0):.3f}" for c in (*columns, "adversarial")]
        lines += ["", "Results noting another speaker's memories nearer (`premise`)", ""]
        lines += ["| " + " | ".join([*columns, "adversarial"]) + " |"]
        lines += ["|" + "---:|" * (len(columns) + 1), "| " + " | ".join(cells) + " |"]
    lines += ["", "Evidence recall@10 (10 distinct turns)", ""]
    lines += ["| method | " + " | ".join([*columns, "adversarial"]) + " |"]
    lines += ["|---|" + "---:|" * (len(columns) + 1)]
    for method, row in payload["results"]["recall"].items():
        cells = [f"{row.get(c, 0.0):.3f}" for c in (*columns, "adversarial")]
        lines.append(f"| {method} | " + " | ".join(cells) + " |")
    ingest_row = payload["ingest"]
    lines += [
        "",
        f"ingest: {ingest_row['messages']} messages, {ingest_row['facts_added']} facts"
        + (" (store reused)" if ingest_row.get("reused") else f", {ingest_row['seconds']} s"),
        f"searches: {payload['seconds']} s",
        *failed_lines(ingest_row),
    ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--conversations", type=int, default=0, help="the first N (0: all)")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--concurrency", type=int, default=4, help="ingest concurrency")
    parser.add_argument(
        "--store-root",
        type=Path,
        default=Path.home() / ".cache" / "graphmem" / "bench",
        help="where the built graphs are kept between runs",
    )
    add_roles_argument(parser)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    records = read_chat_log(args.data, format="locomo").records
    users = list(dict.fromkeys(r.user_id or "" for r in records))
    users = users[: args.conversations] if args.conversations else users
    records = [r for r in records if r.user_id in users]
    questions = [q for q in load_locomo_qa(args.data) if q.evidence and q.sample_id in users]
    if args.roles == "user-assistant":
        records, questions = as_agent_history(records, questions)
    code = code_digest()
    embedder = Embedder()
    ingested: list[dict[str, Any]] = []
    scores: Scores = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    seconds = 0.0
    for user in users:
        home = store_dir(args.store_root, args.data, user, code, args.roles)
        home.mkdir(parents=True, exist_ok=True)
        own = [r for r in records if r.user_id == user]
        with Memory(embedder=embedder, data_dir=home) as mem:
            ingested.append(build_store(home, mem, own, args.concurrency))
            turns = build_turns(own, embedder)
            started = time.perf_counter()
            asked = [q for q in questions if q.sample_id == user]
            speakers = {r.speaker for r in own if r.speaker}
            evaluate(mem, asked, turns, tuple(args.budgets), scores, speakers)
            seconds += time.perf_counter() - started
        print(f"{user}: {len(own)} messages, {len(asked)} questions", file=sys.stderr)
    payload = {
        "when": datetime.now(UTC).isoformat(),
        "data": str(args.data),
        "conversations": len(users),
        "roles": args.roles,
        "questions": len(questions),
        "adversarial": sum(q.category == ADVERSARIAL for q in questions),
        "budgets": args.budgets,
        "store_root": str(args.store_root),
        "ingest": {
            "messages": sum(i["messages"] for i in ingested),
            "facts_added": sum(i["facts_added"] for i in ingested),
            "seconds": round(sum(i["seconds"] for i in ingested), 1),
            "reused": all(i["reused"] for i in ingested),
        },
        "seconds": round(seconds, 1),
        "results": summary(scores),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    replay = "" if args.roles == "names" else "_user_assistant"
    out = args.out / f"context_locomo_{len(users)}{replay}.json"
    out.write_text(json.dumps(payload, indent=2))
    print(markdown(payload))
    print(f"\nJSON: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
