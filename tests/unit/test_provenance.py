"""Facts vote for the messages they came from (engine/retrieval/provenance.py): as far as the
legs agree, and whatever the agreement for a fact that says what the question asks."""

from __future__ import annotations

from dataclasses import replace

from engine.models import Fact, ScoredFact
from engine.retrieval.episodes import EpisodeHit
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.provenance import clear_matches, fuse_provenance
from engine.retrieval.tuning import EpisodeParams
from engine.store.base import EpisodeText

PARAMS = EpisodeParams()


def _index() -> LexicalIndex:
    index = LexicalIndex()
    said = [
        ("cafe", "We met at the cafe on Main Street."),
        ("weather", "The weather was lovely all week."),
        ("shelter", "Guess what, we brought Coco home from the shelter!"),
        ("other", "Work has been busy lately."),
    ]
    index.add([EpisodeText(u, "s1", None, "user", c, float(i)) for i, (u, c) in enumerate(said)])
    return index


def _fact(uid: str, text: str, episode: str, score: float) -> ScoredFact:
    fact = Fact(
        uid=uid, user_id="u", subject="Kate", predicate="ADOPTED", object="Coco",
        subject_uid="kate", object_uid="coco", text=text, episodes=[episode],
    )  # fmt: skip
    return ScoredFact(fact=fact, score=score, legs=["semantic"])


def _scores(clear: set[str], source: str = "shelter") -> dict[str, float]:
    hits = [EpisodeHit("cafe", 2.0), EpisodeHit("weather", 1.4), EpisodeHit("other", 0.8)]
    facts = [_fact("f-coco", "Kate adopted Coco from a shelter", source, 0.03)]
    _, episodes = fuse_provenance(facts, hits, _index(), PARAMS, clear=clear)
    return {e.episode.uid: round(e.score, 6) for e in episodes}


def _order(clear: set[str], source: str = "shelter") -> list[str]:
    return list(_scores(clear, source))


def test_a_fact_clearly_nearer_the_question_than_any_message_is_clear() -> None:
    nearest = {"cafe": 0.60, "weather": 0.40}  # cosines with the question
    semantic = {"near": 0.72, "close": 0.66, "far": 0.50}  # nearest first

    def clear(margin: float, most: int) -> EpisodeParams:
        return replace(PARAMS, clear_margin=margin, clear_facts=most)

    assert clear_matches(semantic, nearest, clear(0.1, 3)) == {"near"}
    assert clear_matches(semantic, nearest, clear(0.0, 3)) == {"near", "close"}
    assert clear_matches(semantic, nearest, clear(0.0, 1)) == {"near"}
    assert clear_matches(semantic, {}, clear(0.1, 3)) == set()  # no message to beat


def test_a_clear_fact_brings_its_message_up_though_the_legs_disagree() -> None:
    # the fact legs' sources are none of the episode leg's messages: their agreement is 0
    assert _order(clear=set()) == ["cafe", "weather", "other", "shelter"]
    assert _order(clear={"f-coco"}) == ["cafe", "weather", "shelter", "other"]


def test_a_clear_fact_lifts_its_message_to_the_clear_vote_and_no_further() -> None:
    # "weather" (0.7 of the best, and the legs agree on it) is above the clear vote already
    assert _scores({"f-coco"}, "weather") == _scores(set(), "weather")
    assert _scores({"f-coco"}, "shelter")["shelter"] == PARAMS.clear_vote  # found by no leg
    assert _scores(set(), "shelter")["shelter"] == 0.0


def test_a_clear_fact_outside_the_ranked_facts_votes_for_nothing() -> None:
    assert _order(clear={"f-elsewhere"}) == ["cafe", "weather", "other", "shelter"]
