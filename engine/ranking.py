"""Every number that shapes a search, in one frozen object: `RankingParams`.

Each field says why it has its value and what chose it: a benchmark (`make bench-metaqa`:
MetaQA dev; `make bench-chat`: LoCoMo evidence recall; `make bench-hub`: the synthetic
hub-heavy graphs; see benchmarks/README.md), a published default, or "by hand" where no
sweep was run. `Settings.ranking` holds one, so a user can change any of them:

    Memory(ranking={"fusion": {"rrf_k": 50}})
    GRAPHMEM_RANKING__FUSION__RRF_K=50

A change of a default must keep tests/integration/test_golden_ranking.py passing or update its
golden file on purpose (`GRAPHMEM_UPDATE_GOLDEN=1`).
"""

from __future__ import annotations

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass

# validated like settings (an unknown name or a value out of range is an error), read like
# plain dataclasses: the walk reads some of them once per edge
_STRICT = ConfigDict(extra="forbid")


@dataclass(frozen=True, slots=True, config=_STRICT)
class AnchorParams:
    """Which of the entities a query names or means become anchors (`retrieval.anchors`)."""

    # anchors kept at most: a question names a few things (by hand)
    limit: int = Field(default=5, ge=1)
    # how surely the query must name an entity (`NameParams`) to anchor on it (by hand)
    min_score: float = Field(default=0.5, ge=0, le=1)
    # keep anchors scoring at least this share of the best one (by hand)
    relative: float = Field(default=0.75, ge=0, le=1)
    # ... or this share, for a name the query has word for word beside the others ("Peru";
    # by hand, on bench-hub's two-anchor questions)
    relative_exact: float = Field(default=0.5, ge=0, le=1)
    # candidates the fulltext index offers: enough for a common word in many names (by hand)
    fulltext_k: int = Field(default=100, ge=1)
    # candidates the entity vector index offers (by hand)
    vector_k: int = Field(default=10, ge=1)
    # the cosine an entity needs to be an anchor by meaning alone (by hand)
    vector_min_cos: float = Field(default=0.65, ge=-1, lt=1)
    # when nothing reaches min_score, the best candidate down to this ("22", "defender"; by
    # hand, on bench-hub)
    fallback_min_score: float = Field(default=0.3, ge=0, le=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class NameParams:
    """How surely a query names an entity (`retrieval.terms.name_span`)."""

    # a word matched with a small typo counts this much of an exact one: an exact name must
    # beat a near one (by hand)
    typo_credit: float = Field(default=0.8, ge=0, le=1)
    # words shorter than this match exactly or not at all: "cat" is not "car" (by hand)
    typo_min_chars: int = Field(default=4, ge=1)
    # a near word differs in length by at most this many characters (by hand)
    typo_max_gap: int = Field(default=2, ge=0)
    # ... and is at least this alike (Indel similarity: 2 * common characters / both lengths)
    typo_similarity: float = Field(default=0.8, ge=0, le=1)
    # a name whose words the query has out of order ("Men Without Women" in "Women Without
    # Men ...") counts this much (by hand)
    shuffled: float = Field(default=0.9, ge=0, le=1)
    # a stopword of a name ("The", "of") found in the query counts this much (by hand)
    stopword_credit: float = Field(default=0.3, ge=0, le=1)
    # specificity 1 - exp(-letters / this): "Up" is weak evidence, "Grégoire Colin" strong
    # (by hand)
    specific_chars: float = Field(default=4.0, gt=0)
    # the letters of evidence one CJK character gives: about a short Latin word (by hand)
    cjk_chars: int = Field(default=3, ge=1)
    # ... and a number at least this many: a value the question asks about ("number 9", "age
    # 7") is no weaker evidence than a short word (bench-hub: "9" was never an anchor)
    number_chars: int = Field(default=3, ge=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class RelationParams:
    """How well a path of relations explains a question (`retrieval.predicates`)."""

    # the cost of each hop past the first: a longer path wins only by explaining more words
    # (by hand; bench-metaqa 2-hop)
    extra_hop_cost: float = Field(default=0.05, ge=0)
    # a sibling cue ("co-wrote", "same") rewards the anchor's first relation out and back:
    # twice a hop's cost (bench-metaqa 2-hop: 0.914 -> 0.930)
    sibling_bonus: float = Field(default=0.1, ge=0)
    # the extra cost of going out and back along one relation with no sibling cue (by hand)
    back_cost: float = Field(default=0.0, ge=0)
    # a path explaining two nouns a question chains to its name in reverse ("the husband of
    # X's daughter" is not the daughter of X's husband), or by one hop, or such a noun after
    # another relation word, loses this share of the lesser one's evidence (1: a word
    # explained out of order is not explained; paired against 0 on bench-hub, MetaQA, LoCoMo
    # and a probe of possessive chains, none lower; 0 = blind to order)
    order_cost: float = Field(default=1.0, ge=0)
    # the weight of the relation phrase beside the words (bench-hub: 0.2-0.3 chose the right
    # path most often; 0 = words only)
    phrase_weight: float = Field(default=0.3, ge=0)
    # relations tried as the next step of a path: the best single ones (latency, by hand)
    continuations: int = Field(default=12, ge=1)
    # ... and as the steps after it, in what a path can still reach (latency, by hand)
    later_steps: int = Field(default=4, ge=1)
    # "where" asks for a place, one of the question's words at this share of its weight: a
    # relation leading to an organisation may answer it too ("where does X work": the
    # employer). bench-hub, "where" no word / 1 / 0.75: hits@10 of organisations' 2-hop hub
    # 0.94 / 1.00 / 1.00, companies' 2-hop leaf 0.95 / 1.00 / 1.00, music's 0.86 / 0.89 /
    # 0.88; hits@1 of the 1-hop of the first two 0.89 / 0.82 / 0.86 and 0.91 / 0.85 / 0.89
    # (hits@10 1.00); 0.5 lost the gains
    where_weight: float = Field(default=0.75, ge=0)
    # a word clearly names a relation ("directed", "actors") at this similarity to one ...
    relation_word_sim: float = Field(default=0.5, ge=-1, le=1)
    # ... and this much above its average relation (by hand); such a word is not an anchor
    relation_word_specificity: float = Field(default=0.15, ge=0)
    # facts of a relation read to tell what kind of entity it leads to, once per user and
    # relation until `refresh_s` (a sample: a bound, not a tuning)
    kind_sample: int = Field(default=32, ge=1)
    # ... picked from this many, those joining two entities not met yet first: facts are
    # stored one entity's after another (MetaQA: 32 STARRED_ACTORS facts were 13 films, none
    # with a language, so no path through a film seemed to reach one; a bound)
    kind_read: int = Field(default=256, ge=1)
    # relations, the best single ones first, that may answer for the kind a question asks
    # for through what they lead to (latency, a bound)
    kind_relations: int = Field(default=24, ge=1)
    # a relation explains the asked kind by what it leads to at this share of what the
    # kind's own relation earns: a sample of ends is weaker evidence than a name (bench-hub,
    # paired: 1.0 lost organisations' "in which city is the society X belongs to based" to
    # X's own LIVES_IN, 2-hop leaf 1.00 -> 0.88; 0.8 kept it and every families gain)
    kind_by_ends: float = Field(default=0.8, ge=0, le=1)
    # a relation's sampled facts checked for a twin storing them reversed ("X PARENTS Y",
    # "Y CHILDREN X"; a bound: one read for every relation a search needs, once per user)
    twin_sample: int = Field(default=8, ge=1)
    # ... a twin when at least this share of them are stored reversed under its name (not all:
    # a fact may lack its mirror) ...
    twin_share: float = Field(default=0.9, gt=0, le=1)
    # ... and at least this many: two people who once liked and once helped each other are
    # not a relation and its twin (by hand)
    twin_min_facts: int = Field(default=3, ge=1)
    # a sampled entity with more mentions than this is not read for the relations it has (the
    # read lists every fact of a node): the next steps from that end of the relation then stay
    # unlimited (a bound on a read made once per user and relation)
    follows_read: int = Field(default=500, ge=1)
    # word, relation phrase and relation vectors kept in memory (a bound, not a tuning)
    cached_vectors: int = Field(default=50_000, ge=1)
    # the user's predicate list is read again after this many seconds: how stale another
    # process's writes may look (this process's own writes update it at once)
    refresh_s: float = Field(default=30.0, ge=0)


@dataclass(frozen=True, slots=True, config=_STRICT)
class ExpansionParams:
    """The walk from the anchors along the question's relations (`retrieval.expansion`)."""

    # the longest relation path walked (3: "where was the coach of X's club born"; bench-hub
    # and bench-metaqa 3-hop)
    depth: int = Field(default=3, ge=1, le=3)
    # edges of any type read around a hub anchor, as context (a bound)
    fanout: int = Field(default=50, ge=1)
    # edges read in all by one search, every hop together (a bound)
    max_edges: int = Field(default=4000, ge=1)
    # edges of the question's relation types read per node past the anchors: bounds a hub's
    # cost (a bound)
    hub_scan: int = Field(default=500, ge=1)
    # ... and per anchor: all members of a hub the question asks about (a group, a country)
    anchor_scan: int = Field(default=2000, ge=1)
    # of a hub met past the anchors, the edges to its most mentioned neighbours kept: an
    # answer through it is one of hundreds, and a result shows ten (latency; bench-hub)
    hub_sample: int = Field(default=50, ge=1)
    # ... and at the last hop, where they are answers only: a result shows ten (paired, 10
    # against 50: MetaQA 2- and 3-hop hits identical, bench-hub equal or higher, p95 -2..-5 ms)
    last_hop_sample: int = Field(default=10, ge=1)
    # nodes read at a hop past the anchors at most, the most promising first: the clubs of a
    # position's 659 players come from 250 of them (football at 16k facts, 2-hop from a hub:
    # p95 136 -> 62 ms, hits identical; paired: bench-hub, MetaQA 2/3-hop, LoCoMo identical)
    frontier_nodes: int = Field(default=250, ge=1)
    # a node with more edges is a hub: read by type, and a path through it counts for less
    # (bench-chat: a chat's speaker; dual 0.284 -> 0.336 on three conversations)
    hub_degree: int = Field(default=100, ge=1)
    # ordinary nodes are read whole while their edges fit in this (latency, by hand)
    open_edges: int = Field(default=150, ge=1)
    # relation paths followed past each hop at most (by hand)
    beam: int = Field(default=6, ge=1)
    # a path goes on while a continuation may come this close to the best path walked: "the
    # directors of the films starred by X" explains little more with DIRECTED_BY than without
    # (bench-metaqa 2-hop: 0.822 -> 0.914); for a question asking for a kind of thing, so do
    # the paths this close to the best ("which region does the leader of X come from": paired,
    # bench-hub politics 3-hop 0.75 -> 0.85, organisations 0.89 -> 0.91, the rest and MetaQA
    # hits identical)
    beam_slack: float = Field(default=0.06, ge=0)
    # ... if its next step explains more than this that the path does not (beyond a hop's
    # cost), or goes back along the anchor's relation (siblings: "the actor of X also starred
    # in which films" names no second relation): a step explaining nothing new is not walked
    # for the slack (paired: bench-hub hits@10 equal or higher, hub-start p95 -3..-8 ms;
    # MetaQA 2-hop hits 0.950 -> 0.953, recall@10 0.772 -> 0.783, 3-hop hits 0.860 -> 0.857)
    beam_gain: float = Field(default=0.001)
    # ... and while its best continuation comes this close to the best path's: the films of
    # the same release year as X are not walked on for the genres of X's directors' films
    # (paired: hits identical on MetaQA 2/3-hop and bench-hub, p50 -0.5..-1.5 ms; LoCoMo
    # recall 0.705 -> 0.706)
    beam_margin: float = Field(default=0.1, ge=0)
    # a hub is read by the next relations within this share of the best (by hand)
    step_share: float = Field(default=0.7, ge=0, le=1)
    # relation types read from a hub at most: 3 -> 2 read a third less and lost nothing
    # (paired: bench-hub hits equal or higher on every kind, p95 -4..-20 ms; MetaQA hits
    # identical, 3-hop p95 76 -> 63 ms; LoCoMo dual 0.705 -> 0.706); 1 lost bench-hub's
    # 2-hop leaf questions (0.89 -> 0.80)
    typed_steps: int = Field(default=2, ge=1)
    # ... and 1 when this many hubs or more are read at once: the second relation doubled a
    # wide frontier's read for alternatives its many paths rarely need (paired: hits identical
    # on MetaQA, bench-hub and 300 LoCoMo questions; p95 -1..-4 ms)
    wide_frontier: int = Field(default=100, ge=1)
    # ... in this many reads, the next types asked for those it lacks (by hand, bench-hub)
    typed_rounds: int = Field(default=3, ge=1)
    # relations sampled from a hub anchor before it is read by type (latency, by hand)
    probe_relations: int = Field(default=6, ge=1)
    # ... neighbours sampled along each (latency, by hand)
    probe_size: int = Field(default=3, ge=1)
    # of the answers of one relation path, one reached by a single path scores this much less
    # than the one reached by the most (by hand; an additive boost was tried and lost
    # bench-hub's hub-start 2-hop). Between paths it counts only towards the leg's confidence:
    # as a factor of the path's score (1 + this * ln n) it let a society's hundred members
    # outrank its one founder (with `per_path`, paired against that factor: bench-hub
    # organisations 2-hop leaf 0.91 -> 0.99, 3-hop 0.82 -> 0.87, football 2-hop leaf 0.87 ->
    # 0.96; MetaQA 2-hop 0.937 -> 0.950, 3-hop 0.833 -> 0.853)
    many_paths: float = Field(default=0.1, ge=0)
    # the hits of one relation path ranked on their score: half of a ten-fact result ...
    per_path: int = Field(default=5, ge=1)
    # ... its later ones at this share of it, so the best of the next paths come before them
    # when nearly as good (against 0, a hard cut: bench-hub football 2-hop leaf and
    # organisations 3-hop +0.01 each; 3 instead of 5 cost MetaQA recall@10, 2-hop 0.770 ->
    # 0.735, 3-hop 0.540 -> 0.484)
    later_share: float = Field(default=0.7, ge=0, le=1)
    # neighbours shared by two anchors or more read at most, whatever relations join them:
    # "which member of X is from Y" (a bound; the ones shared by the most anchors first)
    shared_neighbours: int = Field(default=50, ge=1)
    # paths through common neighbours returned with a result (presentation)
    join_paths: int = Field(default=5, ge=0)
    # the longest shortest path joining two anchors that is returned (presentation)
    join_hops: int = Field(default=4, ge=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class FusionParams:
    """How the fact legs are fused and boosted (`retrieval.retriever`, `retrieval.fusion`)."""

    # facts the vector leg offers (by hand)
    semantic_k: int = Field(default=30, ge=1)
    # reciprocal-rank fusion's k, at the published default (Cormack et al., 2009)
    rrf_k: int = Field(default=60, ge=1)
    # the expansion leg's weight when sure (bench-metaqa and bench-chat: 3 scored a little
    # higher on MetaQA, LoCoMo recall fell 0.416 -> 0.385; 1 cost MetaQA 2-hop ~10 points)
    expansion_weight: float = Field(default=2.0, ge=0)
    # a path explaining the question's words this well is trusted fully (by hand)
    confident_path: float = Field(default=0.3, gt=0)
    # when sure, the expansion vouches for the hits within this share of its best (by hand)
    trusted_share: float = Field(default=0.7, ge=0, le=1)
    # ... and votes for the rest at this strength: dropping its tail let semantic noise in
    tail_vote: float = Field(default=0.5, ge=0, le=1)
    # the semantic vote on a fact the expansion reached is scaled by 1 - confidence ** this
    # (by hand on MetaQA 2-hop: a sentence like the question must not lift the bridge)
    doubt_power: float = Field(default=4.0, gt=0)
    # facts fused: this many per fact returned, at least `min_pool` (by hand)
    pool_per_result: int = Field(default=3, ge=1)
    min_pool: int = Field(default=30, ge=1)
    # facts mentioned often and recently gain up to this share (salience; by hand)
    salience_weight: float = Field(default=0.1, ge=0)
    # recency halves every this many days, in ranking and in `top_entities` (by hand)
    half_life_days: float = Field(default=30.0, gt=0)


@dataclass(frozen=True, slots=True, config=_STRICT)
class BM25:
    """Okapi BM25's two constants at their textbook values (Robertson & Zaragoza, 2009)."""

    k1: float = Field(default=1.2, ge=0)
    b: float = Field(default=0.75, ge=0, le=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class EpisodeParams:
    """The episode leg (`retrieval.episodes`) and provenance (`retrieval.provenance`)."""

    # messages the vector index offers: LoCoMo recall is flat from 30 to 100 (bench-chat)
    dense_k: int = Field(default=50, ge=1)
    # messages ranked by the episode leg before fusion (by hand)
    pool: int = Field(default=50, ge=1)
    # meaning against words: BM25 alone beat the embedding alone by 0.18 recall; 0.5 was
    # best of 0.5 / 1.0 / 2.0 (bench-chat)
    dense_weight: float = Field(default=0.5, ge=0)
    # a message gets this share of its session neighbours' scores: 0.2-0.3 gave +0.05
    # recall, no gain past 0.3 (bench-chat)
    neighbour_share: float = Field(default=0.25, ge=0)
    # a message behind the best fact gains up to this, times the legs' agreement (bench-chat:
    # 0.2-0.3 best, 0.5 lost 0.01)
    fact_vote: float = Field(default=0.3, ge=0)
    # a fact whose message the leg found best gains this share of its score (bench-chat)
    episode_vote: float = Field(default=0.5, ge=0)
    # the legs' agreement is read over this many best facts and twice as many messages (by
    # hand; scaling the vote by the agreement: bench-chat 0.746 -> 0.753 on 3 conversations)
    agreement_facts: int = Field(default=10, ge=1)
    # the vote grows with this power of the agreement: a fact leg that half agrees with the
    # episode leg gets a quarter of the vote. Squared, dual stays above the episode leg on both
    # chat benchmarks (bench-chat LoCoMo 10 conversations 0.705 vs 0.703; replayed as an
    # agent's unnamed user, 3 conversations, 0.709 vs 0.708); linear lost to it on the second
    # (0.701)
    agreement_power: float = Field(default=2.0, ge=0)
    bm25: BM25 = Field(default_factory=BM25)
    # the message index is checked against the store after this many seconds: how stale
    # another process's writes may look
    refresh_s: float = Field(default=30.0, ge=0)
    # users whose message index stays in memory (a bound)
    max_users: int = Field(default=64, ge=1)


@dataclass(frozen=True, slots=True, config=_STRICT)
class RankingParams:
    """Every number that shapes a search (see the module docstring)."""

    anchors: AnchorParams = Field(default_factory=AnchorParams)
    names: NameParams = Field(default_factory=NameParams)
    relations: RelationParams = Field(default_factory=RelationParams)
    expansion: ExpansionParams = Field(default_factory=ExpansionParams)
    fusion: FusionParams = Field(default_factory=FusionParams)
    episodes: EpisodeParams = Field(default_factory=EpisodeParams)
