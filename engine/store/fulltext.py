"""Fulltext query syntax, the one thing the dialects spell differently in a name search:
RediSearch for FalkorDB, Lucene for Neo4j. Each turns the query's terms into a query that
matches any of them, escaped so no term can act as an operator.

One fulltext index answers for every user of a store. On FalkorDB each entity also carries
its user's key (`user_key`, a token hashed from the user id) as an indexed field and a search
asks for it, so the index returns only that user's matches: without it a name search cost
what every user's matches cost (a common word: 16,284 entities of 1,001 users, 13-14 ms in the
index alone). The exact `user_id` filter stays: the key narrows, it does not decide.
"""

from __future__ import annotations

import hashlib
import re

from engine.cypher import Dialect
from engine.normalize import has_cjk

_REDISEARCH_SPECIAL = re.compile(r"([^\w])", re.UNICODE)
_LUCENE_QUOTED_SPECIALS = re.compile(r'(["\\])')


def user_key(user_id: str) -> str:
    """The user's token in the fulltext index: letters and digits only (nothing a tokenizer
    splits or a stemmer shortens), the same for every write and search of that user."""
    return f"gm{hashlib.blake2b(user_id.encode(), digest_size=10).hexdigest()}k"


def redisearch_query(terms: list[str], user_id: str) -> str:
    """`user_id`'s matches of any of `terms` (`_any_of_redisearch`), each term with the key
    after it: `(a @user_key:k) | (b @user_key:k)` ranks names as the union alone does. Asked
    once around the union (`@user_key:k (a | b)`), "David Lynch" fell out of the top 100 for
    a question naming him (MetaQA 2-hop hits@10 0.93 -> 0.81); before the term
    (`@user_key:k a`), the field applies to both and nothing matches."""
    key = user_key(user_id)
    return " | ".join(f"({part} @user_key:{key})" for part in _any_of_redisearch(terms))


def _any_of_redisearch(terms: list[str]) -> list[str]:
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
    return parts


def lucene_query(terms: list[str]) -> str:
    """A Lucene query matching any of `terms`, each as a quoted phrase.

    Inside quotes only `"` and `\\` are special, so escaping those two makes every other
    character (operators, wildcards, `AND`/`OR`/`NOT`) literal. A single alphanumeric word of
    five or more characters also matches with one typo (as `_any_of_redisearch` does). Terms
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


def fulltext_query(dialect: Dialect, terms: list[str], user_id: str) -> str:
    """`user_id`'s matches of `terms` in the dialect's fulltext syntax, escaped; empty when
    nothing is left. (Neo4j's Lucene index streams hits best first; the statement filters.)"""
    return redisearch_query(terms, user_id) if dialect == "falkordb" else lucene_query(terms)
