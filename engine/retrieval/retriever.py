"""The dual retriever: anchored expansion along the question's relation paths (one to three
hops) + vector similarity over facts, fused; nodes joining several anchors come first."""

from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Literal

from engine.embedding import Embedder, as_param
from engine.models import Fact, Leg, ScoredEntity, ScoredFact, SearchResult
from engine.ranking import FusionParams, RankingParams
from engine.retrieval.anchors import Anchor
from engine.retrieval.background import BACKGROUND
from engine.retrieval.blas import blas_limited
from engine.retrieval.episodes import EpisodeHit, EpisodeLeg
from engine.retrieval.explain import Found, explain
from engine.retrieval.fusion import fuse_legs, knowledge_boost, without_twins
from engine.retrieval.graph_leg import GraphFound, GraphLeg, NameReads
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.provenance import fuse_provenance
from engine.retrieval.query import Query
from engine.retrieval.reach import ExpansionHit
from engine.retrieval.scorer import PredicateScorer
from engine.retrieval.similarity import above, fill, known
from engine.store.base import Written
from engine.store.reads import Reads

Mode = Literal["dual", "expansion", "semantic", "episodes"]
MODES: tuple[Mode, ...] = ("dual", "expansion", "semantic", "episodes")
FACT_MODES = ("dual", "expansion", "semantic")
_MS = 1000.0


class DualRetriever:
    """Answers a query from one user's graph with no LLM call.

    Args:
        reads: the store's reads.
        embedder: embeds the query (and the words matched to predicates).
        params: every number that shapes the ranking.
        max_query_words: words of a query matched to predicates and searched by name: each
            new one is a model input, and a 32,000-character query has thousands.
        blas_threads: the BLAS threads a search runs with (None: the process's setting,
            untouched; see engine/retrieval/blas.py).
    """

    def __init__(
        self,
        reads: Reads,
        embedder: Embedder,
        params: RankingParams,
        max_query_words: int,
        blas_threads: int | None = None,
    ) -> None:
        self.reads = reads
        self.blas_threads = blas_threads
        self.embedder = embedder
        self.params = params
        self.max_query_words = max_query_words
        self.scorer = PredicateScorer(embedder, params.relations)
        self.graph_leg = GraphLeg(reads, self.scorer, params)
        self.episode_leg = EpisodeLeg(reads, params.episodes)
        self._predicates: dict[str, tuple[float, list[str]]] = {}

    def forget(self, user_id: str) -> None:
        """Called after deletes, loads and imports: the user's predicate list and message
        index are read again on the next search."""
        self._predicates.pop(user_id, None)
        self.graph_leg.ends.forget(user_id)
        self.episode_leg.forget(user_id)

    def written(self, user_id: str, written: Written) -> None:
        """Called with what a write returned: its predicates join the user's predicate list
        and its messages the user's message index (each if cached)."""
        cached = self._predicates.get(user_id)
        if cached is not None and written.predicates:
            self._predicates[user_id] = (cached[0], sorted({*cached[1], *written.predicates}))
        if written.episodes:
            self.episode_leg.note(user_id, written.episodes)

    def _user_predicates(self, user_id: str) -> list[str]:
        cached = self._predicates.get(user_id)
        if cached is None or time.monotonic() - cached[0] > self.params.relations.refresh_s:
            cached = (time.monotonic(), sorted(self.reads.predicates(user_id)))
            self._predicates[user_id] = cached
        return cached[1]

    @blas_limited
    def search(
        self,
        query: str,
        user_id: str,
        limit: int,
        *,
        mode: Mode = "dual",
        include_invalid: bool = False,
        self_uid: str | None = None,
        rank_relations: bool = True,
        since: float | None = None,
        until: float | None = None,
        min_similarity: float | None = None,
        explain: bool = False,
    ) -> SearchResult:
        """`rank_relations=False` skips matching the query's words to predicates and the
        episode leg (one embedding instead of one per new word): enough when any fact about
        the named entities will do. `since` / `until` (epoch seconds) keep the messages
        written, and the facts that became true, in that window. `min_similarity` keeps the
        hits whose cosine similarity to the query is at least that (each hit's is read);
        `explain` says how each hit was found (`ScoredFact.explanation`)."""
        watch = _Stopwatch()
        parsed = Query.parse(query, self.max_query_words)
        facts_wanted = mode in FACT_MODES
        name_search = (
            self.graph_leg.start(parsed, user_id, self_uid) if mode in _EXPANDING else None
        )
        messages = self._start_index(user_id) if rank_relations else None
        words = parsed.relational if rank_relations else []
        param = as_param(self.scorer.embed(query))
        watch.lap("embed")
        if name_search is not None:
            self.graph_leg.read_vectors(name_search, user_id, param)
        semantic_read = self._start_vector_facts(user_id, param, include_invalid, mode)
        nearest = None
        if messages is not None and mode in ("dual", "episodes") and not _none(messages):
            k = self.params.episodes.dense_k
            nearest = BACKGROUND.submit(self.reads.vector_episodes, user_id, param, k)
        legs = _Legs()
        if name_search is not None:
            legs.graph = self._graph(
                parsed, user_id, words, param, name_search, include_invalid, watch
            )
        legs.semantic = semantic_read.result() if semantic_read is not None else []
        watch.lap("semantic")  # the wait for it, when the expansion took less time
        legs.index = messages.result() if messages is not None else None
        if legs.index is not None and nearest is not None:
            pool = self.params.episodes.pool
            legs.nearest = nearest.result()
            legs.episodes = self.episode_leg.rank(
                legs.index, parsed, legs.nearest, pool, since, until
            )
        watch.lap("episodes")
        ask = _Ask((since, until), min_similarity, explain, param)
        result = self._fuse(query, user_id, limit, legs, facts_wanted, ask)
        result.candidates = len(legs.graph.edges) + len(legs.semantic) + len(legs.episodes)
        watch.lap("fuse")
        result.timings_ms = watch.timings()
        return result

    def _graph(
        self,
        query: Query,
        user_id: str,
        words: list[str],
        param: list[float],
        name_search: NameReads,
        include_invalid: bool,
        watch: _Stopwatch,
    ) -> GraphFound:
        predicates = self._user_predicates(user_id)
        return self.graph_leg.search(
            query, user_id, words, param, name_search, predicates, include_invalid, watch.lap
        )

    def _start_vector_facts(
        self, user_id: str, param: list[float], include_invalid: bool, mode: Mode
    ) -> Future[list[tuple[Fact, float]]] | None:
        if mode not in ("dual", "semantic"):
            return None
        k = self.params.fusion.semantic_k
        return BACKGROUND.submit(
            self.reads.vector_facts, user_id, param, k, include_invalid=include_invalid
        )

    def _start_index(self, user_id: str) -> Future[LexicalIndex]:
        return BACKGROUND.submit(self.episode_leg.index, user_id)

    def _fuse(
        self,
        query: str,
        user_id: str,
        limit: int,
        legs: _Legs,
        facts_wanted: bool,
        ask: _Ask,
    ) -> SearchResult:
        """The legs fused; the facts the ranking and the paths need are read in one go."""
        ranked = self._ranked(limit, legs) if facts_wanted else {}
        walks = self.graph_leg.walks(legs.graph)
        facts = self._facts(user_id, [*ranked, *(u for _, uids in walks for u in uids)], legs)
        scored = self._scored(limit, ranked, facts, legs)
        scored = [s for s in scored if _in_window(s.fact, ask.window)]
        found, episodes = fuse_provenance(scored, legs.episodes, legs.index, self.params.episodes)
        found, episodes = found[:limit], episodes[:limit]
        if ask.explain:
            explain(found, episodes, self._found(limit, legs, ranked))
        read = ask.embedding if ask.min_similarity is not None or ask.explain else None
        cosines = (known([(f.uid, s) for f, s in legs.semantic]), known(legs.nearest))
        fill(self.reads, user_id, read, found, episodes, cosines)
        return SearchResult(
            query=query,
            user_id=user_id,
            facts=above(found, ask.min_similarity),
            episodes=above(episodes, ask.min_similarity),
            entities=_entities(legs.graph.anchors),
            anchors=[a.entity.name for a in legs.graph.anchors],
            paths=self.graph_leg.paths(legs.graph, walks, facts),
        )

    def _found(self, limit: int, legs: _Legs, ranked: dict[str, float]) -> Found:
        """What `explain` reads: the legs' orders as the fusion saw them."""
        params = self.params
        return Found(
            expansion=legs.graph.hits[: self._pool(limit)],
            semantic=legs.semantic,
            episodes=legs.episodes,
            anchors=legs.graph.anchors,
            fused=ranked,
            confidence=_confidence(legs.graph.hits, params.fusion),
            episode_vote=params.episodes.episode_vote,
        )

    def _ranked(self, limit: int, legs: _Legs) -> dict[str, float]:
        """The fact legs (expansion, semantic) fused: the best uids and their scores, best
        first."""
        hits, semantic = legs.graph.hits, legs.semantic
        params = self.params.fusion
        pool = self._pool(limit)
        fused = fuse_legs(
            [h.uid for h in hits[:pool]],
            [f.uid for f, _ in semantic],
            {h.uid for h in hits},
            _confidence(hits, params),
            params,
            trusted=_trusted(hits, params),
            bridges=legs.graph.bridges,
        )
        return {u: fused[u] for u in sorted(fused, key=lambda u: -fused[u])[:pool]}

    def _facts(self, user_id: str, uids: list[str], legs: _Legs) -> dict[str, Fact]:
        """The facts of `uids`: those the semantic leg read, the others read by uid."""
        facts = {f.uid: f for f, _ in legs.semantic}
        missing = list(dict.fromkeys(u for u in uids if u not in facts))
        if missing:
            facts.update({f.uid: f for f in self.reads.facts_by_uids(user_id, missing)})
        return facts

    def _pool(self, limit: int) -> int:
        """Facts fused for a result of `limit`."""
        return max(limit * self.params.fusion.pool_per_result, self.params.fusion.min_pool)

    def _scored(
        self, limit: int, ranked: dict[str, float], facts: dict[str, Fact], legs: _Legs
    ) -> list[ScoredFact]:
        """The fused facts with knowledge boosts (salience against the most mentioned of the
        legs' facts), best first, each relation once."""
        hits, semantic = legs.graph.hits, {f.uid for f, _ in legs.semantic}
        legs_facts = [facts[u] for u in semantic | ranked.keys() if u in facts]
        max_mentions = max((f.mentions for f in legs_facts), default=1)
        in_leg: dict[Leg, set[str]] = {
            "expansion": {h.uid for h in hits[: self._pool(limit)]},
            "semantic": semantic,
        }
        hop = {h.uid: h.edge.hop for h in hits}
        scored = []
        for uid, score in ranked.items():
            fact = facts.get(uid)
            if fact is None:
                continue
            boost = knowledge_boost(fact, max_mentions, self.params.fusion)
            which: list[Leg] = [leg for leg, uids in in_leg.items() if uid in uids]
            scored.append(ScoredFact(fact=fact, score=score * boost, hop=hop.get(uid), legs=which))
        scored.sort(key=lambda s: -s.score)
        return without_twins(scored)


_EXPANDING = ("dual", "expansion")


@dataclass(slots=True)
class _Legs:
    """What each leg found for one search."""

    graph: GraphFound = field(default_factory=GraphFound)
    semantic: list[tuple[Fact, float]] = field(default_factory=list)
    episodes: list[EpisodeHit] = field(default_factory=list)
    index: LexicalIndex | None = None
    nearest: list[tuple[str, float]] = field(default_factory=list)  # the messages' vector read


@dataclass(frozen=True, slots=True)
class _Ask:
    """What a search asks beyond its query: a time window, a similarity floor, explanations."""

    window: tuple[float | None, float | None]
    min_similarity: float | None
    explain: bool
    embedding: list[float]  # the query's


def _none(messages: Future[LexicalIndex]) -> bool:
    """The user's message index is loaded and empty (a graph of facts alone)."""
    return messages.done() and messages.exception() is None and not len(messages.result())


def _in_window(fact: Fact, window: tuple[float | None, float | None]) -> bool:
    since, until = window
    if since is None and until is None:
        return True
    when = fact.valid_at or fact.first_seen
    if when is None:
        return False
    stamp = when.timestamp()
    return (since is None or stamp >= since) and (until is None or stamp <= until)


def _confidence(hits: list[ExpansionHit], params: FusionParams) -> float:
    """How well the expansion's best path explains the question's words, and by how many ways
    its answers are reached, in [0, 1]: when no predicate matches them ("what pet ..." against
    LIKES, OWNS), its order is only the anchor's neighbourhood, and its vote counts for little."""
    top = max((h.support for h in hits), default=0.0)
    return min(1.0, max(0.0, top / params.confident_path))


def _trusted(hits: list[ExpansionHit], params: FusionParams) -> int:
    """How many of the expansion's hits it fully vouches for: when its best path clearly
    explains the question, those within `trusted_share` of it (the rest are mere neighbours
    of the anchor); otherwise all of them, whose vote then carries little weight anyway."""
    if _confidence(hits, params) < 1.0:
        return len(hits)
    return sum(1 for h in hits if h.score >= params.trusted_share * hits[0].score)


def _entities(anchors: list[Anchor]) -> list[ScoredEntity]:
    return [ScoredEntity(entity=a.entity, score=a.score) for a in anchors]


class _Stopwatch:
    def __init__(self) -> None:
        self._start = self._last = time.perf_counter()
        self._laps: dict[str, float] = {}

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self._laps[name] = (now - self._last) * _MS
        self._last = now

    def timings(self) -> dict[str, float]:
        return {**self._laps, "total": (self._last - self._start) * _MS}
