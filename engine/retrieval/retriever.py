"""The dual retriever: anchored expansion along the question's relation paths (one to three
hops) + vector similarity over facts, fused; nodes joining several anchors come first."""

from __future__ import annotations

import functools
import itertools
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Literal

from engine.embedding import Embedder, as_param
from engine.models import Fact, Premise, ScoredEntity, SearchResult
from engine.normalize import entity_key
from engine.retrieval.anchors import Anchor
from engine.retrieval.blas import blas_limited
from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.episodes import Found as EpisodesFound
from engine.retrieval.episodes import Started as EpisodesStarted
from engine.retrieval.explain import Found, explain
from engine.retrieval.fusion import confidence, pool_size
from engine.retrieval.fusion import ranked as fused
from engine.retrieval.fusion import scored as boosted
from engine.retrieval.graph_leg import GraphFound, GraphLeg, NameReads
from engine.retrieval.premise import PremiseCheck, plan
from engine.retrieval.provenance import clear_matches, fuse_provenance
from engine.retrieval.query import Query
from engine.retrieval.replies import replies_to, with_replies
from engine.retrieval.scorer import PredicateScorer
from engine.retrieval.semantic import SemanticLeg
from engine.retrieval.semantic import Started as SemanticStarted
from engine.retrieval.similarity import above, fill, known
from engine.retrieval.stored_relations import StoredRelations
from engine.retrieval.tuning import Tuning
from engine.retrieval.unknown import about_the_user, judged_names, unknown_names
from engine.retrieval.user_relations import Relations, UserRelations, of_one_offs
from engine.store.base import Written
from engine.store.message_index import MessageIndexes
from engine.store.reads import Reads

Mode = Literal["dual", "expansion", "semantic", "episodes"]
MODES: tuple[Mode, ...] = ("dual", "expansion", "semantic", "episodes")
FACT_MODES = ("dual", "expansion", "semantic")
WALKING_MODES = ("dual", "expansion")  # the modes whose graph leg walks from anchors
Window = tuple[float | None, float | None]  # since, until (epoch seconds)
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
        params: Tuning,
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
        self.episode_leg = EpisodeLeg(reads, params.episodes, MessageIndexes(reads.store))
        self.semantic_leg = SemanticLeg(reads, params.fusion)
        self.premise = PremiseCheck(reads, self.scorer.embed, params.episodes)
        self.users = UserRelations(reads, params.relations.refresh_s, params.relations.cached_users)

        def model() -> str:
            return f"{embedder.model_name}@{embedder.dimension}"

        self.relations = StoredRelations(reads.store, self.scorer, model)

    def forget(self, user_id: str) -> None:
        """Called after deletes, loads and imports: the user's predicate list and message
        index are read again on the next search."""
        self.users.forget(user_id)
        self.graph_leg.ends.forget(user_id)
        self.episode_leg.forget(user_id)

    def written(self, user_id: str, written: Written) -> None:
        """Called with what a write returned: its predicates join the user's predicate list
        and its messages the user's message index (each if cached)."""
        self.users.written(user_id, written)
        if written.episodes:
            self.episode_leg.note(user_id, written.episodes)

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
        window: Window = (None, None),
        min_similarity: float | None = None,
        explain: bool = False,
        check_premise: bool = False,
        as_of: float | None = None,
        near: tuple[str, ...] = (),
    ) -> SearchResult:
        """`rank_relations=False` skips matching the query's words to predicates and the
        episode leg (one embedding instead of one per new word): enough when any fact about
        the named entities will do. `window` (since, until: epoch seconds) keeps the
        messages written, and the facts that became true, in it; `as_of` (epoch seconds) the
        facts not ended by then (with `include_invalid`). `min_similarity` keeps the
        hits whose cosine similarity to the query is at least that (each hit's is read);
        `explain` says how each hit was found (`ScoredFact.explanation`); `check_premise` asks
        whose memories a query naming a speaker is about (`engine.retrieval.premise`);
        `near` names entities that anchor the graph leg beside those the query names."""
        watch = _Stopwatch()
        parsed = Query.parse(query, self.max_query_words)
        started = self._start(parsed, user_id, self_uid, mode, rank_relations, near)
        vector = as_param(self.scorer.embed(" ".join([query, *near])))  # what it is about too
        watch.lap("embed")
        self._start_vector_reads(started, parsed, user_id, vector, include_invalid, mode)
        legs = _Legs(names_searched=started.names is not None)
        if started.names is not None and started.relations is not None:
            words = parsed.relational if rank_relations else []
            legs.graph = self._finish_graph(
                started.names, started.relations, parsed, user_id, words, vector,
                include_invalid, watch, skips_one_offs=mode == "dual",
            )  # fmt: skip
        legs.semantic = SemanticLeg.finish(started.semantic)
        watch.lap("semantic")  # the wait for it, when the expansion took less time
        legs.messages = self.episode_leg.finish(started.episodes, parsed, *window)
        if check_premise and legs.names_searched:  # whose memories the query asks about
            check = plan(parsed.words, legs.messages.index)
            legs.premise = self.premise.start(check, user_id, include_invalid) if check else None
        watch.lap("episodes")
        ask = _Ask(window, min_similarity, explain, vector, self_uid, parsed.first_person, as_of)
        result = self._fuse(query, user_id, limit, legs, mode in FACT_MODES, ask)
        result.candidates = len(legs.graph.edges) + len(legs.semantic) + len(legs.messages.hits)
        watch.lap("fuse")
        result.timings_ms = watch.timings()
        result.unknown_names += _not_held(near, started.names, result.unknown_names)
        if started.relations is not None:
            self.users.refresh_if_stale(user_id)
        return result

    def _start(
        self,
        query: Query,
        user_id: str,
        self_uid: str | None,
        mode: Mode,
        rank_relations: bool,
        near: tuple[str, ...],
    ) -> _Started:
        """The reads that need no vector: they run while the query is embedded."""
        started = _Started()
        if mode in WALKING_MODES:
            started.names = self.graph_leg.start(query, user_id, self_uid, near)
        if rank_relations:
            started.episodes = self.episode_leg.start(user_id)
        if mode in WALKING_MODES:  # read on the user's first search, while the others run
            started.relations = self.users.of(user_id)
        return started

    def _finish_graph(
        self,
        names: NameReads,
        relations: Relations,
        query: Query,
        user_id: str,
        words: list[str],
        vector: list[float],
        include_invalid: bool,
        watch: _Stopwatch,
        skips_one_offs: bool,
    ) -> GraphFound:
        """The graph leg: anchors, the question's relations, the walk, the joins; the last
        three skipped in a graph of one-off relations when `skips_one_offs` (the semantic and
        episode legs run beside it), and the relations' stored vectors then not read."""
        anchors_only = skips_one_offs and of_one_offs(relations, self.params.expansion)
        if not anchors_only and not relations.vectors_loaded:
            relations.vectors_loaded = True
            self.relations.load(user_id, relations.predicates)
        found = self.graph_leg.search(
            query, user_id, words, vector, names, relations.predicates, include_invalid,
            watch.lap, anchors_only,
        )  # fmt: skip
        self.relations.store_if_lacking(user_id, relations.predicates)
        return found

    def _start_vector_reads(
        self,
        started: _Started,
        query: Query,
        user_id: str,
        vector: list[float],
        invalid: bool,
        mode: Mode,
    ) -> None:
        """The reads that need the query's vector, the anchors' first: the database would
        otherwise serve the other legs' first while the anchors wait. In a graph written as
        triples, the anchors' is not sent when the query names an entity word for word."""
        if started.names is not None and started.relations is not None:
            triples = None if started.relations.all_said else query
            self.graph_leg.read_vectors(started.names, user_id, vector, unless_named=triples)
        if mode in ("dual", "semantic"):
            started.semantic = self.semantic_leg.start(user_id, vector, invalid)
        if started.episodes is not None and mode in ("dual", "episodes"):
            self.episode_leg.start_nearest(started.episodes, user_id, vector)

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
        fusion, hits = self.params.fusion, legs.graph.hits
        ranked = (
            fused(limit, hits, legs.semantic, legs.graph.bridges, fusion) if facts_wanted else {}
        )
        walks = self.graph_leg.walks(legs.graph)
        facts = self._facts(user_id, [*ranked, *(u for _, uids in walks for u in uids)], legs)
        scored = boosted(limit, ranked, facts, hits, legs.semantic, fusion, legs.graph.anchored)
        scored = [s for s in scored if _in_window(s.fact, ask.window, ask.as_of)]
        messages = legs.messages
        shown = itertools.chain((h.uid for h in messages.hits), *(s.fact.episodes for s in scored))
        self.episode_leg.read_texts(user_id, messages, shown)
        cosines = (known([(f.uid, s) for f, s in legs.semantic]), known(messages.nearest))
        clear = clear_matches(*cosines, self.params.episodes)
        found, episodes = fuse_provenance(
            scored, messages.hits, messages.index, self.params.episodes, ask.window, clear
        )
        replies = replies_to(episodes, messages.index, limit, ask.window)
        self.episode_leg.read_texts(user_id, messages, replies.values())
        episodes = with_replies(episodes, messages.index, replies, limit)
        facts_named = (name for s in found for name in (s.fact.subject, s.fact.object))
        named = itertools.chain(_names(legs.graph.anchors), facts_named)
        lookup = None if legs.names_searched else functools.partial(self._names_of, user_id)
        unknown = unknown_names(query, messages.index, named, lookup)
        if unknown and _only_strangers(query, unknown, legs, ask.self_uid):
            found = about_the_user(found, ask.self_uid, _of_the_user(ask, legs))
        found, episodes = found[:limit], episodes[:limit]
        if ask.explain:
            explain(found, episodes, self._found(limit, legs, ranked))
        read = ask.embedding if ask.min_similarity is not None or ask.explain else None
        fill(self.reads, user_id, read, found, episodes, cosines)
        return SearchResult(
            query=query,
            user_id=user_id,
            facts=above(found, ask.min_similarity),
            episodes=above(episodes, ask.min_similarity),
            entities=_entities(legs.graph.anchors),
            anchors=[a.entity.name for a in legs.graph.anchors],
            paths=self.graph_leg.paths(legs.graph, walks, facts),
            unknown_names=unknown,
            premise=legs.premise.result() if legs.premise else None,
        )

    def _names_of(self, user_id: str, words: list[str]) -> list[str]:
        """The names and aliases of the user's entities holding any of `words` (a search
        that did not look the query's names up): one read, then one a word when it was
        full."""
        k = self.params.anchors.fulltext_k
        found = self.reads.fulltext_entities(user_id, words, k)
        if len(found) == k and len(words) > 1:
            found += [hit for w in words for hit in self.reads.fulltext_entities(user_id, [w], k)]
        return [name for entity, _ in found for name in (entity.name, *entity.aliases)]

    def _found(self, limit: int, legs: _Legs, ranked: dict[str, float]) -> Found:
        """What `explain` reads: the legs' orders as the fusion saw them."""
        params = self.params
        return Found(
            expansion=legs.graph.hits[: pool_size(limit, params.fusion)],
            semantic=legs.semantic,
            episodes=legs.messages.hits,
            anchors=legs.graph.anchors,
            fused=ranked,
            confidence=confidence(legs.graph.hits, params.fusion),
            episode_vote=params.episodes.episode_vote,
        )

    def _facts(self, user_id: str, uids: list[str], legs: _Legs) -> dict[str, Fact]:
        """The facts of `uids`: those the semantic leg read, the others read by uid."""
        facts = {f.uid: f for f, _ in legs.semantic}
        missing = list(dict.fromkeys(u for u in uids if u not in facts))
        if missing:
            facts.update({f.uid: f for f in self.reads.facts_by_uids(user_id, missing)})
        return facts


def _not_held(near: tuple[str, ...], names: NameReads | None, known: list[str]) -> list[str]:
    """The `near` names the user's memory holds no entity of."""
    held = names.near.result() if names is not None and names.near is not None else {}
    return [n for n in near if entity_key(n) not in held and n not in known]


def _only_strangers(query: str, unknown: list[str], legs: _Legs, self_uid: str | None) -> bool:
    """Whether the query names no one known but the user: no other entity anchored or, when
    its names were not looked up, every name it has unknown."""
    if legs.names_searched:
        return all(a.entity.uid == self_uid for a in legs.graph.anchors)
    return set(unknown) == set(judged_names(query))


def _of_the_user(ask: _Ask, legs: _Legs) -> bool:
    """The query speaks of the user: in the first person, or by the user's own entity."""
    return ask.first_person or any(a.entity.uid == ask.self_uid for a in legs.graph.anchors)


def _names(anchors: list[Anchor]) -> list[str]:
    return [name for a in anchors for name in (a.entity.name, *a.entity.aliases)]


@dataclass(slots=True)
class _Started:
    """The reads a search started, each finished by its leg: the graph leg's name reads, the
    message index, the vector reads of facts and messages."""

    names: NameReads | None = None
    relations: Relations | None = None  # the user's, when the names are read
    episodes: EpisodesStarted | None = None
    semantic: SemanticStarted | None = None


@dataclass(slots=True)
class _Legs:
    """What each leg found for one search."""

    names_searched: bool = False  # the graph leg ran: the query's names were looked up
    graph: GraphFound = field(default_factory=GraphFound)
    semantic: list[tuple[Fact, float]] = field(default_factory=list)
    messages: EpisodesFound = field(default_factory=EpisodesFound)
    premise: Future[Premise | None] | None = None  # the check's read, while the legs fuse


@dataclass(frozen=True, slots=True)
class _Ask:
    """What a search asks beyond its query: a time window, a similarity floor, explanations,
    and who the user is."""

    window: tuple[float | None, float | None]
    min_similarity: float | None
    explain: bool
    embedding: list[float]  # the query's
    self_uid: str | None  # the entity standing for the user
    first_person: bool  # the query speaks in the first person ("my", "I")
    as_of: float | None = None  # a fact ended by then is left out


def _in_window(
    fact: Fact, window: tuple[float | None, float | None], as_of: float | None = None
) -> bool:
    if as_of is not None and fact.invalid_at is not None and fact.invalid_at.timestamp() <= as_of:
        return False  # no longer true then
    since, until = window
    if since is None and until is None:
        return True
    when = fact.valid_at or fact.first_seen
    if when is None:
        return False
    stamp = when.timestamp()
    return (since is None or stamp >= since) and (until is None or stamp <= until)


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
