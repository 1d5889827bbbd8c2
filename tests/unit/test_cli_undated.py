"""A fact with no date (said in an undated message) shows `[undated]` in the CLI's lists; the
CLI showed `[----------]`. `context()`, a prompt's block, shows no mark for it (every mark cost
tokens and said nothing). No store is needed."""

from __future__ import annotations

from datetime import UTC, datetime

from engine.cli.read import search_text
from engine.cli.verbs import fact_line
from engine.models import Fact, ScoredFact, SearchResult

UNDATED = Fact(
    uid="f1", user_id="u", subject="Clara", predicate="PLAYS", object="cello",
    subject_uid="e1", object_uid="e2", text="Clara plays cello",
)  # fmt: skip


def test_an_undated_fact_shows_undated_in_a_list() -> None:
    ended = UNDATED.model_copy(update={"invalid_at": datetime(2024, 5, 1, tzinfo=UTC)})

    assert fact_line(UNDATED) == "[undated] Clara plays cello"
    assert fact_line(ended) == "[undated] Clara plays cello (until 2024-05-01)"


def test_an_undated_fact_shows_undated_in_search() -> None:
    result = SearchResult(query="cello", user_id="u")
    result.facts = [ScoredFact(fact=UNDATED, score=0.5, legs=["semantic"])]

    assert search_text(result).splitlines()[1] == (
        "  0.5000  [undated] Clara plays cello  [semantic] f1"
    )
    assert result.context() == "Facts:\nClara plays cello"
