"""How often LoCoMo's questions name something no message of their conversation holds.

python benchmarks/unknown_names.py [--data PATH]

Each conversation's messages (text and speaker) go into the episode leg's message index; each
question with its conversation is checked with `engine.retrieval.unknown.unknown_names`, with
no entity anchors (a search also counts the names of the entities it anchors as known, so it
flags at most this many). Printed: the questions flagged, by LoCoMo category (5: adversarial,
about things the conversation never says), and the names flagged most often.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_locomo import DEFAULT_DATA

from engine.ingest import ChatRecord, load_locomo_qa, read_chat_log
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.unknown import unknown_names
from engine.store.base import EpisodeText


def indexes(records: list[ChatRecord]) -> dict[str, LexicalIndex]:
    by_user: defaultdict[str, list[ChatRecord]] = defaultdict(list)
    for record in records:
        by_user[record.user_id or ""].append(record)
    out = {}
    for user, own in by_user.items():
        index = LexicalIndex()
        index.add(
            [
                EpisodeText(f"{user}:{i}", r.session_id, r.speaker, "user", r.content, 0.0)
                for i, r in enumerate(own)
            ]
        )
        out[user] = index
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="LoCoMo's JSON file")
    args = parser.parse_args()
    index = indexes(read_chat_log(args.data, format="locomo").records)
    asked = [q for q in load_locomo_qa(args.data) if q.sample_id in index]
    flagged: Counter[str] = Counter()
    categories: Counter[int] = Counter()
    for question in asked:
        names = unknown_names(question.question, index[question.sample_id], [])
        if names:
            categories[question.category] += 1
            flagged.update(names)
    total = sum(categories.values())
    print(f"{total} of {len(asked)} questions name something no message holds")
    print("by category:", dict(sorted(categories.items())))
    print("most flagged:", ", ".join(f"{name} ({n})" for name, n in flagged.most_common(15)))


if __name__ == "__main__":
    main()
