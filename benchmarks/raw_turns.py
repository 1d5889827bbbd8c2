"""Raw-turn baselines for the chat benchmarks: what a short script does without a graph.

Every turn of a conversation as one line, "[date] Speaker: text", ranked for a question by
- `embedding`: cosine between the question and "Speaker: text" (the same model graphmem uses);
- `fused`: BM25 over the turn's words and the embedding rank, joined by reciprocal-rank fusion
  (k = 60, the usual constant).
`pack` fills a token budget with ranked lines under the same estimate `SearchResult.context`
uses (words x 4/3, stopping at the first line that does not fit). `answered` is the
answer-in-context check: every content word of the gold answer is in the block.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.embedding import Embedder
from engine.ingest import ChatRecord

RRF_K = 60
BM25_K1, BM25_B = 1.2, 0.75
STOPWORDS = frozenset(
    "a about after all also am an and any are as at be been being but by can could did do "
    "does for from had has have he her him his how i if in into is it its just me my no not "
    "of on or our she so some than that the their them then there they this to too us was "
    "we were what when where which who will with would you your".split()
)
_WORD = re.compile(r"[a-z0-9]+")
# an ISO date, or its month alone ("2023-05", as a fact known to the month prints)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_MONTHS = (
    "january february march april may june july august september october november december"
).split()


def stem(word: str) -> str:
    """A light English stem: plural, -ing and -ed forms meet their base."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def terms(text: str) -> list[str]:
    """Stemmed content words of `text`, repeats kept."""
    return [stem(w) for w in _WORD.findall(text.casefold()) if w not in STOPWORDS]


def block_terms(block: str) -> set[str]:
    """The words a block offers: its terms, and each ISO date also as day, month and year
    ("2023-05-07" also reads "7 May 2023", "2023-05" "May 2023"), so a date answer is judged
    the same way whoever printed the date."""
    found = set(terms(block))
    for year, month, day in _ISO_DATE.findall(block):
        if 1 <= int(month) <= len(_MONTHS):
            found.update({year, stem(_MONTHS[int(month) - 1])})
            found.update({str(int(day))} if day else set())
    return found


def answered(answer: str, block: str) -> bool:
    """Every content word of `answer` appears in `block` (after the light stem)."""
    wanted = set(terms(answer))
    return bool(wanted) and wanted <= block_terms(block)


def estimate(line: str) -> int:
    """Tokens of one line: words x 4/3, at least 1 (as `SearchResult.context`)."""
    return max(1, round(len(line.split()) * 4 / 3))


def pack(lines: Sequence[str], budget: int) -> str:
    """The ranked `lines` that fit in `budget` tokens, stopping at the first that does not."""
    kept: list[str] = []
    for line in lines:
        cost = estimate(line)
        if cost > budget:
            break
        kept.append(line)
        budget -= cost
    return "\n".join(kept)


@dataclass
class Turns:
    """One conversation's turns: provenance, printed lines, vectors and a BM25 index."""

    sources: list[str]
    lines: list[str]
    vectors: np.ndarray
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    lengths: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        for doc, line in enumerate(self.lines):
            words = terms(line.partition("] ")[2])
            for term, count in Counter(words).items():
                self.postings[term].append((doc, count))
            self.lengths.append(len(words))

    def bm25(self, question: str) -> np.ndarray:
        """BM25 of every turn for the question's terms (each counted once)."""
        n = len(self.lines)
        lengths = np.asarray(self.lengths, dtype=np.float64)
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths / max(1.0, float(lengths.mean())))
        out = np.zeros(n)
        for term in dict.fromkeys(terms(question)):
            hits = self.postings.get(term, [])
            if not hits:
                continue
            idf = math.log(1 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            for doc, tf in hits:
                out[doc] += idf * tf * (BM25_K1 + 1) / (tf + norm[doc])
        return out

    def by_embedding(self, query: np.ndarray) -> list[int]:
        """Turn numbers, nearest first."""
        return [int(i) for i in np.argsort(-(self.vectors @ query), kind="stable")]

    def fused(self, question: str, query: np.ndarray) -> list[int]:
        """Turn numbers by reciprocal-rank fusion of BM25 (turns with a matching word) and
        the embedding ranking."""
        score: dict[int, float] = defaultdict(float)
        for rank, doc in enumerate(self.by_embedding(query)):
            score[doc] += 1.0 / (RRF_K + rank + 1)
        bm25 = self.bm25(question)
        ranked = [int(i) for i in np.argsort(-bm25, kind="stable") if bm25[i] > 0]
        for rank, doc in enumerate(ranked):
            score[doc] += 1.0 / (RRF_K + rank + 1)
        return sorted(score, key=lambda d: (-score[d], d))


def turn_line(record: ChatRecord) -> str:
    """A turn as `Episode.line()` prints it: "[date] Speaker: text" on one line."""
    who = record.speaker or record.role
    when = f"[{record.ts:%Y-%m-%d}] " if record.ts else ""
    return f"{when}{who}: {' '.join(record.content.split())}"


def build_turns(records: list[ChatRecord], embedder: Embedder) -> dict[str, Turns]:
    """Each conversation's `Turns`, keyed by user id (turns embedded as "Speaker: text")."""
    texts = [f"{r.speaker}: {r.content}" if r.speaker else r.content for r in records]
    vectors = embedder.encode(texts, show_progress=True)
    by_user: dict[str, list[int]] = defaultdict(list)
    for i, record in enumerate(records):
        by_user[record.user_id or ""].append(i)
    return {
        user: Turns(
            sources=[records[i].source for i in rows],
            lines=[turn_line(records[i]) for i in rows],
            vectors=vectors[rows],
        )
        for user, rows in by_user.items()
    }
