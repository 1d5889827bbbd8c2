"""Cut the golden-ranking test's data from the shared benchmark data (run once, by hand).

    python tests/golden/cut_slices.py [--data ../shared/data]

MetaQA: 10 one-hop and 10 two-hop dev questions (a fixed random draw among those whose
topic entity has at most `MAX_TOPIC_DEGREE` facts), and the KB triples around them: every
triple of the topic, and for two-hop questions every triple of its neighbours that are not
hubs (a year, a genre, a language); hubs are kept as nodes, not expanded.
LoCoMo: the first three sessions of conversation 1 (58 turns) and the questions whose evidence
lies in them; image URLs and the summaries are left out.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SEED = 18
PER_HOP = 10
MAX_TOPIC_DEGREE = 15
MAX_NEIGHBOUR_DEGREE = 25  # a node with more triples is a hub: kept, not expanded
MAX_QUESTION_TRIPLES = 80
SESSIONS = 3
Triple = tuple[str, str, str]


def _kb(path: Path) -> tuple[list[Triple], dict[str, list[int]]]:
    triples = []
    around: dict[str, list[int]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split("|")
        if len(parts) == 3:
            around[parts[0]].append(len(triples))
            around[parts[2]].append(len(triples))
            triples.append((parts[0], parts[1], parts[2]))
    return triples, around


def _neighbourhood(
    topic: str, hop: int, triples: list[Triple], around: dict[str, list[int]]
) -> set[int]:
    found = set(around[topic])
    if hop == 2:
        for i in list(found):
            s, _, o = triples[i]
            for node in (s, o):
                if node != topic and len(around[node]) <= MAX_NEIGHBOUR_DEGREE:
                    found |= set(around[node])
    return found


def cut_metaqa(data: Path) -> None:
    triples, around = _kb(data / "kb_reconstructed.txt")
    rng = random.Random(SEED)
    kept: set[int] = set()
    questions = []
    for hop in (1, 2):
        lines = (data / f"{hop}-hop" / "vanilla" / "qa_dev.txt").read_text("utf-8").splitlines()
        qtypes = (data / f"{hop}-hop" / "qa_dev_qtype.txt").read_text("utf-8").splitlines()
        pool = list(zip(lines, qtypes, strict=True))
        rng.shuffle(pool)
        taken = 0
        for line, qtype in pool:
            question, answers = line.split("\t")
            topic = re.search(r"\[(.+?)\]", question)
            if topic is None or not 0 < len(around[topic.group(1)]) <= MAX_TOPIC_DEGREE:
                continue
            found = _neighbourhood(topic.group(1), hop, triples, around)
            if len(found) > MAX_QUESTION_TRIPLES:
                continue
            kept |= found
            text = question.replace("[", "").replace("]", "")
            questions.append({"hop": hop, "qtype": qtype, "question": text, "answers": answers})
            taken += 1
            if taken == PER_HOP:
                break
    rows = ["|".join(triples[i]) for i in sorted(kept)]
    (HERE / "metaqa_kb.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (HERE / "metaqa_questions.json").write_text(json.dumps(questions, indent=1) + "\n")


def cut_locomo(path: Path) -> None:
    sample = json.loads(path.read_text(encoding="utf-8"))[0]
    conversation = sample["conversation"]
    kept: dict[str, Any] = {k: conversation[k] for k in ("speaker_a", "speaker_b")}
    sessions = {f"D{n}" for n in range(1, SESSIONS + 1)}
    for n in range(1, SESSIONS + 1):
        kept[f"session_{n}_date_time"] = conversation[f"session_{n}_date_time"]
        turns = conversation[f"session_{n}"]
        kept[f"session_{n}"] = [{k: v for k, v in t.items() if k != "img_url"} for t in turns]
    qa = [
        q
        for q in sample["qa"]
        if q.get("evidence") and all(e.split(":")[0] in sessions for e in q["evidence"])
    ]
    cut = [{"sample_id": sample["sample_id"], "conversation": kept, "qa": qa}]
    (HERE / "locomo_conv1.json").write_text(json.dumps(cut, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=HERE.parents[2] / "shared" / "data")
    args = parser.parse_args()
    cut_metaqa(args.data / "metaqa")
    cut_locomo(args.data / "locomo" / "locomo10.json")


if __name__ == "__main__":
    main()
