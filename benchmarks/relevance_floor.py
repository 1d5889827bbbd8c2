"""What a default relevance floor would cost: the cosine of each question and the items that
answer it, against the cosine of a question about someone never stored and its nearest wrong
fact ("Where does Bob live?" / "Peter lives in New York").

A floor (`min_similarity`) drops every hit below it, whatever leg found it. It can only be a
default if it hides the wrong hit while keeping (nearly) every answer. Two benchmark families,
with the embedding model graphmem searches with and no store:
- LoCoMo: each question against each of its evidence turns ("Speaker: text", as stored);
- MetaQA 1-hop: each question (brackets removed) against its answer's triple as a sentence.

    python benchmarks/relevance_floor.py --conversations 2 --sample 300
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from engine.embedding import Embedder  # noqa: E402

DATA = REPO.parent / "shared" / "data"
FLOORS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6)
WRONG = [
    ("Where does Bob live?", "Peter lives in New York"),
    ("What is Bob's job?", "Alice works as a nurse"),
    ("Who is Carol married to?", "John is married to Maria"),
]


def cosines(embedder: Embedder, pairs: list[tuple[str, str]]) -> np.ndarray:
    """The cosine of each (question, text) pair."""
    a = np.asarray(embedder.encode([q for q, _ in pairs]), dtype=np.float64)
    b = np.asarray(embedder.encode([t for _, t in pairs]), dtype=np.float64)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    return np.asarray((a * b).sum(axis=1))


def locomo_pairs(path: Path, conversations: int) -> list[tuple[str, str]]:
    """(question, evidence turn) for every question of the first `conversations`."""
    pairs: list[tuple[str, str]] = []
    for conv in json.loads(path.read_text(encoding="utf-8"))[:conversations]:
        turns = {
            t["dia_id"]: f"{t['speaker']}: {t['text']}"
            for key, session in conv["conversation"].items()
            if key.startswith("session_") and isinstance(session, list)
            for t in session
        }
        for qa in conv["qa"]:
            for evidence in qa.get("evidence", []):
                ids = re.split(r"[;, ]+", evidence)
                pairs += [(qa["question"], turns[i]) for i in ids if i in turns]
    return pairs


def metaqa_pairs(folder: Path, sample: int, seed: int) -> list[tuple[str, str]]:
    """(question, its answer's triple as "head relation tail") for a sample of 1-hop dev."""
    links: dict[str, list[tuple[str, str]]] = {}
    for line in (folder / "kb_reconstructed.txt").read_text(encoding="utf-8").splitlines():
        head, relation, tail = line.split("|")
        words = relation.replace("_", " ")
        links.setdefault(head, []).append((tail, f"{head} {words} {tail}"))
        links.setdefault(tail, []).append((head, f"{head} {words} {tail}"))
    rows = (folder / "1-hop" / "vanilla" / "qa_dev.txt").read_text(encoding="utf-8").splitlines()
    pairs: list[tuple[str, str]] = []
    for row in random.Random(seed).sample(rows, sample):
        question, answers = row.split("\t")
        topic = re.search(r"\[(.+?)\]", question)
        wanted = set(answers.split("|"))
        near = links.get(topic[1], []) if topic else []
        found = [text for other, text in near if other in wanted]
        if found:
            pairs.append((question.replace("[", "").replace("]", ""), found[0]))
    return pairs


def table(rows: dict[str, np.ndarray]) -> str:
    """Markdown: per family, the share of its pairs below each floor."""
    head = "| family | pairs | " + " | ".join(f"< {f}" for f in FLOORS) + " |"
    lines = [head, "|" + " --- |" * (len(FLOORS) + 2)]
    for name, values in rows.items():
        shares = " | ".join(f"{float(np.mean(values < f)):.3f}" for f in FLOORS)
        lines.append(f"| {name} | {len(values)} | {shares} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--sample", type=int, default=300, help="MetaQA 1-hop questions")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    embedder = Embedder()
    rows = {
        "LoCoMo evidence turns": cosines(
            embedder, locomo_pairs(DATA / "locomo" / "locomo10.json", args.conversations)
        ),
        "MetaQA 1-hop answer facts": cosines(
            embedder, metaqa_pairs(DATA / "metaqa", args.sample, args.seed)
        ),
        "wrong person (should be hidden)": cosines(embedder, WRONG),
    }
    print(table(rows))
    for (question, text), value in zip(WRONG, rows["wrong person (should be hidden)"], strict=True):
        print(f"- {question!r} ~ {text!r}: {value:.3f}")


if __name__ == "__main__":
    main()
