"""Knowledge-graph retrieval that generalizes: relation phrases, hubs read by relationship type,
answers aggregated over paths, two anchors, three hops, inverse twins, bounded bad input."""

from __future__ import annotations

import pytest

from engine.models import Entity
from engine.retrieval.anchors import Anchor
from engine.retrieval.paths import may_share
from engine.retrieval.query import Query
from engine.retrieval.question import Question
from engine.retrieval.reach import ExpandedEdge, Reach, best_first, degree_by_relation
from engine.retrieval.reach import rank as rank_reaches
from engine.retrieval.terms import (
    asked_kind,
    asks_what_it_does,
    chain_order,
    chain_rest,
    content_words,
    words,
)
from engine.retrieval.tuning import ExpansionParams, NameParams, RelationParams
from engine.store.base import Neighbour


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("what genres do the films starring Ann fall under", "genres"),
        ("the films that share actors with Heat were in which genres", "genres"),
        ("what is the nationality of the founder of Acme", "nationality"),
        ("the films which Ann directed were released when", None),  # a relative clause
        ("who directed Heat", "directed"),
        ("who is the husband of Ann's daughter", "husband"),
        ("the actor who directed Heat", None),  # a relative clause
        ("which country does Bob come from", "country"),
    ],
)
def test_a_question_names_the_kind_of_thing_it_asks_for(question: str, kind: str | None) -> None:
    tokens = words(question)
    assert asked_kind(tokens, content_words(tokens)) == kind


@pytest.mark.parametrize(
    ("question", "does"),
    [
        ("what does Ann's daughter do for a living", True),
        ("what do the father and mother of Ann's wife do for a living", True),
        ("who did Ann's son marry", True),
        ("what films does Ann appear in", False),  # "films" is the kind
        ("which country does Bob come from", False),
        ("the films written by Ann are directed by who", False),  # the asking word last
    ],
)
def test_a_do_question_asks_what_its_subject_does(question: str, does: bool) -> None:
    assert asks_what_it_does(words(question)) is does


@pytest.mark.parametrize(
    ("question", "relation_words", "kind"),
    [
        ("what does the spouse of Ann do for a living", {"spouse"}, None),
        ("what did Ann's band record", {"band", "record"}, "record"),
        ("what did Ann paint", {"paint"}, "paint"),  # the painted, as before
        ("which country does Ann live in", {"country", "live"}, "country"),
    ],
)
def test_the_kind_a_do_question_asks_for_comes_after_its_subject(
    question: str, relation_words: set[str], kind: str | None
) -> None:
    query = Query.parse(question, 8)
    ann = Anchor(Entity(uid="a", user_id="u", key="ann", name="Ann"), 1.0, "name")
    asked = Question.of(query, query.relational, [ann], relation_words, NameParams())
    assert asked.kind == kind


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("where does the band of Ann come from", True),
        ("and from where did Ann move", True),
        ("name the city where Ann was born", False),  # a relative clause
        ("what is the genre of Ann", False),
    ],
)
def test_where_asks_for_a_place_and_names_that_kind(question: str, asks: bool) -> None:
    query = Query.parse(question, 8)
    assert ("where" in query.relational) is asks
    kind = asked_kind(query.words, query.relational)
    assert (kind == "where") is asks


def _with_ann(question: str) -> tuple[list[str], frozenset[int]]:
    """The question's words and where its name, Ann, stands."""
    tokens = words(question)
    return tokens, frozenset(i for i, w in enumerate(tokens) if w == "ann")


@pytest.mark.parametrize(
    ("question", "chain"),
    [
        ("what is the nationality of Ann's wife's father", "wife father nationality"),
        ("which country is the father of the wife of Ann from", "wife father"),
        ("who is the husband of Ann's daughter", "daughter husband"),
        ("who did Ann's son marry", "son"),
        ("in which country is the city where the club of Ann is based", "club"),
        ("the films starring Ann were released in which years", ""),
        ("the films that share actors with the film Ann are directed by who", ""),
        # the writer of the films Ann directed, not Ann's writer
        ("who is listed as screenwriter of Ann directed movies", ""),
        ("name a son or daughter of Ann", "daughter"),
    ],
)
def test_a_question_chains_nouns_to_its_anchor(question: str, chain: str) -> None:
    """By possessives and "of", nearest the name first; other words make no chain."""
    tokens, span = _with_ann(question)
    assert chain_order(tokens, span, content_words(tokens)) == chain.split()


@pytest.mark.parametrize(
    ("question", "rest"),
    [
        ("what does Ann's daughter do for a living", "what does do for a living"),
        ("what does the husband of Ann's daughter do", "what does do"),
        ("where does the band of Ann come from", "where does come from"),
        ("which country hosts the head office of the society of Ann", "which hosts"),
        ("who is the husband of Ann's daughter", ""),  # the chain's last noun is the answer
        ("name a sister of Ann", ""),
        ("name a son or daughter of Ann", ""),  # either word is the one hop
        ("what is the job of Ann's son", ""),
        ("which actor is Ann's husband", ""),  # the kind asked, nothing more
        ("where was Ann born", ""),  # no chain
        # the name's own noun phrase, and a noun before the chained one, are no rest
        ("who is the screenwriter of Ann directed movies", ""),
        ("who are movie co-writers of Ann", ""),
        ("where did the singer of Ann come from", "where did come from"),
        ("which ideology inspires Ann's party", "which inspires"),
    ],
)
def test_a_question_may_ask_beyond_its_chain(question: str, rest: str) -> None:
    tokens, span = _with_ann(question)
    kind = asked_kind(tokens, content_words(tokens))
    assert chain_rest(tokens, span, kind) == rest


def test_degree_per_relation_counts_what_a_sample_left_out() -> None:
    def edge(i: int, predicate: str) -> Neighbour:
        return Neighbour("hub", f"r{i}", predicate, True, f"m{i}", f"M{i}", 1, 1, degree=400)

    read = [edge(i, "MEMBER_OF") for i in range(30)] + [edge(30 + i, "LIVES_IN") for i in range(10)]
    degrees = {n.predicate: n.degree for n in degree_by_relation(read, lambda p: p)}
    assert degrees == {"MEMBER_OF": 300, "LIVES_IN": 100}


class _Scores:
    """A stand-in for `RelationMatch`: fixed scores per relation path, and how well each
    path's last relation names the asked kind (none asked: 0)."""

    def __init__(
        self,
        scores: dict[tuple[str, ...], float],
        kinds: dict[tuple[str, ...], float] | None = None,
    ) -> None:
        self.scores = scores
        self.kinds = kinds or {}
        self.asks_kind = bool(self.kinds)
        self.params = RelationParams()

    def path(self, relations: tuple[str, ...]) -> float:
        return self.scores[relations]

    def kind_explained(self, relations: tuple[str, ...], at_subject: bool | None) -> float:
        return self.kinds.get(relations, 0.0)


def _edge(uid: str, near: str, far: str, hop: int) -> ExpandedEdge:
    return ExpandedEdge("p", uid, "R", hop, near, far, far, 1, True)


def _walk(per_path: int) -> ExpansionParams:
    return ExpansionParams(many_paths=0.1, per_path=per_path, later_share=0.7)


def test_many_paths_count_only_through_different_neighbours_of_the_anchor() -> None:
    """ "Which club does P play for": P's teammates' positions are reached by many paths, all
    through P's one club; they must not outrank (or pass over, as a bridge) the club itself."""
    club = _edge("club", "p", "c", 1)
    chain = (club, _edge("mate", "c", "m", 2), _edge("pos", "m", "defender", 3))
    one_club = [
        Reach("p", ("IN_CLUB",), (club,), starts=frozenset({"c"})),
        Reach("p", ("IN_CLUB", "IN_CLUB", "POSITION"), chain, paths=12, starts=frozenset({"c"})),
    ]
    scores = {("IN_CLUB",): 0.65, ("IN_CLUB", "IN_CLUB", "POSITION"): 0.6}
    hits = rank_reaches(one_club, _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits] == ["club", "pos"]


def test_a_fact_on_the_way_to_the_asked_kind_is_no_answer() -> None:
    """ "Which country is P's club based in": P's club (one hop) explains the question nearly
    as well as the path on to the country and pays two hops less, but only the last relation
    of that path names a country: the club and its city are on the way, not answers."""
    club = _edge("club", "p", "c", 1)
    city = _edge("city", "c", "town", 2)
    country = _edge("country", "town", "land", 3)
    reaches = [
        Reach("p", ("IN_CLUB",), (club,), starts=frozenset({"c"})),
        Reach("p", ("IN_CLUB", "BASED_IN"), (club, city), starts=frozenset({"c"})),
        Reach(
            "p",
            ("IN_CLUB", "BASED_IN", "IN_COUNTRY"),
            (club, city, country),
            starts=frozenset({"c"}),
        ),
    ]
    hop = RelationParams().extra_hop_cost
    scores = {
        ("IN_CLUB",): 0.8,
        ("IN_CLUB", "BASED_IN"): 0.8 - hop,
        reaches[2].relations: 0.8 - 2 * hop,
    }
    kinds = {("IN_CLUB",): 0.3, ("IN_CLUB", "BASED_IN"): 0.32, reaches[2].relations: 0.6}
    hits = rank_reaches(reaches, _Scores(scores, kinds), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits] == ["country"]
    unasked = rank_reaches(reaches, _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in unasked] == ["club", "city", "country"]
    scores[reaches[2].relations] -= 0.01  # explains the question less well
    hits = rank_reaches(reaches, _Scores(scores, kinds), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert hits[0].uid == "club"


def test_many_paths_order_the_answers_of_a_path_not_the_paths() -> None:
    """The clubs of many players from a country come before those of few, reached through
    different players; a path the question's relations explain better still comes first,
    however few ways lead along it (a society's founder against its hundred members)."""
    players = [f"player{i}" for i in range(12)]
    big = Reach("p", ("FROM", "IN_CLUB"), (_edge("b", "x", "big", 2),), starts=frozenset(players))
    small = Reach("p", ("FROM", "IN_CLUB"), (_edge("s", "y", "small", 2),), starts=frozenset("y"))
    founder = Reach("p", ("FOUNDED_BY",), (_edge("f", "p", "f", 1),), starts=frozenset("f"))
    scores = {("FROM", "IN_CLUB"): 0.6, ("FOUNDED_BY",): 0.62}
    hits = rank_reaches([small, big, founder], _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits] == ["f", "b", "s"]
    assert hits[1].support > hits[0].score  # the many ways still make the leg surer


def test_one_path_leaves_room_for_the_next_paths_best() -> None:
    """Fifty players of a country must not fill a ten-fact result: after a path's first
    `per_path` hits, the best of the path behind it when nearly as good; a mere neighbour of
    the anchor stays behind them."""
    many = [
        Reach("p", ("FROM",), (_edge(f"m{i}", "p", f"n{i}", 1),), starts=frozenset({f"n{i}"}))
        for i in range(8)
    ]
    other = Reach("p", ("BASED_IN",), (_edge("o", "p", "city", 1),), starts=frozenset({"city"}))
    reaches = [*many, other]
    scores = {("FROM",): 0.9, ("BASED_IN",): 0.7}
    hits = rank_reaches(reaches, _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits].index("o") == 5
    hits = rank_reaches(reaches, _Scores(scores), {}, _walk(per_path=8))  # type: ignore[arg-type]
    assert [h.uid for h in hits].index("o") == 8
    scores[("BASED_IN",)] = 0.5
    hits = rank_reaches(reaches, _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits].index("o") == 8


def test_equally_good_next_steps_go_in_name_order() -> None:
    """Where two relations promise as much, the order does not follow how the dict was
    filled (a set's hash order, which differs from one process to the next)."""
    assert best_first({"OWNS": 0.5, "LIKES": 0.9, "HAS": 0.5}) == ["LIKES", "HAS", "OWNS"]
    assert best_first({"HAS": 0.5, "OWNS": 0.5, "LIKES": 0.9}) == ["LIKES", "HAS", "OWNS"]


@pytest.mark.parametrize(
    ("anchors", "whole", "may"),
    [
        (["a"], {}, False),
        (["a", "b"], {}, True),  # neither read whole: either may have any neighbour
        (["a", "b"], {"a": frozenset()}, False),
        (["a", "b"], {"a": frozenset({"b"})}, False),  # its one neighbour is the other anchor
        (["a", "b"], {"a": frozenset({"b", "x"})}, True),  # b may be next to x
        (["a", "b"], {"a": frozenset({"x"}), "b": frozenset({"y"})}, False),
        (["a", "b"], {"a": frozenset({"x"}), "b": frozenset({"x"})}, True),
        (["a", "b", "c"], {"a": frozenset()}, True),
        (["a", "b", "c"], {"a": frozenset(), "b": frozenset({"x"})}, True),
        (["a", "b", "c"], {"a": frozenset(), "b": frozenset({"a", "c"})}, False),
    ],
)
def test_two_anchors_may_share_a_neighbour_only_where_their_reads_leave_room(
    anchors: list[str], whole: dict[str, frozenset[str]], may: bool
) -> None:
    """The anchors read whole have only the neighbours read; the others may have any."""
    assert may_share(anchors, whole) is may


@pytest.mark.parametrize(("own", "kept"), [(0.48, True), (0.3, False)])
def test_a_first_step_nearly_as_good_as_the_path_beyond_is_an_answer_too(
    own: float, kept: bool
) -> None:
    """ "What movies did X write": the film X wrote was passed over for the path on to its
    actors, which the word "movies" lifted a little; its own fact was in no top 10. A first
    step far below the path beyond (a society's member, for the disciplines its members work
    in) is still passed over."""
    wrote = _edge("wrote", "x", "film", 1)
    on = Reach("x", ("WRITTEN_BY", "STARRED_ACTORS"), (wrote, _edge("actor", "film", "a", 2)))
    reaches = [Reach("x", ("WRITTEN_BY",), (wrote,), starts=frozenset({"film"})), on]
    scores = {("WRITTEN_BY",): own, ("WRITTEN_BY", "STARRED_ACTORS"): 0.5}
    hits = rank_reaches(reaches, _Scores(scores), {}, _walk(per_path=5))  # type: ignore[arg-type]
    assert [h.uid for h in hits] == (["actor", "wrote"] if kept else ["actor"])
    if kept:
        assert hits[1].score == pytest.approx(own * ExpansionParams().answer_share)
