"""BM25 over one user's messages, with each message's place in its session.

FalkorDB's fulltext ranking is not BM25 (on LoCoMo's questions it found 0.08 of the evidence
turns that BM25 finds 0.61 of), and conversational evidence sits next to what matches: an
answer follows its question. So the episode leg scores words here, in process, over an index
fed from the store, and knows each message's neighbours in its session. Each message's terms
are computed once, when it is written, and stored with it (`stored_terms`, tagged with
`TERMS_VERSION`): a load reads and counts them; a message stored without them (an older store)
or under another version has them computed here, on every load.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.retrieval.terms import STOPWORDS, words
from engine.retrieval.tuning import BM25, INDEX_BLOCK_MIN
from engine.store.base import EpisodeText

_SUFFIXES = ("ing", "ed", "es", "s")
# What `stored_terms` computes; change it whenever `words`, `STOPWORDS` or `stem` change, and
# stored terms of another version are computed again on load (never trusted).
TERMS_VERSION = 1


def stem(word: str) -> str:
    """A light English stem ("hiking" -> "hik", "paintings" -> "painting"): enough to meet a
    question's form of a word in a message, cheap enough for every search."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def episode_text(speaker: str | None, content: str) -> str:
    """How a message reads to search (embedded and indexed): its text under its speaker."""
    return f"{speaker}: {content}" if speaker else content


def index_terms(text: str) -> list[str]:
    """The stemmed content words of `text`, repeats kept (term frequency counts them)."""
    return stems(words(text))


def stored_terms(speaker: str | None, content: str) -> str:
    """A message's index terms as stored with it: `index_terms` joined by spaces (a word
    token holds no whitespace, so `str.split` gives them back)."""
    return " ".join(index_terms(episode_text(speaker, content)))


def stems(tokens: Sequence[str]) -> list[str]:
    """The stemmed content words of a text's `words`, repeats kept."""
    return [stem(w) for w in tokens if w not in STOPWORDS]


@dataclass(frozen=True, slots=True)
class _Block:
    """The postings of documents indexed together (a load's page): each term's documents,
    ascending, and counts are `docs[start:end]`, `counts[start:end]` for its `spans` entry."""

    spans: dict[str, tuple[int, int]]
    docs: np.ndarray
    counts: np.ndarray

    @staticmethod
    def of(term_lists: list[list[str]], first: int) -> _Block:
        """The block of documents numbered from `first`, one list of terms each: counted by
        numpy and C-level iteration, with no Python step per term."""
        n = len(term_lists)
        vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        tokens = itertools.chain.from_iterable(term_lists)
        ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64)
        lengths = np.fromiter(map(len, term_lists), dtype=np.int64, count=n)
        keys, counts = np.unique(ids * n + np.repeat(np.arange(n), lengths), return_counts=True)
        starts = np.searchsorted(keys // n, np.arange(len(vocabulary)))
        ends = np.append(starts[1:], len(keys))
        spans = dict(zip(vocabulary, zip(starts.tolist(), ends.tolist(), strict=True), strict=True))
        return _Block(spans, keys % n + first, counts.astype(np.float32))

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        span = self.spans.get(term)
        return (
            None if span is None else (self.docs[span[0] : span[1]], self.counts[span[0] : span[1]])
        )


@dataclass(slots=True)
class LexicalIndex:
    """One user's messages: postings per term, lengths, and neighbours within a session.

    Documents keep the number they were added under; `prev` / `next` give the message before
    and after each one in its session by time (-1 at a session's edge). A batch of at least
    `INDEX_BLOCK_MIN` documents (a load) is indexed as one `_Block`; smaller ones (a write's)
    go to the per-term lists of `postings`.
    """

    docs: list[EpisodeText] = field(default_factory=list)
    position: dict[str, int] = field(default_factory=dict)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    blocks: list[_Block] = field(default_factory=list)
    lengths: list[int] = field(default_factory=list)
    prev: list[int] = field(default_factory=list)
    next: list[int] = field(default_factory=list)
    sessions: dict[str | None, list[tuple[float, str, int]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    total_length: int = 0

    def __len__(self) -> int:
        return len(self.docs)

    def add(self, episodes: list[EpisodeText], terms: Sequence[str | None] = ()) -> None:
        """Index `episodes` (those already indexed are left as they are). `terms`, when
        given, holds each episode's `stored_terms` as read from the store (None: not stored
        under `TERMS_VERSION`, computed here)."""
        fresh: dict[str, tuple[EpisodeText, list[str]]] = {}
        for at, episode in enumerate(episodes):
            if episode.uid in self.position or episode.uid in fresh:
                continue
            stored = terms[at] if at < len(terms) else None
            if stored is None:
                stored = stored_terms(episode.speaker, episode.content)
            fresh[episode.uid] = (episode, stored.split())
        if len(fresh) >= INDEX_BLOCK_MIN:
            self.blocks.append(_Block.of([t for _, t in fresh.values()], len(self.docs)))
        for episode, doc_terms in fresh.values():
            if len(fresh) < INDEX_BLOCK_MIN:
                for term, count in Counter(doc_terms).items():
                    self.postings[term].append((len(self.docs), count))
            self._place(episode, len(doc_terms))

    def _place(self, episode: EpisodeText, length: int) -> None:
        doc = len(self.docs)
        self.docs.append(episode)
        self.position[episode.uid] = doc
        self.lengths.append(length)
        self.total_length += length
        self.prev.append(-1)
        self.next.append(-1)
        self._link(doc, episode)

    def _link(self, doc: int, episode: EpisodeText) -> None:
        order = self.sessions[episode.session_id]
        at = bisect.bisect(order, (episode.ts, episode.uid, doc))
        order.insert(at, (episode.ts, episode.uid, doc))
        before = order[at - 1][2] if at > 0 else -1
        after = order[at + 1][2] if at + 1 < len(order) else -1
        self.prev[doc], self.next[doc] = before, after
        if before >= 0:
            self.next[before] = doc
        if after >= 0:
            self.prev[after] = doc

    def term_postings(self, term: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """The documents holding `term` and its count in each, in parts (no document twice)."""
        parts = [found for block in self.blocks if (found := block.postings(term)) is not None]
        hits = self.postings.get(term)
        if hits:
            docs = np.fromiter((d for d, _ in hits), dtype=np.int64, count=len(hits))
            tf = np.fromiter((c for _, c in hits), dtype=np.float32, count=len(hits))
            parts.append((docs, tf))
        return parts

    def scores(self, terms: list[str], bm25: BM25) -> np.ndarray:
        """BM25 of every document for the query `terms` (stemmed, each counted once)."""
        out = np.zeros(len(self.docs), dtype=np.float32)
        if not self.docs:
            return out
        lengths = np.asarray(self.lengths, dtype=np.float32)
        norm = bm25.k1 * (1.0 - bm25.b + bm25.b * lengths / max(1.0, self.mean_length))
        n = len(self.docs)
        for term in dict.fromkeys(terms):
            parts = self.term_postings(term)
            df = sum(len(docs) for docs, _ in parts)
            if not df:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for docs, tf in parts:
                out[docs] += idf * tf * (bm25.k1 + 1.0) / (tf + norm[docs])
        return out

    @property
    def mean_length(self) -> float:
        return self.total_length / len(self.docs) if self.docs else 0.0

    def with_neighbours(self, scores: np.ndarray, share: float) -> np.ndarray:
        """Each message's score plus `share` of its session neighbours' scores."""
        if not len(scores) or share <= 0:
            return scores
        prev = np.asarray(self.prev)
        nxt = np.asarray(self.next)
        padded = np.append(scores, np.float32(0.0))  # index -1: no neighbour
        smoothed: np.ndarray = scores + share * (padded[prev] + padded[nxt])
        return smoothed
