"""Verbs as predicates and as words of a fact sentence; the small English inflections."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.extraction.offline.vocab import USER
from engine.normalize import normalize_predicate

if TYPE_CHECKING:
    from spacy.tokens import Token


def verb_words(verb: Token) -> tuple[str, str]:
    """(predicate, words for the sentence): LIKES/likes, DOES_NOT_LIKE/does not like, ..."""
    particle = "".join(f" {c.lower_}" for c in verb.children if c.dep_ == "prt")
    lemma, negation = verb.lemma_.casefold(), negation_of(verb)
    if any(c.dep_ == "auxpass" for c in verb.children):
        not_ = "NOT_" if negation else ""
        words = f"{_be_text(verb, auxpass=True)}{' not' if negation else ''} {verb.lower_}"
        return f"{not_}{verb.lower_}{particle}", f"{words}{particle}"
    if lemma == "be":
        be = _be_text(verb, auxpass=False)
        return ("IS_NOT", f"{be} not") if negation else ("IS", be)
    if negation in ("not", "n't"):
        did = any(c.lower_ == "did" for c in verb.children if c.dep_ == "aux")
        return f"DOES_NOT_{lemma}{particle}", f"{'did' if did else 'does'} not {lemma}{particle}"
    present = third_person(lemma)
    shown = verb.lower_ if verb.tag_ == "VBD" else present
    if negation:
        return f"DOES_NOT_{lemma}{particle}", f"{negation} {shown}{particle}"
    return f"{present}{particle}", f"{shown}{particle}"


def negation_of(verb: Token) -> str | None:
    """`not`/`n't`/`never`, or `no longer`; None when the verb is not negated."""
    for child in verb.children:
        if child.dep_ == "neg":
            return child.lower_
        if child.dep_ == "advmod" and any(g.dep_ == "neg" for g in child.children):
            negator = next(g for g in child.children if g.dep_ == "neg")
            return f"{negator.lower_} {child.lower_}"
    return None


def _be_text(verb: Token, *, auxpass: bool) -> str:
    be = next((c for c in verb.children if c.dep_ == "auxpass"), None) if auxpass else verb
    return "was" if be is not None and be.lower_ in ("was", "were") else "is"


def third_person(lemma: str) -> str:
    """like -> likes, watch -> watches, study -> studies, have -> has, be -> is."""
    irregular = {"be": "is", "have": "has"}
    if lemma in irregular:
        return irregular[lemma]
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return f"{lemma}es"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return f"{lemma[:-1]}ies"
    return f"{lemma}s"


def article(word: str) -> str:
    return "an" if word[:1].casefold() in "aeiou" else "a"


def possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") and name != USER else f"{name}'s"


def predicate_of(words: str) -> str | None:
    """UPPER_SNAKE_CASE, as every door makes it ("protégé of": PROTÉGÉ_OF), or None when
    nothing valid is left."""
    try:
        return normalize_predicate(words)
    except ValueError:
        return None
