"""Every door prints a fact's date as precisely as it is known: "I moved to Lisbon last year"
said on 2026-12-07 is "[2025]", in the CLI's lists and search and in MCP's search, never the
day 2025-12-07 nobody said. A message's time stays a day. No store is needed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engine.cli.read import search_text
from engine.cli.verbs import fact_line
from engine.mcp_server.render import render_search
from engine.models import Fact, ScoredEpisode, ScoredFact, SearchResult, Snippet
from engine.times import TimeUnit

SAID = datetime(2026, 12, 7, 10, 30, tzinfo=UTC)
SHOWN = {"day": "2025-12-07", "week": "week of 2025-12-01", "month": "2025-12", "year": "2025"}


def _result(unit: TimeUnit) -> SearchResult:
    fact = Fact(
        uid="f1", user_id="u", subject="Kate", predicate="MOVED_TO", object="Lisbon",
        subject_uid="e1", object_uid="e2", text="Kate moved to Lisbon",
        valid_at=datetime(2025, 12, 7, tzinfo=UTC), valid_unit=unit, episodes=["m1"],
    )  # fmt: skip
    said = Snippet(uid="m1", speaker="Kate", role="user", ts=SAID, text="I moved last year.")
    return SearchResult(
        query="where did Kate move",
        user_id="u",
        facts=[ScoredFact(fact=fact, score=0.5, legs=["semantic"], sources=[said])],
        episodes=[ScoredEpisode(episode=said, score=0.4, legs=["episodes"])],
    )


@pytest.mark.parametrize("unit", list(SHOWN))
def test_the_cli_shows_a_fact_as_precisely_as_it_is_known(unit: TimeUnit) -> None:
    result = _result(unit)
    assert fact_line(result.facts[0].fact) == f"[{SHOWN[unit]}] Kate moved to Lisbon"
    lines = search_text(result).splitlines()
    assert lines[1] == f"  0.5000  [{SHOWN[unit]}] Kate moved to Lisbon  [semantic] f1"
    assert lines[3].startswith("  0.4000  [2026-12-07] Kate: I moved last year.")


@pytest.mark.parametrize("unit", list(SHOWN))
def test_mcp_shows_a_fact_as_precisely_as_it_is_known(unit: TimeUnit) -> None:
    text = render_search(_result(unit))
    assert f"1. Kate moved to Lisbon  (id f1, since {SHOWN[unit]})" in text
    assert "[2026-12-07 10:30] Kate:" in text
