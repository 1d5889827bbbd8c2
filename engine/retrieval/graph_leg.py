"""The graph side of a search: anchors, the question's relations, the walk, the joins.

Order of work, so the slow parts overlap: the name reads (fulltext, and by key for the names
it may hold word for word) run while the query is embedded, the vector reads start as soon
as its vector is there, and the query's new words are embedded while they run (not those of
a name of several words it holds whole, which name no relation); the anchors settle from
both reads, and only then is the relation phrase (the question without the names it
mentions, see `terms.relation_phrase`) embedded, once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TypeVar

from engine.models import Entity, Fact, Path
from engine.normalize import predicate_words
from engine.retrieval.anchors import Anchor, find_anchors, with_near
from engine.retrieval.background import BACKGROUND
from engine.retrieval.expansion import expand
from engine.retrieval.kinds import RelationEnds
from engine.retrieval.known_edges import KnownEdges, KnownReads
from engine.retrieval.near import near_entities
from engine.retrieval.paths import Join, common_neighbours, joining_paths, may_share
from engine.retrieval.predicates import RelationMatch
from engine.retrieval.query import Query
from engine.retrieval.question import Question
from engine.retrieval.reach import ExpandedEdge, ExpansionHit, edge_of
from engine.retrieval.scorer import USERS_CACHED, PredicateScorer
from engine.retrieval.terms import name_keys, whole_span
from engine.retrieval.terms import words as words_of
from engine.retrieval.tuning import Tuning
from engine.store.reads import Reads

R = TypeVar("R")
Lap = Callable[[str], None]
Candidates = list[tuple[Entity, float]]  # entities a read offers as anchors, with its score
Walk = tuple[list[str], list[str]]  # node uids in walking order, the fact uids between them


@dataclass(slots=True)
class NameReads:
    """The reads started before the query is embedded."""

    by_name: Future[list[tuple[Entity, float]]]
    by_key: Future[dict[str, Entity]]
    me: Future[list[Entity]] | None = None
    generation: Future[str | None] | None = None  # of the user's graph, as the search began
    by_vector: Future[list[tuple[Entity, float]]] | None = None
    near: Future[dict[str, Entity]] | None = None  # the caller's names, by key
    _named: list[tuple[Entity, float]] | None = None

    def named(self) -> list[tuple[Entity, float]]:
        """The fulltext read's entities, then those named word for word it missed."""
        if self._named is None:
            found = self.by_name.result()
            seen = {entity.uid for entity, _ in found}
            keyed = self.by_key.result().values()
            self._named = found + [(e, 0.0) for e in keyed if e.uid not in seen]
        return self._named

    def self_entity(self) -> Entity | None:
        return next(iter(self.me.result()), None) if self.me is not None else None

    def near_entities(self) -> list[Entity]:
        found = self.near.result().values() if self.near is not None else []
        return list({entity.uid: entity for entity in found}.values())  # a name and its alias


@dataclass(slots=True)
class GraphFound:
    """What the graph side found for one search."""

    anchors: list[Anchor] = field(default_factory=list)
    hits: list[ExpansionHit] = field(default_factory=list)
    edges: list[ExpandedEdge] = field(default_factory=list)
    joins: list[Join] = field(default_factory=list)
    anchors_only: bool = False  # not walked: a graph of one-off relations

    @property
    def anchored(self) -> set[str]:
        """The anchors whose facts the fusion puts first: where nothing was walked from them."""
        return {a.entity.uid for a in self.anchors} if self.anchors_only else set()

    @property
    def bridges(self) -> set[str]:
        """Edges read on the way to better hits: passed over, not answers."""
        return {e.uid for e in self.edges} - {h.uid for h in self.hits}


class GraphLeg:
    def __init__(
        self,
        reads: Reads,
        scorer: PredicateScorer,
        params: Tuning,
    ) -> None:
        self.reads = reads
        self.scorer = scorer
        self.params = params
        self.ends = RelationEnds(reads, params.relations)
        walk = params.expansion
        self.known = KnownEdges(reads, walk.kept_node_edges, walk.kept_edges, walk.kept_after)

    def start(
        self, query: Query, user_id: str, self_uid: str | None, near: tuple[str, ...] = ()
    ) -> NameReads:
        """The reads that need no embedding: they run while the relations are prepared;
        `near`'s names are looked up as `entity()` looks one up."""
        anchors = self.params.anchors
        k = anchors.fulltext_k
        by_name = BACKGROUND.submit(self.reads.fulltext_entities, user_id, query.fulltext, k)
        keys = name_keys(query.text, anchors.key_words, anchors.key_runs)
        by_key = BACKGROUND.submit(self.reads.entities_by_keys, user_id, keys, aliases=False)
        me = None
        if self_uid and query.first_person:
            me = BACKGROUND.submit(self.reads.entities_by_uids, user_id, [self_uid])
        generation = BACKGROUND.submit(self.reads.store.generation, user_id)
        found = NameReads(by_name, by_key, me, generation)
        if near:
            found.near = BACKGROUND.submit(near_entities, self.reads, user_id, near)
        return found

    def read_vectors(
        self,
        name_search: NameReads,
        user_id: str,
        param: list[float],
        unless_named: Query | None = None,
    ) -> Future[Candidates]:
        """Start the vector read of entities: before the other legs' vector reads, which
        the database would otherwise serve first while the anchors wait. With
        `unless_named` (a graph written as triples: loaded, imported or added as facts), it
        is sent once the name reads are back, and not when they found a name that query
        holds word for word: the names nearest its meaning then anchored nothing more in
        2,499 of 2,500 questions of two benchmark families (results/dual_tail_reads.md). A
        chat graph's entities are its sentences' phrases ("Nate's pets"), named in other
        words."""
        k = self.params.anchors.vector_k
        read = functools.partial(self.reads.vector_entities, user_id, param, k)
        if unless_named is None:
            name_search.by_vector = BACKGROUND.submit(read)
        else:
            name_search.by_vector = _unless_named(name_search, unless_named.words, read)
        return name_search.by_vector

    def search(
        self,
        query: Query,
        user_id: str,
        words: list[str],
        param: list[float],
        name_search: NameReads,
        predicates: list[str],
        include_invalid: bool,
        lap: Lap,
        anchors_only: bool = False,
    ) -> GraphFound:
        """Anchors, then the walk along the question's relations, then the joins; the anchors
        alone when `anchors_only` (a graph of one-off relations, `user_relations.of_one_offs`:
        its relations are the sentences' own words, none is matched, walked or joined through)."""
        pending = name_search.by_vector or self.read_vectors(name_search, user_id, param)
        if anchors_only:
            anchors = self._anchors(query, name_search, pending.result(), set())
            found = GraphFound(anchors=anchors, anchors_only=True)
            lap("anchors")
            return found
        names = _name_words(query.words, name_search.named(), predicates)
        relational = [w for w in words if w not in names]
        self.scorer.learn(relational)
        by_vector = pending.result()
        by_words = self.scorer.match(relational, predicates)
        relation_words = by_words.relation_words()
        not_names = relation_words - self._values(
            user_id, name_search, by_words, relation_words, predicates
        )
        found = GraphFound(anchors=self._anchors(query, name_search, by_vector, not_names))
        question = Question.of(query, words, found.anchors, relation_words, self.params.names)
        phrase_vector = self.scorer.phrase(question.phrase) if question.phrase else None
        lap("anchors")
        named = self.scorer.match(
            list(question.unnamed),
            predicates,
            phrase_vector,
            question.siblings,
            question.kind,
            list(question.chain),
            question.rest,
        )
        # the relations that may answer for the asked kind, and whose twins the walk needs
        candidates = named.best_relations(self.params.relations.kind_relations)
        ends = self.ends.ends(user_id, named, candidates, predicates)
        match = named.with_ends(ends)
        lap("relations")
        expansion = expand(
            self._walk_reads(user_id, name_search),
            user_id,
            found.anchors,
            match,
            predicates,
            self.params.expansion,
            include_invalid,
            ends.twins,
        )
        uids = [a.entity.uid for a in found.anchors]
        found.edges = expansion.edges
        found.joins = common_neighbours(uids, found.edges, match.single())
        if not found.joins and may_share(uids, expansion.whole):
            found.edges = found.edges + self._shared(user_id, uids, found.edges, include_invalid)
            found.joins = common_neighbours(uids, found.edges, match.single())
        sure = self.params.fusion.confident_path
        found.hits = _joins_first(expansion.hits, found.joins, len(uids), sure)
        lap("expansion")
        return found

    def _walk_reads(self, user_id: str, name_search: NameReads) -> Reads:
        """The reads of the walk: from the nodes kept of the user's graph where they can be."""
        generation = name_search.generation.result() if name_search.generation else None
        user = self.known.at(user_id, generation)
        return self.reads if user is None else KnownReads(self.reads, self.known, user_id, user)

    def _shared(
        self, user_id: str, uids: list[str], read: list[ExpandedEdge], include_invalid: bool
    ) -> list[ExpandedEdge]:
        """The edges to the anchors' shared neighbours that the walk did not read: asked for
        when the walk met no node next to two anchors (from a hub anchor it reads only the
        relations the question names)."""
        settings = self.params.expansion
        shared = self.reads.shared_neighbours(
            user_id, uids, scan=settings.anchor_scan, total=settings.max_edges,
            limit=settings.shared_neighbours, include_invalid=include_invalid,
        )  # fmt: skip
        seen = {e.uid for e in read}
        return [edge_of(n.near, n, 1) for n in shared if n.uid not in seen]

    def _values(
        self,
        user_id: str,
        name_search: NameReads,
        named: RelationMatch,
        relation_words: set[str],
        predicates: list[str],
    ) -> set[str]:
        """The `relation_words` that name an entity the relation they name leads to
        ("hinduism", a RELIGION): that entity is what the question is about, not the relation."""
        asked: dict[str, dict[str, str]] = {}  # relation -> {uid: the word naming it}
        for entity, _ in name_search.named() if relation_words else []:
            name = words_of(entity.name)
            relation = named.named_by(name[0]) if len(name) == 1 else None
            if relation is not None and name[0] in relation_words:
                asked.setdefault(relation, {})[entity.uid] = name[0]
        values = set()
        for relation, named_uids in asked.items():
            found = self.ends.at_end(user_id, list(named_uids), relation, predicates)
            values |= {named_uids[uid] for uid in found}
        return values

    def _anchors(
        self,
        query: Query,
        name_search: NameReads,
        by_vector: list[tuple[Entity, float]],
        relation_words: set[str],
    ) -> list[Anchor]:
        settings = self.params.anchors
        named = find_anchors(
            query,
            name_search.named(),
            by_vector,
            settings,
            self.params.names,
            name_search.self_entity(),
            relation_words,
        )
        return with_near(named, name_search.near_entities(), settings)

    def walks(self, found: GraphFound) -> list[Walk]:
        """The walks joining the anchors: through their common neighbours first, else the
        shortest path between two anchors within what the expansion read."""
        if len(found.anchors) < 2:
            return []
        expansion = self.params.expansion
        walks = [j.walk() for j in found.joins[: expansion.join_paths]]
        if not walks:
            uids = [a.entity.uid for a in found.anchors]
            walks = joining_paths(uids, found.edges, expansion.join_hops)
        return walks

    @staticmethod
    def paths(found: GraphFound, walks: list[Walk], facts: Mapping[str, Fact]) -> list[Path]:
        """The `walks` with their entities' names and their `facts` (read by the caller
        with the facts it ranks: one read)."""
        if not walks:
            return []
        names = {a.entity.uid: a.entity.name for a in found.anchors}
        names |= {e.far: e.far_name for e in found.edges}
        return [
            Path(entities=[names.get(n, n) for n in nodes], facts=[facts[u] for u in uids])
            for nodes, uids in walks
            if all(u in facts for u in uids)
        ]


def _name_words(
    tokens: tuple[str, ...], by_name: list[tuple[Entity, float]], predicates: list[str]
) -> set[str]:
    """The words of the names of several words that the query holds whole ("Ruveask
    Fozoth"): they name an entity, not a relation, unless a relation's name has them ("Band
    Member"). Every question names something new, and its words were a model pass of their
    own."""
    found: set[str] = set()
    for entity, _ in by_name:
        name = words_of(entity.name)
        if len(name) > 1 and whole_span(name, tokens):
            found.update(name)
    return found - _relation_names(tuple(predicates)) if found else found


def _unless_named(
    names: NameReads, query_words: tuple[str, ...], read: Callable[[], Candidates]
) -> Future[Candidates]:
    """`read` sent once the name reads are back, unless they found a name `query_words` hold
    whole (no candidate then)."""
    found: Future[Candidates] = Future()

    def decide(_: object) -> None:
        try:
            held = _held_whole(query_words, names.named())
        except Exception as exc:  # the anchors report the name reads' trouble
            found.set_exception(exc)
            return
        if held:
            found.set_result([])
        else:
            _chain(BACKGROUND.submit(read), found)

    names.by_name.add_done_callback(lambda _: names.by_key.add_done_callback(decide))
    return found


def _held_whole(query_words: tuple[str, ...], named: Candidates) -> bool:
    """Whether the query holds one of the `named` entities' names or aliases word for word."""
    return any(
        whole_span(words_of(name), query_words)
        for entity, _ in named
        for name in (entity.name, *entity.aliases)
    )


def _chain(source: Future[R], target: Future[R]) -> None:
    """`target` done with `source`'s result or error, once `source` is."""

    def copy(done: Future[R]) -> None:
        error = done.exception()
        if error is not None:
            target.set_exception(error)
        else:
            target.set_result(done.result())

    source.add_done_callback(copy)


@functools.lru_cache(maxsize=USERS_CACHED)  # a user's predicates stay from search to search
def _relation_names(predicates: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for p in predicates for w in words_of(predicate_words(p)))


def _joins_first(
    hits: list[ExpansionHit], joins: list[Join], anchors: int, sure: float
) -> list[ExpansionHit]:
    """The facts joining a common neighbour to the anchors come first: the node connected
    to every anchor the question names is what it asks for, however few of its words the
    joining relations explain ("who in X comes from Y"), so such a join makes the expansion
    `sure` (its support)."""
    if not joins:
        return hits
    top = hits[0].score if hits else 0.0
    first: dict[str, ExpansionHit] = {}
    for join in joins:
        for edge in join.edges:
            if edge.uid not in first:
                score = top + join.score
                support = max(score, sure) if len(join.edges) == anchors else score
                first[edge.uid] = ExpansionHit(edge.uid, score, edge, support, len(join.edges))
    return list(first.values()) + [h for h in hits if h.uid not in first]
