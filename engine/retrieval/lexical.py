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
from array import array
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from engine.retrieval.terms import STOPWORDS, words
from engine.retrieval.tuning import BM25, INDEX_BLOCK_MIN
from engine.store.base import EpisodeText
from engine.store.rows import times_stamp

_SUFFIXES = ("ing", "ed", "es", "s")
# ... and those a relation's name and a question's word may differ by ("directed", "director")
_ROOT_ENDINGS = ("ions", "ing", "ion", "ers", "ors", "ten", "ed", "er", "or", "es", "s")
# What `stored_terms` computes; change it whenever `words`, `STOPWORDS` or `stem` change, and
# stored terms of another version are computed again on load (never trusted).
TERMS_VERSION = 1


def stem(word: str) -> str:
    """A light English stem ("hiking" -> "hik", "paintings" -> "painting"): enough to meet a
    question's form of a word in a message, cheap enough for every search."""
    return _without_ending(word, _SUFFIXES, 4)


def root(word: str, shortest: int) -> str:
    """A word without its inflection or agent ending, of `shortest` letters at least:
    "directors", "directed" -> "direct", "writer", "written" -> "writ" (`retrieval.scorer`
    matches a question's words to relation names by it)."""
    return _without_ending(word, _ROOT_ENDINGS, shortest)


def _without_ending(word: str, endings: Sequence[str], shortest: int) -> str:
    for suffix in endings:
        if word.endswith(suffix) and len(word) - len(suffix) >= shortest:
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


def term_count(terms: str) -> int:
    """How many terms a `stored_terms` text holds (single spaces between them)."""
    return terms.count(" ") + 1 if terms else 0


@dataclass(frozen=True, slots=True)
class PostingsBlock:
    """The postings of documents indexed together (a load's page): each term's documents,
    ascending, and counts are `docs[start:end]`, `counts[start:end]` for the `starts` and
    `ends` entry its `spans` number names (numbers, not tuples: nothing for the collector)."""

    spans: dict[str, int]
    starts: np.ndarray
    ends: np.ndarray
    docs: np.ndarray
    counts: np.ndarray

    @staticmethod
    def of(term_texts: list[str], first: int) -> PostingsBlock:
        """The block of documents numbered from `first`, each given as its `stored_terms`:
        counted by numpy and C-level iteration, with no Python step per term."""
        n = len(term_texts)
        vocabulary: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        tokens = " ".join(term_texts).split()
        ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
        lengths = np.fromiter(map(term_count, term_texts), dtype=np.int64, count=n)
        keys, counts = np.unique(ids * n + np.repeat(np.arange(n), lengths), return_counts=True)
        starts = np.searchsorted(keys // n, np.arange(len(vocabulary)))
        ends = np.append(starts[1:], len(keys))
        docs, tf = keys % n + first, counts.astype(np.float32)
        return PostingsBlock(dict(vocabulary), starts, ends, docs, tf)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray] | None:
        at = self.spans.get(term)
        if at is None:
            return None
        start, end = self.starts[at], self.ends[at]
        return self.docs[start:end], self.counts[start:end]


@dataclass(slots=True)
class LexicalIndex:
    """One user's messages: postings per term, lengths, and neighbours within a session.

    Documents keep the number they were added under; `prev` / `next` give the message before
    and after each one in its session by time (-1 at a session's edge). A batch of at least
    `INDEX_BLOCK_MIN` documents (a load) is indexed as one `PostingsBlock`; smaller ones (a write's)
    go to the per-term lists of `postings`. A document's fields are kept in columns of plain
    values (`doc` builds its `EpisodeText`): a 150k-message index then adds no object per
    message for the garbage collector, whose full collections otherwise held every thread of
    the process for 100 ms and more while a large user loaded.
    """

    uids: list[str] = field(default_factory=list)
    session_ids: list[str | None] = field(default_factory=list)
    speakers: list[str | None] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    contents: list[str | None] = field(default_factory=list)  # None: not read yet
    times: array[float] = field(default_factory=lambda: array("d"))
    sources: list[str | None] = field(default_factory=list)
    undated: array[int] = field(default_factory=lambda: array("b"))
    position: dict[str, int] = field(default_factory=dict)
    postings: dict[str, list[tuple[int, int]]] = field(default_factory=lambda: defaultdict(list))
    blocks: list[PostingsBlock] = field(default_factory=list)
    lengths: array[int] = field(default_factory=lambda: array("q"))
    prev: array[int] = field(default_factory=lambda: array("q"))
    next: array[int] = field(default_factory=lambda: array("q"))
    sessions: dict[str | None, list[int]] = field(default_factory=lambda: defaultdict(list))
    total_length: int = 0
    # documents placed whose terms are not in `postings` or `blocks` yet (`extend`, `seal`)
    unsealed: list[str] = field(default_factory=list)
    _speakers: tuple[int, dict[str, str]] = field(default_factory=lambda: (0, {}))

    def __len__(self) -> int:
        return len(self.uids)

    def stamp(self) -> tuple[int, int]:
        """The messages held and a sum of their times, as the store's (`Reads.episodes_stamp`):
        the same two, the same messages, but for one deleted and another stored in the same
        millisecond."""
        return len(self), times_stamp(self.times)

    def speakers_by_key(self) -> dict[str, str]:
        """The names the messages are said under, by their case-folded form (the first
        spelling met; new messages' added as they come)."""
        counted, names = self._speakers  # messages are only added: an index is never cut
        if counted != (now := len(self.speakers)):
            new = {s.casefold(): s for s in reversed(self.speakers[counted:now]) if s}
            names = {**new, **names}
            self._speakers = (now, names)
        return names

    def doc(self, d: int) -> EpisodeText:
        """Document `d` as the message it is (its text read: see `unread`)."""
        content = self.contents[d]
        assert content is not None, "read the text of the documents shown first"
        return EpisodeText(
            self.uids[d],
            self.session_ids[d],
            self.speakers[d],
            self.roles[d],
            content,
            self.times[d],
            self.sources[d],
            bool(self.undated[d]),
        )

    def unread(self, uids: Iterable[str]) -> list[str]:
        """Those of `uids` indexed whose text is not read (an index read from the store)."""
        at = self.position
        return [u for u in dict.fromkeys(uids) if u in at and self.contents[at[u]] is None]

    def read(self, contents: dict[str, str]) -> None:
        """Keep the text of these indexed documents."""
        for uid, content in contents.items():
            if (d := self.position.get(uid)) is not None:
                self.contents[d] = content

    def add(self, episodes: list[EpisodeText], terms: Sequence[str | None] = ()) -> None:
        """Index `episodes` (those already indexed are left as they are). `terms`, when
        given, holds each episode's `stored_terms` as read from the store (None: not stored
        under `TERMS_VERSION`, computed here)."""
        self.extend(episodes, terms)
        self.seal()

    def extend(self, episodes: list[EpisodeText], terms: Sequence[str | None] = ()) -> None:
        """Place `episodes` as `add` does, their terms kept for the next `seal` (a load
        reads in small steps and counts their terms a block at a time). Keeps only plain
        values: no object per message outlives the call."""
        for at, episode in enumerate(episodes):
            if episode.uid in self.position:
                continue
            stored = terms[at] if at < len(terms) else None
            if stored is None:
                stored = stored_terms(episode.speaker, episode.content)
            self.unsealed.append(stored)
            self._place(episode, term_count(stored))

    def seal(self) -> None:
        """Count the terms of the documents placed since the last seal: as one `PostingsBlock`
        when they are at least `INDEX_BLOCK_MIN`, else term by term into `postings`."""
        pending, first = self.unsealed, len(self) - len(self.unsealed)
        self.unsealed = []
        if len(pending) >= INDEX_BLOCK_MIN:
            self.blocks.append(PostingsBlock.of(pending, first))
            return
        for doc, text in enumerate(pending, start=first):
            for term, count in Counter(text.split()).items():
                self.postings[term].append((doc, count))

    def _place(self, episode: EpisodeText, length: int) -> None:
        doc = len(self)
        self.uids.append(episode.uid)
        self.session_ids.append(episode.session_id)
        self.speakers.append(episode.speaker)
        self.roles.append(episode.role)
        self.contents.append(episode.content)
        self.times.append(episode.ts)
        self.sources.append(episode.source)
        self.undated.append(int(episode.undated))
        self.position[episode.uid] = doc
        self.lengths.append(length)
        self.total_length += length
        self.prev.append(-1)
        self.next.append(-1)
        self._link(doc, episode.session_id)

    def _link(self, doc: int, session_id: str | None) -> None:
        order = self.sessions[session_id]
        at = bisect.bisect(order, self._order_key(doc), key=self._order_key)
        order.insert(at, doc)
        before = order[at - 1] if at > 0 else -1
        after = order[at + 1] if at + 1 < len(order) else -1
        self.prev[doc], self.next[doc] = before, after
        if before >= 0:
            self.next[before] = doc
        if after >= 0:
            self.prev[after] = doc

    def _order_key(self, doc: int) -> tuple[float, str, int]:
        """A message's place in its session: by time, then uid (then when it was added)."""
        return self.times[doc], self.uids[doc], doc

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
        out = np.zeros(len(self), dtype=np.float32)
        if not len(self):
            return out
        lengths = np.frombuffer(self.lengths, dtype=np.int64).astype(np.float32)
        norm = bm25.k1 * (1.0 - bm25.b + bm25.b * lengths / max(1.0, self.mean_length))
        n = len(self)
        for term in dict.fromkeys(terms):
            parts = self.term_postings(term)
            if not parts:
                continue
            docs = np.concatenate([d for d, _ in parts])  # a large user's load: many blocks
            tf = np.concatenate([t for _, t in parts])
            idf = math.log(1.0 + (n - len(docs) + 0.5) / (len(docs) + 0.5))
            out[docs] += idf * tf * (bm25.k1 + 1.0) / (tf + norm[docs])
        return out

    @property
    def mean_length(self) -> float:
        return self.total_length / len(self) if len(self) else 0.0

    def with_neighbours(self, scores: np.ndarray, share: float) -> np.ndarray:
        """Each message's score plus `share` of its session neighbours' scores."""
        if not len(scores) or share <= 0:
            return scores
        prev = np.frombuffer(self.prev, dtype=np.int64)
        nxt = np.frombuffer(self.next, dtype=np.int64)
        padded = np.append(scores, np.float32(0.0))  # index -1: no neighbour
        smoothed: np.ndarray = scores + share * (padded[prev] + padded[nxt])
        return smoothed
