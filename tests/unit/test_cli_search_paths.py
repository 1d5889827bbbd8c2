"""`graphmem search "How does Alice know Dana?"` printed the facts and messages found but not
`result.paths`, the chain of facts joining the names asked about (MCP's answer has it, as
"Connections"; only `--json` had it). No store is needed."""

from __future__ import annotations

from engine.cli.app import build_parser
from engine.cli.read import search_text
from engine.models import Explanation, Fact, LegRank, Path, ScoredFact, SearchResult


def _fact(uid: str, subject: str, obj: str) -> Fact:
    return Fact(
        uid=uid, user_id="u", subject=subject, predicate="KNOWS", object=obj,
        subject_uid=subject, object_uid=obj, text=f"{subject} knows {obj}",
    )  # fmt: skip


def test_search_shows_the_paths_joining_the_names_asked_about() -> None:
    knows, met = _fact("f1", "Alice", "Carl"), _fact("f2", "Carl", "Dana")
    result = SearchResult(query="How does Alice know Dana?", user_id="u")
    result.facts = [ScoredFact(fact=knows, score=0.5, legs=["expansion"])]
    result.paths = [Path(entities=["Alice", "Carl", "Dana"], facts=[knows, met])]

    lines = search_text(result).splitlines()
    assert lines[2:] == ["paths:", "  Alice knows Carl -> Carl knows Dana"]


def test_a_search_without_paths_prints_no_paths_heading() -> None:
    result = SearchResult(query="Alice", user_id="u")
    result.facts = [ScoredFact(fact=_fact("f1", "Alice", "Carl"), score=0.5, legs=["semantic"])]
    assert "paths:" not in search_text(result)


def test_explain_prints_each_hits_legs_and_the_walk_that_reached_it() -> None:
    """`search(q, explain=True)` had no CLI equivalent: `graphmem search --explain` was an
    unrecognized argument."""
    args = build_parser().parse_args(["search", "How does Alice know Dana?", "--user", "u"])
    assert args.explain is False
    args = build_parser().parse_args(["search", "q", "--user", "u", "--explain"])
    assert args.explain is True
    explained = Explanation(
        legs={"expansion": LegRank(rank=1, score=0.4142), "semantic": LegRank(rank=3, score=0.5)},
        anchor="Alice",
        relations=["KNOWS", "KNOWS"],
    )
    hit = ScoredFact(fact=_fact("f1", "Alice", "Carl"), score=0.5, legs=["expansion"])
    result = SearchResult(query="q", user_id="u")
    result.facts = [hit.model_copy(update={"explanation": explained})]
    assert search_text(result).splitlines()[2] == (
        "        expansion #1 (0.414); semantic #3 (0.500); from Alice via KNOWS -> KNOWS"
    )
