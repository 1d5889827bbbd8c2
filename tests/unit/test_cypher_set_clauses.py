"""No statement computes a list comprehension or a `reduce()` inside a SET clause: FalkorDB
4.16 frees such an expression of a SET twice when writes run at once, and the server dies
(signal 11 in `ListReduceCtx_Free` / `ListComprehension_Free` under `UpdateCtx_Free`: four
users adding at once crashed it in every run; benchmarks/results/falkordb_crashes.md). The
value is computed in a WITH before the SET instead."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CYPHER = Path(__file__).resolve().parents[2] / "cypher"
_CLAUSE = re.compile(
    r"^\s*(WITH|RETURN|MATCH|OPTIONAL|MERGE|UNWIND|FOREACH|CALL|WHERE|DELETE|DETACH|REMOVE|CREATE)\b"
)
_SET = re.compile(r"^\s*(ON CREATE SET|ON MATCH SET|SET)\b")
_LOCAL = re.compile(r"reduce\s*\(|\[\s*\w+\s+IN\s", re.IGNORECASE)


def _set_lines(text: str) -> list[str]:
    """The lines of the statement's SET clauses (a clause's continuation lines too)."""
    found, inside = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("//"):
            continue
        if _SET.match(line):
            inside = True
        elif _CLAUSE.match(line):
            inside = False
        if inside:
            found.append(line)
    return found


@pytest.mark.parametrize("path", sorted(CYPHER.glob("*.cypher")), ids=lambda p: p.name)
def test_no_set_clause_computes_over_a_list(path: Path) -> None:
    assert not [line for line in _set_lines(path.read_text()) if _LOCAL.search(line)]


def test_the_check_sees_a_comprehension_in_a_set() -> None:
    text = "MATCH (e)\nSET e.a = 1,\n    e.b = [x IN e.c WHERE x > 1]\nRETURN e"
    assert [line for line in _set_lines(text) if _LOCAL.search(line)]
