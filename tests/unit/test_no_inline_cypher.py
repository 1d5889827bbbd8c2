"""Cypher lives only in cypher/*.cypher: no string literal under engine/ may hold a statement.

Comments are invisible to the AST and docstrings are skipped; every other string constant
(f-string parts included) is checked for the start of a Cypher clause.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[2] / "engine"
_CYPHER = re.compile(
    r"\b(?:MATCH|MERGE|CREATE|OPTIONAL\s+MATCH)\s*\("  # pattern clauses
    r"|\bCREATE\s+(?:\w+\s+)?(?:INDEX|CONSTRAINT)\b"  # schema DDL
    r"|\b(?:DETACH\s+DELETE|UNWIND\s+\S+\s+AS|CALL\s+db\.|RETURN\s+\w+\s*[.{(])"
)


def _docstrings(tree: ast.AST) -> set[int]:
    holders = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, holders)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def cypher_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of each string constant in `source` that looks like Cypher."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in skip
        and _CYPHER.search(node.value)
    ]


@pytest.mark.parametrize(
    "path", sorted(ENGINE.rglob("*.py")), ids=lambda p: str(p.relative_to(ENGINE))
)
def test_no_cypher_string_literal_under_engine(path: Path) -> None:
    assert cypher_literals(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "source",
    [
        'Q = "MATCH (n:Entity) RETURN n"',
        'def f(t):\n    return f"MERGE (e:{t} {{uid: $uid}})"',
        "X = 'CREATE INDEX FOR (e:Entity) ON (e.uid)'",
        "X = 'CREATE VECTOR INDEX x IF NOT EXISTS'",
        "X = 'UNWIND $rows AS row'",
        'X = "CALL db.idx.vector.queryNodes(1)"',
        "X = 'RETURN e {.uid}'",
    ],
)
def test_the_check_finds_inline_cypher(source: str) -> None:
    assert cypher_literals(source)


def test_the_check_ignores_prose_comments_and_docstrings() -> None:
    source = (
        '"""Module doc: MATCH (n) RETURN n is how you would write it."""\n'
        "# MATCH (n) RETURN n\n"
        'MSG = "every statement is an idempotent MERGE or SET; create a new index"\n'
    )
    assert cypher_literals(source) == []
