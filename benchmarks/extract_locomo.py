"""Extraction against LoCoMo's observations: do the facts say what the turn said?

LoCoMo gives, per session and speaker, "observations": short facts a person wrote about the
turns, each with the `dia_id` of its turn(s) ("Caroline attended an LGBTQ support group
recently...", D1:3). Every turn goes through the extractor alone (its speaker named, its
session date as its time, nothing known before), and its facts are held against the
observations of the same turn. Words are compared as content words (stopwords out, a light
stem: `raw_turns.terms`):
- a fact's words: its subject, predicate (as words) and object;
- an observation is covered when ONE fact of its turn holds >= 60% of its content words
  (`--cover`); the table also gives the mean best share (no threshold) and coverage by the
  union of the turn's facts;
- (also: covered when the fact's sentence counts with its subject, predicate and object)
- a fact restates an observation when >= 60% of its own content words are in one observation
  of its turn.
Also: facts per turn, the facts that carry a date (`valid_at`), and the extractor's own time
per message (messages/s, the pipeline loaded before the clock starts). The offline extractor by
default; `--extractor llm` (or `auto` with GRAPHMEM / OPENAI LLM settings in the environment,
engine/config.py) runs the same metric with the configured LLM so the two can be compared.

    python benchmarks/extract_locomo.py                     # all 10 conversations
    python benchmarks/extract_locomo.py --conversations 2
    PYTHONPATH=/path/to/other/checkout python benchmarks/extract_locomo.py   # that engine
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from outputs import OUT_HELP, json_out

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parent.parent
sys.path.append(str(REPO))  # after PYTHONPATH: another checkout's engine can be measured
sys.path.insert(0, str(REPO / "benchmarks"))

from raw_turns import terms  # noqa: E402

from engine.components import build_extractor  # noqa: E402
from engine.config import Settings  # noqa: E402
from engine.extraction.offline import OfflineExtractor  # noqa: E402
from engine.extraction.schema import ChatMessage, ExtractedFact, Extractor  # noqa: E402
from engine.ingest import ChatRecord, read_chat_log  # noqa: E402
from engine.ingest.chat_records import normalize_evidence  # noqa: E402
from engine.normalize import predicate_words  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo10.json"


def observations(path: Path, users: list[str]) -> dict[tuple[str, str], list[str]]:
    """(sample id, dia_id) -> the observations written about that turn."""
    found: dict[tuple[str, str], list[str]] = defaultdict(list)
    for sample in json.loads(path.read_text()):
        if sample["sample_id"] not in users:
            continue
        for by_speaker in sample.get("observation", {}).values():
            for items in by_speaker.values():
                for text, ids in items:
                    for dia_id in normalize_evidence(ids if isinstance(ids, list) else [ids]):
                        found[(sample["sample_id"], dia_id)].append(text)
    return found


def fact_terms(fact: ExtractedFact, *, sentence: bool = False) -> set[str]:
    """A fact's content words: subject, predicate as words, object (and its sentence)."""
    triple = f"{fact.source} {predicate_words(fact.predicate)} {fact.target}"
    return set(terms(f"{triple} {fact.fact}" if sentence else triple))


def share(wanted: set[str], have: set[str]) -> float:
    return len(wanted & have) / len(wanted) if wanted else 0.0


def extract_all(
    extractor: Extractor, records: list[ChatRecord]
) -> tuple[list[list[ExtractedFact]], float, list[str]]:
    """Each turn's facts (read alone), seconds spent, and the errors reported."""
    facts: list[list[ExtractedFact]] = []
    errors: list[str] = []
    started = time.perf_counter()
    for record in records:
        message = ChatMessage(
            role="user", content=record.content, name=record.speaker, ts=record.ts
        )
        outcome = extractor.extract([message], [], user_name=None)
        facts.append(outcome.extraction.facts)
        if outcome.error:
            errors.append(f"{record.source}: {outcome.error}")
    return facts, time.perf_counter() - started, errors


def score(
    records: list[ChatRecord],
    facts: list[list[ExtractedFact]],
    observed: dict[tuple[str, str], list[str]],
    cover: float,
) -> dict[str, Any]:
    covered, best, union, with_text, restating, total_facts = [], [], [], [], 0, 0
    dated = sum(f.valid_at is not None for found in facts for f in found)
    for record, found in zip(records, facts, strict=True):
        notes = [
            set(terms(text)) for text in observed.get((record.user_id or "", record.source), [])
        ]
        held = [fact_terms(f) for f in found]
        said = [fact_terms(f, sentence=True) for f in found]
        total_facts += len(found)
        restating += sum(any(share(h, n) >= cover for n in notes) for h in held)
        every = set().union(*held) if held else set()
        for note in notes:
            top = max((share(note, h) for h in held), default=0.0)
            best.append(top)
            covered.append(top >= cover)
            union.append(share(note, every) >= cover)
            with_text.append(any(share(note, h) >= cover for h in said))
    n = len(covered)
    return {
        "observations": n,
        "covered": round(sum(covered) / n, 4) if n else 0.0,
        "best_share_mean": round(sum(best) / n, 4) if n else 0.0,
        "covered_by_turn_union": round(sum(union) / n, 4) if n else 0.0,
        "covered_with_sentence": round(sum(with_text) / n, 4) if n else 0.0,
        "facts": total_facts,
        "facts_per_turn": round(total_facts / max(1, len(records)), 3),
        "facts_restating": round(restating / total_facts, 4) if total_facts else 0.0,
        "facts_dated": dated,
        "facts_dated_share": round(dated / total_facts, 4) if total_facts else 0.0,
    }


def pick_extractor(kind: str) -> Extractor:
    if kind == "offline":
        return OfflineExtractor()
    settings = Settings()
    if kind == "llm" and not settings.llm_configured:
        raise SystemExit("--extractor llm: no LLM configured (OPENAI_API_KEY / OPENAI_BASE_URL)")
    return build_extractor(settings)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo JSON file")
    parser.add_argument("--conversations", type=int, default=0, help="the first N (0: all)")
    parser.add_argument("--users", nargs="+", help="only these sample ids (e.g. conv-41)")
    parser.add_argument("--extractor", choices=["offline", "llm", "auto"], default="offline")
    parser.add_argument("--cover", type=float, default=0.6, help="share of words that covers")
    parser.add_argument("--out", type=json_out("extract_locomo"), help=OUT_HELP)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    records = read_chat_log(args.data, format="locomo").records
    users = list(dict.fromkeys(r.user_id or "" for r in records))
    users = users[: args.conversations] if args.conversations else users
    users = [u for u in users if u in args.users] if args.users else users
    records = [r for r in records if r.user_id in users]
    extractor = pick_extractor(args.extractor)
    extractor.extract([ChatMessage(content="I like tea.")], [], user_name=None)  # load it
    facts, seconds, errors = extract_all(extractor, records)
    payload = {
        "when": datetime.now(UTC).isoformat(),
        "engine": str(Path(sys.modules["engine"].__file__ or "").parent),
        "extractor": extractor.name,
        "conversations": users,
        "turns": len(records),
        "cover": args.cover,
        "messages_per_s": round(len(records) / seconds, 1),
        "errors": errors[:5],
        **score(records, facts, observations(args.data, users), args.cover),
    }
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(payload, indent=2))
    print(json.dumps(payload, indent=2))
    if errors:  # a failed extraction is not a score: say it where the reader looks
        print(
            f"FAILED: {len(errors)} message(s) not extracted; first: {errors[0]}", file=sys.stderr
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
