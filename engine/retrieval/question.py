"""The question stage: what a query asks, once its anchors are known.

The anchors' names take some of the query's words; the rest say what is asked about them: the
relation phrase ("which teams have players from"), the kind of thing asked for ("which
*genres*"), the nouns chained to the one name ("X's wife's father"), and whether it asks for
siblings ("co-wrote", "the same director"). `Question.of` reads them once into a frozen value
the relation match is built from (`scorer.PredicateScorer.match`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from engine.normalize import has_cjk
from engine.retrieval.anchors import Anchor
from engine.retrieval.query import Query
from engine.retrieval.terms import (
    asked_kind,
    asks_for_siblings,
    asks_what_it_does,
    chain_order,
    chain_rest,
    name_span,
    relation_phrase,
)
from engine.retrieval.terms import words as words_of
from engine.retrieval.tuning import NameParams


@dataclass(frozen=True, slots=True)
class Question:
    """What a query asks about its anchors."""

    query: Query
    spans: tuple[frozenset[int], ...]  # the query words each anchor's name takes
    phrase: str  # the query without the names it mentions
    unnamed: tuple[str, ...]  # the relational words no anchor's name has
    kind: str | None  # the word naming the kind of thing asked for, when it names a relation
    chain: tuple[str, ...]  # the nouns chained to the one name, nearest first
    rest: str  # what the question asks beyond the chain ("what does ... do")
    siblings: bool  # it asks for what shares a neighbour with the anchor

    @classmethod
    def of(
        cls,
        query: Query,
        words: Sequence[str],
        anchors: Sequence[Anchor],
        relation_words: set[str],
        names: NameParams,
    ) -> Question:
        """The question `query` asks about `anchors`; `words`: its relational words;
        `relation_words`: those that clearly name a relation."""
        spans = tuple(a.span or name_span(a.entity.name, query.words, names)[1] for a in anchors)
        named = {w for a in anchors for w in words_of(a.entity.name)}
        unnamed = [w for w in words if w not in named and (len(w) > 1 or has_cjk(w))]
        single = len(spans) == 1 and bool(spans[0])
        chain = chain_order(query.words, spans[0], unnamed) if single else []
        # "what are the primary languages": "primary" names no relation
        asked = _relation_word(asked_kind(query.words, unnamed), relation_words)
        kind = asked
        if asks_what_it_does(query.words):  # "what does X's daughter do": not a daughter
            subject = set(chain)
            kind = asked_kind(query.words, [w for w in unnamed if w not in subject])
            kind = _relation_word(kind, relation_words)
        return cls(
            query=query,
            spans=spans,
            phrase=relation_phrase(query.words, list(spans)),
            unnamed=tuple(unnamed),
            kind=kind,
            chain=tuple(chain),
            rest=chain_rest(query.words, spans[0], asked) if chain else "",
            siblings=asks_for_siblings(query.words, spans),
        )


def _relation_word(word: str | None, relation_words: set[str]) -> str | None:
    return word if word in relation_words else None
