"""A verb's lemma where the tagger's lemmatizer drops a silent "e": it reads "hoping" and
"hoped" as "hop", "coping" as "cop", "riding" as "rid", since both forms are verbs it knows and
its rules try "hop" too. English doubles the final consonant of such a short verb before
"-ing" and "-ed" ("hop" -> "hopping", "hopped"), so a single consonant after a single vowel
says the verb ends in "e": "hoping" is "hope". A verb it does not know with the "e" keeps its
lemma ("visiting" -> "visit", "opened" -> "open"). The third person says it too: "-es"
follows only an "s", "x", "z", "ch", "sh" or "o" ("fixes", "goes"), so "hates", "rides" and
"hopes", read as "hat", "rid" and "hop", are "hate", "ride" and "hope".
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc

_INFLECTED = ("VBG", "VBD", "VBN", "VBZ")
_SUFFIXES = ("ing", "ed")
_BEFORE_ES = ("s", "x", "z", "ch", "sh", "o")  # the endings "-es" follows
_VOWELS = frozenset("aeiou")
_NEVER_DOUBLED = frozenset("wxy")  # "snowing", "fixing", "playing": no "e" dropped either


def with_silent_e(word: str, lemma: str, verbs: Collection[str]) -> str | None:
    """The lemma of `word` ("hoping") when the lemmatizer's `lemma` ("hop") dropped its "e"
    and `verbs` knows the verb with it; None when `lemma` stands."""
    if word.endswith("es"):
        third = word[:-2]
        known = third == lemma and f"{third}e" in verbs
        return f"{third}e" if known and not third.endswith(_BEFORE_ES) else None
    stem = next((word[: -len(s)] for s in _SUFFIXES if word.endswith(s)), None)
    if stem != lemma or len(stem) < 3 or f"{stem}e" not in verbs:
        return None
    consonant, vowel, before = stem[-1], stem[-2], stem[-3]
    if consonant in _VOWELS or consonant in _NEVER_DOUBLED:
        return None
    return f"{stem}e" if vowel in _VOWELS and before not in _VOWELS else None


def mend_silent_e(doc: Doc, verbs: Collection[str]) -> None:
    """Give each inflected verb of `doc` whose lemma dropped a silent "e" its lemma."""
    for token in doc:
        if token.tag_ in _INFLECTED:
            lemma = with_silent_e(token.lower_, token.lemma_, verbs)
            if lemma is not None:
                token.lemma_ = lemma
