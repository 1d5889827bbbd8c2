"""`graphmem search "How does Alice know Dana?"` printed the facts and messages found but not
`result.paths`, the chain of facts joining the names asked about (MCP's answer has it, as
"Connections"; only `--json` had it). No store is needed."""

from __future__ import annotations

from engine.cli.read import search_text
from engine.models import Fact, Path, ScoredFact, SearchResult


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
