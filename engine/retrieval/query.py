"""A search's query, parsed once: every leg reads its words from the `Query`, none
tokenises the text again."""

from __future__ import annotations

from dataclasses import dataclass

from engine.retrieval.terms import (
    WHERE,
    asks_where,
    content_words,
    first_person,
    fulltext_terms,
    words,
)


@dataclass(frozen=True, slots=True)
class Query:
    """The text of a query and what the legs read of it."""

    text: str
    # case-folded tokens in order: names' spans, the relation phrase
    words: tuple[str, ...]
    content: list[str]  # no stopwords, no repeats, at most max_words
    fulltext: list[str]  # terms of the entity fulltext read, at most max_words
    first_person: bool  # "I", "me", "my": the user's own entity is a candidate anchor

    @property
    def relational(self) -> list[str]:
        """The content words matched to predicates: no numbers ("2023", "4th"), which name no
        relation and would each be a model input of their own (every question has new ones);
        "where" when it asks for a place."""
        found = [w for w in self.content if not any(ch.isdigit() for ch in w)]
        return [*found, WHERE] if asks_where(self.words) else found

    @classmethod
    def parse(cls, text: str, max_words: int) -> Query:
        """`text` parsed; `max_words` bounds the content words and fulltext terms (each new
        word is a model input, and a long text has thousands)."""
        tokens = tuple(words(text))
        content = content_words(tokens)
        return cls(
            text=text,
            words=tokens,
            content=content[:max_words],
            fulltext=fulltext_terms(text, tokens, content)[:max_words],
            first_person=first_person(text, tokens),
        )
