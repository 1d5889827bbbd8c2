"""A relevance floor (issue 52, A17): each hit carries its cosine similarity to the query, and
`min_similarity` keeps only the hits at least that similar, so a question about someone the
graph does not know ("Where does Bob live?") does not answer with someone else's facts."""

from __future__ import annotations

import pytest

from engine.errors import InvalidInputError
from engine.memory import Memory

FLOOR = 0.6  # MiniLM: "Where does Bob live?" ~ "Peter lives in New York" at 0.53, Peter's 0.85
# names nobody: no fact is held back for naming a stranger (test_unknown_names.py)
VAGUE = "Where does my friend live?"  # ~ "Peter lives in New York" at 0.49


@pytest.fixture
def peter(memory: Memory) -> Memory:
    memory.add_facts([("Peter", "LIVES_IN", "New York"), ("Alice", "LIKES", "tea")], user_id="u")
    memory.add("Peter moved to New York last year.", user_id="u")
    return memory


def test_a_floor_drops_what_is_about_someone_else(peter: Memory) -> None:
    result = peter.search("Where does Bob live?", user_id="u", min_similarity=FLOOR)
    assert all("Peter" not in hit.fact.text for hit in result.facts), result.facts
    assert all("Peter" not in hit.episode.text for hit in result.episodes)


def test_a_floor_keeps_what_answers_and_every_hit_says_its_similarity(peter: Memory) -> None:
    result = peter.search("Where does Peter live?", user_id="u", min_similarity=FLOOR)
    assert "Peter lives in New York" in [h.fact.text for h in result.facts]
    assert result.episodes[0].episode.text == "Peter moved to New York last year."
    hits = [*result.facts, *result.episodes]
    assert all(h.similarity is not None and FLOOR <= h.similarity <= 1.0 for h in hits)


def test_without_a_floor_the_vector_legs_similarities_are_given(peter: Memory) -> None:
    result = peter.search(VAGUE, user_id="u")
    assert result.facts  # no floor by default: the nearest facts are still offered
    peter_fact = next(h for h in result.facts if h.fact.text == "Peter lives in New York")
    assert peter_fact.similarity is not None and 0.3 < peter_fact.similarity < FLOOR


def test_the_floor_comes_from_the_settings_and_is_checked(peter: Memory) -> None:
    peter.settings = peter.settings.model_copy(update={"search_min_similarity": FLOOR})
    assert not peter.search(VAGUE, user_id="u").facts
    assert peter.search(VAGUE, user_id="u", min_similarity=-1.0).facts
    for bad in (1.5, -2, "high", True):
        with pytest.raises(InvalidInputError, match="min_similarity"):
            peter.search("Where does Bob live?", user_id="u", min_similarity=bad)  # type: ignore[arg-type]
