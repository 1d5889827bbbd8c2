"""How people write in chat, read as the grammar rules expect it.

- informal contractions spelled out before parsing ("wanna" -> "want to");
- a dropped subject is the speaker ("Lost my job yesterday", "Been doing some promotion");
- a statement with a question tag is a statement ("I started a store - cool, huh?");
- an -ing clause says what its head's subject did ("went camping with the kids" ->
  CAMPS_WITH kids, "had a blast exploring the forest" -> EXPLORES forest);
- "have been to Paris" -> VISITS Paris;
- an adjective after "be" joins its predicate ("I'm passionate about dancing" ->
  IS_PASSIONATE_ABOUT dancing);
- a content verb the tagger took for an auxiliary before an -ing form ("Kate loves cooking",
  parsed as "Kate is cooking") is the verb, and the -ing form its object;
- a verb's common-noun object joins the predicate of the verb's prepositions ("lost my job at
  Door Dash" -> LOSES_JOB_AT Door Dash): the preposition says where the job was, not where
  the subject lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.extraction.offline.verbs import verb_words
from engine.extraction.offline.vocab import (
    AUXILIARIES,
    FINITE_TAGS,
    IRREGULAR_PAST,
    QUESTION_TAGS,
)

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

_INFORMAL = {"wanna": "want to", "gonna": "going to", "gotta": "got to", "cuz": "because"}
_INFORMAL_WORD = re.compile(r"\b(" + "|".join(_INFORMAL) + r")\b", re.IGNORECASE)
_SUBJECTS = frozenset({"nsubj", "nsubjpass", "expl", "csubj"})
_BEFORE_DROPPED = frozenset({"INTJ", "ADV", "PUNCT", "CCONJ", "SPACE"})
_TAG = re.compile(r"[,\u2013\u2014-]\s*([\w' ]+?)\s*\?+\s*$")
_SPENDING = frozenset({"have", "spend"})  # "had a blast exploring", "spent the day baking"
_PERFECT = frozenset({"have", "'ve", "has", "had", "'d"})


def spoken_text(text: str) -> str:
    """`text` with chat's informal contractions written out ("gonna" -> "going to")."""

    def spell(match: re.Match[str]) -> str:
        words = _INFORMAL[match[0].casefold()]
        return words.capitalize() if match[0][0].isupper() else words

    return _INFORMAL_WORD.sub(spell, text)


def asks(sent: Span) -> bool:
    """The sentence is a question; a statement with a tag ("I started a store - cool, huh?",
    "..., right?") is not."""
    text = sent.text.rstrip()
    if not text.endswith("?"):
        return False
    tag = _TAG.search(text)
    return tag is None or tag[1].casefold() not in QUESTION_TAGS


def mend_past_forms(doc: Doc, lemmatize: Callable[[Token], list[str]] | None) -> None:
    """A tagger often takes a sentence-initial past form for an imperative ("Lost my job
    yesterday"): such a verb, with no subject, is retagged past and lemmatized again."""
    from spacy.tokens import MorphAnalysis  # the pipeline is loaded: spaCy is

    for sent in doc.sents:
        verb = next((t for t in sent if t.pos_ not in _BEFORE_DROPPED), None)
        if verb is None or verb.tag_ != "VB" or not _past_form(verb.lower_):
            continue
        if any(c.dep_ in _SUBJECTS for c in verb.children):
            continue
        verb.tag_ = "VBD"
        verb.morph = MorphAnalysis(verb.vocab, "Tense=Past|VerbForm=Fin")
        if lemmatize is not None:
            verb.lemma_ = next(iter(lemmatize(verb)), verb.lemma_)


def mend_false_auxiliaries(doc: Doc, lemmatize: Callable[[Token], list[str]] | None) -> None:
    """A finite content verb the parser hung as an auxiliary under an -ing form ("Kate loves
    cooking" read as "Kate is cooking", which states nothing): it heads the sentence again,
    with the -ing form as its object and the form's words before it as its own."""
    for verb in doc:
        head = verb.head
        if not _false_auxiliary(verb, head, lemmatize):
            continue
        words = [c for c in head.children if (c.i != verb.i and c.i < head.i) or c.dep_ == "punct"]
        verb.head = verb
        verb.dep_, verb.pos_ = "ROOT", "VERB"
        if lemmatize is not None:
            verb.lemma_ = next(iter(lemmatize(verb)), verb.lemma_)
        head.head, head.dep_ = verb, "dobj"
        for word in words:
            word.head = verb


def _false_auxiliary(
    verb: Token, head: Token, lemmatize: Callable[[Token], list[str]] | None
) -> bool:
    if verb.dep_ != "aux" or head.tag_ != "VBG" or verb.tag_ not in FINITE_TAGS:
        return False
    if not verb.is_alpha or verb.i > head.i or head.dep_ != "ROOT":
        return False
    lemmas = {verb.lower_, verb.lemma_, *(lemmatize(verb) if lemmatize is not None else [])}
    return not AUXILIARIES & {lemma.casefold() for lemma in lemmas}


def _past_form(word: str) -> bool:
    return word.endswith("ed") or word in IRREGULAR_PAST


def dropped_subject(verb: Token) -> bool:
    """A statement about the past or the present that opens with its verb and has no subject
    ("Went hiking yesterday", "Been to Rome once", "Been doing some promotion"): in chat,
    its subject is the one speaking."""
    if not _opens_statement(verb) or any(c.dep_ in _SUBJECTS for c in verb.children):
        return False
    if any(c.dep_ == "auxpass" for c in verb.children) or verb.dep_ in ("conj", "relcl"):
        return False
    before = [t for t in verb.doc[verb.sent.start : verb.i] if t.lower_ != "been"]
    return all(t.pos_ in _BEFORE_DROPPED for t in before)


def _opens_statement(verb: Token) -> bool:
    """A past form, or an -ing form heading its sentence ("Working on a new song")."""
    return verb.tag_ in ("VBD", "VBN") or (verb.tag_ == "VBG" and verb.dep_ == "ROOT")


def clause_words(verb: Token) -> tuple[str, str]:
    """(predicate, words for the sentence) of a clause: `verb_words`, and for "be" the place
    visited or the adjective that says what the subject is."""
    predicate, words = verb_words(verb)
    if verb.lemma_.casefold() != "be" or predicate not in ("IS", "IS_NOT"):
        return predicate, words
    if predicate == "IS" and _visited(verb):
        return "VISITS", "visited"
    adjective = next((c for c in verb.children if c.dep_ == "acomp" and c.pos_ == "ADJ"), None)
    if adjective is not None:
        return f"{predicate}_{adjective.lemma_}", f"{words} {adjective.lower_}"
    return predicate, words


def prep_words(predicate: str, verb_text: str, word: str) -> tuple[str, str]:
    """The predicate and words a preposition makes with its verb ("visited" takes "to" as
    its object: VISITS Paris, not VISITS_TO)."""
    if predicate == "VISITS" and word == "to":
        return predicate, verb_text
    return f"{predicate}_{word}", f"{verb_text} {word}"


def _visited(verb: Token) -> bool:
    """ "have been to X" (or chat's "been to X"): X was visited."""
    perfect = verb.tag_ == "VBN" and (
        any(c.lower_ in _PERFECT for c in verb.children if c.dep_ == "aux")
        or not any(c.dep_ == "nsubj" for c in verb.children)
    )
    return perfect and any(c.dep_ == "prep" and c.lower_ == "to" for c in verb.children)


def object_noun(verb: Token) -> Token | None:
    """The verb's direct object when it is a common noun (not a name, pronoun or gerund)."""
    for child in verb.children:
        if child.dep_ == "dobj" and child.pos_ == "NOUN" and child.tag_ != "VBG":
            return child
    return None


def participle_clause(verb: Token) -> bool:
    """An -ing clause with no subject of its own that says what the subject of its head did
    ("went camping with the kids", "had a blast exploring the forest"; not "a concert
    featuring Matt", which the concert does)."""
    if verb.tag_ != "VBG" or any(c.dep_ in _SUBJECTS for c in verb.children):
        return False
    if verb.dep_ == "advcl":
        return not any(c.dep_ == "mark" for c in verb.children)
    thing = verb.head
    spent = thing.dep_ == "dobj" and thing.head.lemma_.casefold() in _SPENDING
    return verb.dep_ == "acl" and spent
