"""Fulltext query syntax, the one thing the dialects spell differently in a name search:
RediSearch for FalkorDB, Lucene for Neo4j. Each turns the query's terms into a query that
matches any of them, escaped so no term can act as an operator."""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.normalize import has_cjk
from engine.store.base import Dialect

_REDISEARCH_SPECIAL = re.compile(r"([^\w])", re.UNICODE)
_LUCENE_QUOTED_SPECIALS = re.compile(r'(["\\])')


def redisearch_query(terms: list[str]) -> str:
    """Any of `terms`, escaped for RediSearch; longer words also match with one typo, and
    non-ASCII pieces (CJK) match as prefixes of the index's longer tokens."""
    parts: list[str] = []
    for term in terms:
        escaped = _REDISEARCH_SPECIAL.sub(r"\\\1", term)
        if not escaped:
            continue
        parts.append(escaped)
        if has_cjk(term):
            parts.append(f"{escaped}*")
        elif len(term) >= 4 and term.isalnum():
            parts.append(f"%{escaped}%")
    return " | ".join(parts)


def lucene_query(terms: list[str]) -> str:
    """A Lucene query matching any of `terms`, each as a quoted phrase.

    Inside quotes only `"` and `\\` are special, so escaping those two makes every other
    character (operators, wildcards, `AND`/`OR`/`NOT`) literal. A single alphanumeric word of
    five or more characters also matches with one typo (as `redisearch_query` does). Terms
    without a letter or digit cannot match anything and are dropped; the result is empty when
    nothing is left.
    """
    parts: list[str] = []
    for term in (t.strip() for t in terms):
        if not any(ch.isalnum() for ch in term):
            continue
        parts.append('"' + _LUCENE_QUOTED_SPECIALS.sub(r"\\\1", term) + '"')
        if len(term) >= 4 and term.isalnum():
            parts.append(f"{term.lower()}~1")
    return " OR ".join(parts)


_SYNTAX: dict[Dialect, Callable[[list[str]], str]] = {
    "falkordb": redisearch_query,
    "neo4j": lucene_query,
}


def fulltext_query(dialect: Dialect, terms: list[str]) -> str:
    """`terms` in the dialect's fulltext syntax, escaped; empty when nothing is left."""
    return _SYNTAX[dialect](terms)
