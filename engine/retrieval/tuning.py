"""The private numbers of a search: frozen, each with the reason for its value.

A user sets the few numbers of `engine.ranking.RankingParams` (depth, read limits, leg weights,
salience, half-life) and the caches of `Settings`; `Tuning.of` puts them in their places here,
beside the numbers no user can reason about (costs, shares, samples, latency bounds). What
chose a value is named ("by hand", "bench-hub", "bench-metaqa", "bench-chat": see
benchmarks/README.md); the measured effects live in benchmarks/results/, not here. A change of
a default must keep tests/integration/test_golden_ranking.py passing or update its golden
file on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

from engine.config import SEARCH_CACHED_USERS, SEARCH_CACHED_VECTORS, SEARCH_REFRESH_S, Settings
from engine.ranking import RankingParams

_PUBLIC = RankingParams()  # the defaults of the public numbers, set in one place


@dataclass(frozen=True, slots=True)
class AnchorParams:
    """Which of the entities a query names or means become anchors (`retrieval.anchors`)."""

    limit: int = _PUBLIC.anchors.limit  # public
    # how surely the query must name an entity (`NameParams`) to anchor on it (by hand)
    min_score: float = 0.5
    relative: float = 0.75  # keep anchors scoring at least this share of the best (by hand)
    # ... or this share, for a name the query has word for word beside the others ("Peru";
    # by hand, bench-hub's two-anchor questions)
    relative_exact: float = 0.5
    # candidates the fulltext index offers: enough for a common word in many names (by hand)
    fulltext_k: int = 100
    # names also looked up word for word, up to this many words (`terms.name_keys`; by hand:
    # titles the fulltext read missed in MetaQA have up to 7), and at most this many runs
    key_words: int = 8
    key_runs: int = 256
    vector_k: int = 10  # candidates the entity vector index offers (by hand)
    vector_min_cos: float = 0.65  # the cosine to be an anchor by meaning alone (by hand)
    # when nothing reaches min_score, the best candidate down to this ("22", "defender";
    # by hand, bench-hub)
    fallback_min_score: float = 0.3


@dataclass(frozen=True, slots=True)
class NameParams:
    """How surely a query names an entity (`retrieval.terms.name_span`); all by hand."""

    typo_credit: float = 0.8  # a word with a small typo counts this much of an exact one
    typo_min_chars: int = 4  # shorter words match exactly or not at all: "cat" is not "car"
    typo_max_gap: int = 2  # a near word differs in length by at most this many characters
    # ... and is at least this alike (Indel similarity: 2 * common characters / both lengths)
    typo_similarity: float = 0.8
    # a name whose words the query has out of order ("Men Without Women") counts this much
    shuffled: float = 0.9
    stopword_credit: float = 0.3  # a name's stopword ("The", "of") found in the query
    # specificity 1 - exp(-letters / this): "Up" is weak evidence, "Grégoire Colin" strong
    specific_chars: float = 4.0
    cjk_chars: int = 3  # the letters of evidence one CJK character gives: a short word
    # ... and a number at least this many: a value the question asks about ("number 9") is
    # no weaker evidence than a short word (bench-hub)
    number_chars: int = 3


@dataclass(frozen=True, slots=True)
class RelationParams:
    """How well a path of relations explains a question (`retrieval.predicates`)."""

    # the cost of each hop past the first: a longer path wins only by explaining more words
    # (by hand; bench-metaqa 2-hop)
    extra_hop_cost: float = 0.05
    # a sibling cue ("co-wrote", "same") rewards the anchor's first relation out and back:
    # twice a hop's cost (bench-metaqa 2-hop)
    sibling_bonus: float = 0.1
    # the weight of the relation phrase beside the words (bench-hub; 0 = words only)
    phrase_weight: float = 0.3
    continuations: int = 12  # relations tried as a path's next step (latency, by hand)
    later_steps: int = 4  # ... and as the steps after it (latency, by hand)
    # "where" asks for a place, one of the question's words at this share of its weight: a
    # relation leading to an organisation may answer it too ("where does X work"; bench-hub)
    where_weight: float = 0.75
    # a question word that is another form of a word in a relation's name ("director",
    # "directed by") matches it at least this much: about what the same word gets ("genre",
    # "has genre": 0.81); the same word keeps the model's similarity (bench-hub, bench-metaqa)
    same_form_sim: float = 0.8
    # ... their root of this many letters at least: shorter ones join unrelated words ("act":
    # actors, actual)
    same_form_root: int = 4
    # a word names the relations within this of its best similarity ("directed": DIRECTED_BY)
    # ... and a path loses this for each step no word names (a step back along the one before
    # needs none): between two paths explaining the question alike, the one whose every step
    # is asked for ranks first ("films directed by the director of X": X -> director ->
    # films, not X -> director -> the films the director wrote) (bench-metaqa 3-hop)
    name_margin: float = 0.1
    unnamed_step_cost: float = 0.001
    # a word clearly names a relation ("directed") at this similarity to one ...
    relation_word_sim: float = 0.5
    # ... and this much above its average relation (by hand); such a word is not an anchor
    relation_word_specificity: float = 0.15
    # facts of a relation read to tell what kind of entity it leads to, once per user and
    # relation until the refresh (a sample: a bound, not a tuning)
    kind_sample: int = 32
    # ... picked from this many, those joining two entities not met yet first: facts are
    # stored one entity's after another (a bound)
    kind_read: int = 256
    # relations, the best single ones first, that may answer for the asked kind through what
    # they lead to (latency, a bound)
    kind_relations: int = 24
    # a relation explains the asked kind by what it leads to at this share of what the kind's
    # own relation earns: a sample of ends is weaker evidence than a name (bench-hub)
    kind_by_ends: float = 0.8
    # a fact is on the way to the answer, not one, when a path through it explains the question
    # as well (hop cost aside) and the asked kind by this much more (by hand; bench-hub)
    kind_further: float = 0.05
    # a relation's sampled facts checked for a twin storing them reversed (a bound)
    twin_sample: int = 8
    # ... a twin when at least this share of them are stored reversed under its name ...
    twin_share: float = 0.9
    # ... and at least this many: two people who once liked and once helped each other are not
    # a relation and its twin (by hand)
    twin_min_facts: int = 3
    # a sampled entity with more mentions is not read for the relations it has (the read lists
    # every fact of a node; a bound)
    follows_read: int = 500
    # word, relation phrase and relation vectors kept in memory (`Settings`)
    cached_vectors: int = SEARCH_CACHED_VECTORS
    # the question's words are compared with the relations in blocks of at most this many
    # multiply-adds: OpenBLAS splits a larger product over its threads (measured: 384,000 did
    # not, 1,152,000 did), and a worker it woke spins ~50 ms after it (latency; retrieval.blas)
    one_thread_products: int = 1 << 18
    # the user's predicate list and relation samples are read again after this many seconds
    # (`Settings`)
    refresh_s: float = SEARCH_REFRESH_S
    # users whose predicate lists and counts are kept, the least recently searched dropped
    # first (memory: a chat user's list of 200-400 relations, ~20-40 kB; a bound)
    cached_users: int = 1024


@dataclass(frozen=True, slots=True)
class ExpansionParams:
    """The walk from the anchors along the question's relations (`retrieval.expansion`)."""

    depth: int = _PUBLIC.expansion.depth  # public, as are the read limits
    fanout: int = _PUBLIC.expansion.fanout
    max_edges: int = _PUBLIC.expansion.max_edges
    hub_scan: int = _PUBLIC.expansion.hub_scan
    anchor_scan: int = _PUBLIC.expansion.anchor_scan
    # of a hub met past the anchors, the edges to its most mentioned neighbours kept: an answer
    # through it is one of hundreds, and a result shows ten (latency; bench-hub)
    hub_sample: int = 50
    last_hop_sample: int = 10  # ... at the last hop, where they are answers only (bench-hub)
    # nodes read at a hop past the anchors at most, the most promising first (latency)
    frontier_nodes: int = 250
    hub_degree: int = _PUBLIC.expansion.hub_degree  # public
    open_edges: int = 150  # ordinary nodes are read whole while their edges fit (by hand)
    beam: int = 6  # relation paths followed past each hop at most (by hand)
    # a path goes on while a continuation may come this close to the best path walked ("the
    # directors of the films starred by X"; bench-metaqa 2-hop, bench-hub 3-hop)
    beam_slack: float = 0.06
    # ... if its next step explains more than this that the path does not, or goes back along
    # the anchor's relation: a step explaining nothing new is not walked for the slack
    beam_gain: float = 0.001
    # ... and while its best continuation comes this close to the best path's (latency)
    beam_margin: float = 0.1
    step_share: float = 0.7  # a hub is read by the next relations within this share (by hand)
    typed_steps: int = 2  # relation types read from a hub at most (latency; bench-hub)
    # ... and 1 when this many hubs or more are read at once (latency)
    wide_frontier: int = 100
    typed_rounds: int = 3  # ... in this many reads, the next types asked for those it lacks
    probe_relations: int = 6  # relations sampled from a hub anchor first (latency, by hand)
    probe_size: int = 3  # ... neighbours sampled along each (latency, by hand)
    # of the answers of one relation path, one reached by a single path scores this much less
    # than the one reached by the most; between paths it counts only towards the leg's
    # confidence (bench-hub, bench-metaqa)
    many_paths: float = 0.1
    per_path: int = 5  # the hits of one relation path ranked on their score: half a result
    # ... its later ones at this share of it, so the best of the next paths come first when
    # nearly as good (bench-hub, bench-metaqa recall)
    later_share: float = 0.7
    # a first step the walk went on from is an answer too when its own path scores this share
    # of the better path's through it, at this share of its score (bench-metaqa and bench-hub
    # first-hop answer facts in the top 10; `reach._answer_on_the_way`)
    answer_near: float = 0.9
    answer_share: float = 0.8
    # the walks' nodes kept in the process (`retrieval.known_edges`): this many edges in all at
    # most (memory: ~0.4 kB an edge, 40 MB), none of a node with more than `kept_node_edges`
    kept_edges: int = 100_000
    kept_node_edges: int = 2000
    # ... read whole once this many reads met a node that kept nodes could not answer: most
    # nodes of a large graph are met once or twice (MetaQA 3-hop: filling at the second cost
    # more than it saved)
    kept_after: int = 3
    # a dual search neither matches the question to the relations nor walks them in a graph
    # of `one_off_graph` facts or more, every one said in a message, whose relations hold
    # fewer than `one_off_facts` facts on average: the sentences' own words (latency and
    # LoCoMo; never on bench-hub or MetaQA, whose facts no message said)
    one_off_facts: int = 5
    one_off_graph: int = 100
    # neighbours shared by two anchors or more read at most: "which member of X is from Y"
    shared_neighbours: int = 50
    join_paths: int = 5  # paths through common neighbours returned (presentation)
    join_hops: int = 4  # the longest shortest path joining two anchors returned


@dataclass(frozen=True, slots=True)
class FusionParams:
    """How the fact legs are fused and boosted (`retrieval.fusion`)."""

    semantic_k: int = _PUBLIC.fusion.semantic_k  # public, as are the weights
    rrf_k: int = _PUBLIC.fusion.rrf_k
    expansion_weight: float = _PUBLIC.fusion.expansion_weight
    confident_path: float = 0.3  # a path explaining the words this well is trusted (by hand)
    # when sure, the expansion vouches for the hits within this share of its best (by hand)
    trusted_share: float = 0.7
    # ... and votes for the rest at this strength: dropping its tail let semantic noise in
    tail_vote: float = 0.5
    # the semantic vote on a fact the expansion reached is scaled by 1 - confidence ** this
    # (by hand, bench-metaqa 2-hop: a sentence like the question must not lift the bridge)
    doubt_power: float = 4.0
    pool_per_result: int = 3  # facts fused: this many per fact returned ... (by hand)
    min_pool: int = 30  # ... and at least this many
    salience_weight: float = _PUBLIC.fusion.salience_weight
    half_life_days: float = _PUBLIC.fusion.half_life_days
    # in a search of the anchors alone (`ExpansionParams.one_off_facts`), a semantic fact about
    # an anchor counts this many times: far more than a pool's scores differ (under 3x with
    # the provenance vote), so those come first, as the walk's first hop would have put them
    # (bench-chat: 4 and 8, which leave some below, rank a few evidence messages lower)
    anchored_boost: float = 100.0


# messages added together that are counted as one numpy block (a load's pages); fewer (a
# write's) are indexed term by term; the scores are the same either way
INDEX_BLOCK_MIN = 64
# A user's message index load: up to LOAD_ONCE messages in one read; a larger user a range of
# uids of about LOAD_READ messages a read, indexed LOAD_BLOCK at a time. Short steps, each
# read a wait on the database: the loading thread never holds the interpreter for long, so
# the searches of other users in the process wait little for it (issue 48, M6).
LOAD_ONCE = 5000
LOAD_READ = 200
LOAD_BLOCK = 1000
# A load that read this many messages or more (all of a user's, or those its stored index did
# not cover) stores the index for the next process (`stored_index`); fewer load in a few ms.
STORE_AFTER = INDEX_BLOCK_MIN
# A stored index is stored in parts of this many messages (the last one fewer), read and
# decoded one at a time: decoding one holds the interpreter ~2 ms, and other users' searches
# go on between two (parts of 5,000 held it ~7 ms each: a small user's search beside a
# 200k-message user's first search took 4-6x its time alone; 1.6-1.8x with 1,000). A user's
# new messages store the last part again and add parts.
PART_MESSAGES = 1000
# The longest stored part (characters of its base64 data): a part of longer messages is not
# stored, nor are those after it (their messages are read on a load).
STORED_MAX_CHARS = 16 * 2**20


@dataclass(frozen=True, slots=True)
class BM25:
    """Okapi BM25's two constants at their textbook values (Robertson & Zaragoza, 2009)."""

    k1: float = 1.2
    b: float = 0.75


@dataclass(frozen=True, slots=True)
class EpisodeParams:
    """The episode leg (`retrieval.episodes`) and provenance (`retrieval.provenance`)."""

    dense_k: int = 50  # messages the vector index offers (bench-chat)
    pool: int = 50  # messages ranked by the episode leg before fusion (by hand)
    dense_weight: float = 0.5  # meaning against words (bench-chat)
    neighbour_share: float = 0.25  # a message gets this share of its session neighbours'
    fact_vote: float = 0.3  # a message behind the best fact gains up to this (bench-chat)
    episode_vote: float = 0.5  # a fact whose message the leg found best gains this share
    # the legs' agreement is read over this many best facts and twice as many messages
    agreement_facts: int = 10
    # the vote grows with this power of the agreement: a fact leg that half agrees with the
    # episode leg gets a quarter of the vote (bench-chat)
    agreement_power: float = 2.0
    # a fact nearer the question than the nearest message by this much (in cosine) says what
    # the question asks: its message scores at least `clear_vote` of the best message's,
    # whatever the agreement (about the episode leg's sixth best on LoCoMo) (bench-chat)
    clear_margin: float = 0.1
    clear_vote: float = 0.6
    clear_facts: int = 3  # ... of the semantic leg's first this many facts (bench-chat)
    # a question naming one speaker whose facts are this much farther (in cosine) from what it
    # asks than another speaker's is about that other one (`premise`; LoCoMo: 35% of the
    # adversarial questions, 3% of the others; chosen on 4 conversations, checked on 6)
    premise_margin: float = 0.12
    premise_facts: int = 30  # ... among the facts nearest the question without the name
    bm25: BM25 = field(default_factory=BM25)
    refresh_s: float = SEARCH_REFRESH_S  # the index checked against the store (`Settings`)
    max_users: int = SEARCH_CACHED_USERS  # users whose index stays in memory (`Settings`)


@dataclass(frozen=True, slots=True)
class Tuning:
    """Every number that shapes a search, public and private, in its place."""

    anchors: AnchorParams = field(default_factory=AnchorParams)
    names: NameParams = field(default_factory=NameParams)
    relations: RelationParams = field(default_factory=RelationParams)
    expansion: ExpansionParams = field(default_factory=ExpansionParams)
    fusion: FusionParams = field(default_factory=FusionParams)
    episodes: EpisodeParams = field(default_factory=EpisodeParams)

    @classmethod
    def of(cls, settings: Settings) -> Tuning:
        """The private defaults with the public numbers of `settings.ranking` and the caches
        of `settings` in their places."""
        ranking, default = settings.ranking, cls()
        refresh, vectors = settings.search_refresh_s, settings.search_cached_vectors
        return cls(
            anchors=replace(default.anchors, **vars_of(ranking.anchors)),
            names=default.names,
            relations=replace(default.relations, refresh_s=refresh, cached_vectors=vectors),
            expansion=replace(default.expansion, **vars_of(ranking.expansion)),
            fusion=replace(default.fusion, **vars_of(ranking.fusion)),
            episodes=replace(
                default.episodes, refresh_s=refresh, max_users=settings.search_cached_users
            ),
        )


def vars_of(group: Any) -> dict[str, Any]:
    """The fields of a public group of `RankingParams`, by name."""
    return {f.name: getattr(group, f.name) for f in fields(group)}
