"""Which question rules pay: each word rule of `engine/retrieval/terms.py` switched off in turn,
on three benchmark families in one process (MetaQA, hub KGs, LoCoMo).

A rule acts only through what a query is parsed into. So every question is searched once with
all rules on, and each search records the rules that fired on it (gave something other than
what the rule gives when off). With one rule off, only the questions it fired on are searched
again; the others cannot change. The table gives each family's measure with the rule on and
off, over all its questions, and how many it fired on. A rule stays only where it pays on two
families and hurts none (issue 49).

Stores are those of the family benchmarks (built by them when missing):

    python benchmarks/rule_audit.py --metaqa-dir D1 --hub-dir D2        # all three families
    python benchmarks/rule_audit.py --families hub --hub-dir D2 --per-kind 20
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chat_locomo import DEFAULT_DATA as LOCOMO_DATA
from chat_locomo import recall, turns_walked
from context_locomo import ADVERSARIAL, code_digest, store_dir
from raw_turns import answered

from engine import Memory
from engine.embedding import Embedder
from engine.ingest import load_locomo_qa
from engine.retrieval import graph_leg
from engine.retrieval import query as query_module
from engine.retrieval import question as question_module
from engine.retrieval.expansion import Expansion

REPO = Path(__file__).resolve().parent.parent
FAMILIES = ("metaqa", "hub", "locomo")


@dataclass(frozen=True)
class Rule:
    name: str
    module: ModuleType  # where the parse looks the function up
    attribute: str
    off: Callable[..., Any]  # what the parse gets with the rule off, from the same arguments


RULES = (
    # "same", "together", "co", "fellow", "share": out and back along one relation
    Rule("siblings", question_module, "asks_for_siblings", lambda *a: False),
    # "which genres": the relation that names the kind asked comes last
    Rule("asked kind", question_module, "asked_kind", lambda *a: None),
    # "where" asks for a place: one of the words matched to relations
    Rule("where", query_module, "asks_where", lambda *a: False),
    # "X's wife's father", "the father of X": a hop per noun, nearest first
    Rule("chain", question_module, "chain_order", lambda *a: []),
    # "what does X's daughter do": what is asked beyond the chain, a hop further
    Rule("chain rest", question_module, "chain_rest", lambda *a: ""),
    # "I", "my": the user's own entity may anchor
    Rule("first person", query_module, "first_person", lambda *a: False),
)


# not a word rule: the walk itself, every question answered without it (`--walk`)
WALK = Rule("the walk", graph_leg, "expand", lambda *a: Expansion())


class Recorder:
    """Wraps the rules' functions: records which rules fire, or applies one rule's `off`."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.fired: set[str] = set()
        self.off: Rule | None = None

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        originals = {(r.module, r.attribute): getattr(r.module, r.attribute) for r in self.rules}
        for (module, attribute), original in originals.items():
            setattr(module, attribute, self._wrap(module, attribute, original))
        try:
            yield
        finally:
            for (module, attribute), original in originals.items():
                setattr(module, attribute, original)

    def _wrap(self, module: ModuleType, attribute: str, original: Callable[..., Any]) -> Any:
        mine = [r for r in self.rules if (r.module, r.attribute) == (module, attribute)]

        def wrapped(*args: Any) -> Any:
            if self.off is not None and self.off in mine:
                return self.off.off(*args)
            value = original(*args)
            self.fired.update(r.name for r in mine if r.off(*args) != value)
            return value

        return wrapped


Ask = Callable[[], dict[str, float]]  # one question searched: its measures


@dataclass
class Family:
    name: str
    measures: tuple[str, ...]
    questions: list[tuple[str, Ask]]  # (group, ask)


def audit(family: Family, recorder: Recorder, control: bool) -> dict[str, Any]:
    """Every question with all rules on, then each rule's questions again with it off."""
    base: list[dict[str, float]] = []
    fired: list[set[str]] = []
    started = time.perf_counter()
    for _, ask in family.questions:
        recorder.fired = set()
        base.append(ask())
        fired.append(recorder.fired)
    out: dict[str, Any] = {"n": len(base), "on": _means(family, base), "rules": {}}
    if control:  # every question again, nothing off: what changes by itself
        again = [ask() for _, ask in family.questions]
        out["control"] = {"changed": sum(a != b for a, b in zip(again, base, strict=True))}
    for rule in recorder.rules:
        rows = list(base)
        which = [i for i, f in enumerate(fired) if rule.name in f]
        recorder.off = rule
        for i in which:
            rows[i] = family.questions[i][1]()
        recorder.off = None
        changed = sum(rows[i] != base[i] for i in which)
        out["rules"][rule.name] = {"fired": len(which), "changed": changed}
        out["rules"][rule.name]["off"] = _means(family, rows)
    out["seconds"] = round(time.perf_counter() - started)
    print(f"{family.name}: {out['n']} questions, {out['seconds']} s", file=sys.stderr)
    return out


def _means(family: Family, rows: list[dict[str, float]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for (group, _), row in zip(family.questions, rows, strict=True):
        groups[group].append(row)
        if group != "adversarial":
            groups["all"].append(row)
    return {
        g: {m: round(statistics.mean(r[m] for r in rs), 4) for m in family.measures}
        for g, rs in groups.items()
    }


def metaqa_family(mem: Memory, args: argparse.Namespace) -> Family:
    import metaqa

    metaqa.ensure_loaded(
        mem, metaqa.load_kb(args.metaqa / "kb_reconstructed.txt"), args.metaqa_dir, False
    )
    metaqa.wait_for_vector_indexes(mem)
    asks: list[tuple[str, Ask]] = []
    for hop in (1, 2, 3):
        for q in metaqa.load_questions(args.metaqa, hop, args.sample, 0):
            asks.append((f"{hop}-hop", _kg_ask(functools.partial(metaqa.score, mem, q, "dual"))))
    return Family("MetaQA", ("hits@1", "hits@10"), asks)


def hub_family(mem: Memory, args: argparse.Namespace) -> Family:
    import hub_kg
    from metaqa import wait_for_vector_indexes

    from tests.synthetic_kg import ask as questions_of

    asks: list[tuple[str, Ask]] = []
    for name in hub_kg.DOMAINS:
        g, specs = hub_kg.graph(name, 0)
        hub_kg.ensure_loaded(mem, g, args.hub_dir, 0)
        wait_for_vector_indexes(mem)
        for q in questions_of(g, specs, args.per_kind, 0):
            asks.append((name, _kg_ask(functools.partial(hub_kg.score, mem, g.domain, q))))
    return Family("hub KGs", ("hits@1", "hits@10"), asks)


def _kg_ask(score: Callable[[], dict[str, Any]]) -> Ask:
    def ask() -> dict[str, float]:
        hits = score()["hits"]
        return {"hits@1": float(hits[1]), "hits@10": float(hits[10])}

    return ask


def locomo_asks(mem: Memory, user: str, questions: list[Any]) -> list[tuple[str, Ask]]:
    asks: list[tuple[str, Ask]] = []
    for q in questions:
        if q.sample_id != user or not q.evidence:
            continue

        def ask(q: Any = q) -> dict[str, float]:
            walked = turns_walked(mem.search(q.question, user_id=user))
            block = mem.search(q.question, user_id=user, max_tokens=300).context()
            gold = q.answer if q.category != ADVERSARIAL else q.adversarial_answer
            return {
                "evidence recall@10": recall(walked, q),
                "answered@300": float(answered(gold or "", block)),
            }

        group = "adversarial" if q.category == ADVERSARIAL else "answerable"
        asks.append((group, ask))
    return asks


def run(args: argparse.Namespace) -> dict[str, Any]:
    recorder = Recorder((*RULES, WALK) if args.walk else RULES)
    embedder = Embedder()
    report: dict[str, Any] = {"when": datetime.now(UTC).isoformat(), "families": {}}
    with recorder.installed():
        if "metaqa" in args.families:
            with Memory(data_dir=args.metaqa_dir, embedder=embedder) as mem:
                report["families"]["MetaQA"] = audit(
                    metaqa_family(mem, args), recorder, args.control
                )
        if "hub" in args.families:
            with Memory(data_dir=args.hub_dir, embedder=embedder) as mem:
                report["families"]["hub KGs"] = audit(hub_family(mem, args), recorder, args.control)
        if "locomo" in args.families:
            report["families"]["LoCoMo"] = _locomo(args, embedder, recorder)
    embedder.close()
    return report


def _locomo(args: argparse.Namespace, embedder: Embedder, recorder: Recorder) -> dict[str, Any]:
    """One family over the ten conversations, each in its own store (context_locomo's)."""
    questions = load_locomo_qa(args.locomo)
    users = list(dict.fromkeys(q.sample_id for q in questions))
    stack = contextlib.ExitStack()
    with stack:
        asks: list[tuple[str, Ask]] = []
        code = code_digest()
        for user in users[: args.conversations or None]:
            home = store_dir(args.store_root, args.locomo, user, code)
            if not (home / "context_bench_ingest.json").exists():
                sys.exit(f"no LoCoMo store for {user}: run benchmarks/context_locomo.py first")
            mem = stack.enter_context(Memory(data_dir=home, embedder=embedder))
            asks += locomo_asks(mem, user, questions)
        family = Family("LoCoMo", ("evidence recall@10", "answered@300"), asks)
        return audit(family, recorder, args.control)


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "| rule | family | fired on | changed | measure | rules on | rule off | off - on |",
        "|---|---|---:|---:|---|---:|---:|---:|",
    ]
    for rule in (*RULES, WALK):
        for name, part in report["families"].items():
            if rule.name not in part["rules"]:
                continue
            row = part["rules"][rule.name]
            for measure, on in part["on"]["all"].items():
                off = row["off"]["all"][measure]
                lines.append(
                    f"| {rule.name} | {name} | {row['fired']} | {row['changed']} | {measure} | "
                    f"{on:.4f} | {off:.4f} | {off - on:+.4f} |"
                )
    controls = [
        f"{n}: {p['control']['changed']}" for n, p in report["families"].items() if "control" in p
    ]
    if controls:
        lines += [
            "",
            "Questions whose measures changed when asked again, nothing off: "
            + ", ".join(controls),
        ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    home = Path.home()
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--metaqa", type=Path, default=REPO.parent / "shared" / "data" / "metaqa")
    parser.add_argument("--metaqa-dir", type=Path, default=home / ".graphmem-bench-metaqa")
    parser.add_argument("--sample", type=int, default=300, help="MetaQA questions per hop")
    parser.add_argument("--hub-dir", type=Path, default=home / ".graphmem-bench-hubkg")
    parser.add_argument("--per-kind", type=int, default=50, help="hub questions per kind")
    parser.add_argument("--locomo", type=Path, default=LOCOMO_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="the first N (0: all)")
    parser.add_argument(
        "--store-root", type=Path, default=home / ".cache" / "graphmem" / "bench",
        help="context_locomo.py's stores",
    )  # fmt: skip
    parser.add_argument("--walk", action="store_true", help="also answer without the walk")
    parser.add_argument(
        "--control", action="store_true", help="ask every question twice: changes by themselves"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    report = run(args)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "rule_audit.json").write_text(json.dumps(report, indent=2))
    print(markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
