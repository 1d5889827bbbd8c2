"""Noun phrases: which entity a phrase names, its type, and the relations it implies."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from engine.extraction.offline.collector import Collector
from engine.extraction.offline.speech import participle_clause
from engine.extraction.offline.verbs import article, possessive
from engine.extraction.offline.vocab import (
    ANIMAL_NOUNS,
    FIRST_PERSON,
    MUTUAL,
    NAMING_VERBS,
    NER_TYPES,
    NOT_IN_PHRASE,
    NOUN_MODIFIERS,
    PERSON_NOUNS,
    PLACE_PREPOSITIONS,
    PLACE_TYPES,
    THIRD_PERSON,
    VALUE_LABELS,
    Ref,
)

if TYPE_CHECKING:
    from spacy.tokens import Span, Token


def resolve(tok: Token, out: Collector) -> Ref | None:
    """The entity a noun phrase names, recording the relations it implies ("my friend Peter")."""
    if tok.lower_ in FIRST_PERSON:
        return out.speaker
    if tok.lower_ in THIRD_PERSON:
        return _antecedent(tok)
    if tok.pos_ in ("PRON", "DET", "NUM") or tok.ent_type_ in VALUE_LABELS:
        return None
    owner_tok, name_tok = owner_token(tok), name_token(tok)
    owner = resolve(owner_tok, out) if owner_tok is not None else None
    if name_tok is None:
        if owner is not None:
            return Ref(f"{possessive(owner.name)} {thing_phrase(tok)}", noun_type(tok))
        return Ref(thing_phrase(tok), noun_type(tok))
    role = _role_token(tok, name_tok)
    ref = Ref(
        phrase(name_tok), (role_type(role) if role is not None else None) or noun_type(name_tok)
    )
    if owner is not None and role is not None:
        out.add(*relation(owner, role, ref))
    return ref


def relation(owner: Ref, role: Token, named: Ref) -> tuple[Ref, str, Ref, str]:
    """USER + friend + Peter -> USER FRIEND_OF Peter; USER + dog + Rex -> USER HAS_DOG Rex."""
    words = role_words(role)
    if role.lemma_.casefold() in MUTUAL:
        return owner, f"{words}_OF", named, f"{named.name} is {possessive(owner.name)} {words}"
    if role.lemma_.casefold() == "name":
        return owner, "HAS_NAME", named, f"{possessive(owner.name)} name is {named.name}"
    text = f"{owner.name} has {article(words)} {words} named {named.name}"
    return owner, f"HAS_{words}", named, text


def role_words(role: Token) -> str:
    """The role noun phrase in the singular: "kids" -> "kid", "best friends" -> "best friend"."""
    count = {c for c in role.children if c.dep_ == "nummod"}  # "two sisters": a sister each
    named = _join(t for t in _noun_words(role) if t not in count) if count else phrase(role)
    words = named.casefold()
    if words.endswith(role.lower_):
        words = words[: len(words) - len(role.lower_)] + role.lemma_.casefold()
    return words


def _antecedent(pronoun: Token) -> Ref | None:
    """he/she/him/her/his: the one person named before it in the message, if only one is."""
    names = {e.text for e in pronoun.doc.ents if e.label_ == "PERSON" and e.end <= pronoun.i}
    return Ref(names.pop(), "Person") if len(names) == 1 else None


def owner_token(tok: Token) -> Token | None:
    """Whose it is: the possessive ("my", "John's") on the noun or on its role noun."""
    for child in tok.children:
        if child.dep_ == "poss":
            return child
    if tok.pos_ == "PROPN":
        for child in tok.children:
            if _says_what(tok, child):
                return next((c for c in child.children if c.dep_ == "poss"), None)
    return None


def name_token(tok: Token) -> Token | None:
    """The proper name a noun phrase carries: itself, an apposition, or `called`/`named` X."""
    if tok.pos_ == "PROPN":
        return tok
    for child in tok.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            return child
        if child.dep_ == "acl" and child.lemma_.casefold() in NAMING_VERBS:
            for grandchild in child.children:
                if grandchild.dep_ in ("oprd", "attr", "dobj"):
                    return grandchild
    return None


def _role_token(tok: Token, name: Token) -> Token | None:
    """The common noun that says what a named thing is to its owner ("friend", "dog")."""
    if name is not tok:
        return tok
    for child in tok.children:
        if _says_what(tok, child):
            return child
    return None


def _says_what(name: Token, noun: Token) -> bool:
    """`noun` says what `name` is ("my friend Peter", "John, my brother"): not a noun heading a
    list, nor a plural beside one name ("Melanie, my kids and I went camping": three people)."""
    if noun.pos_ != "NOUN" or noun.dep_ not in ("compound", "appos"):
        return False
    if noun.dep_ == "compound":
        return True
    listed = any(c.dep_ == "conj" for c in noun.children)
    plural = noun.tag_ == "NNS" and not any(c.dep_ == "conj" for c in name.children)
    return not (listed or plural)


def phrase(tok: Token) -> str:
    """The name of what `tok` heads: an entity span, a gerund phrase, or noun + modifiers."""
    span = entity_span(tok)
    if span is not None:
        return _join([*_name_before(tok, span), *span])
    if tok.pos_ in ("VERB", "AUX"):
        kept = [c for c in tok.children if c.dep_ not in NOT_IN_PHRASE and not _names_someone(c)]
        return _join([tok, *(t for c in kept for t in c.subtree)])
    return _join(_noun_words(tok))


def thing_phrase(tok: Token) -> str:
    """What a fact's subject or object names: `phrase`, and for a common noun what its short
    right modifiers add ("a charity race for mental health", "a group of hikers"). A modifier
    naming a place is left to its own fact ("a teacher in Berlin": WORKS_IN Berlin)."""
    if tok.pos_ != "NOUN" or entity_span(tok) is not None:
        return phrase(tok)
    words = _noun_words(tok)
    for child in tok.rights:
        if child.dep_ not in ("prep", "acl") or participle_clause(child) or places(child):
            continue
        more = [t for t in _subtree(child) if t.dep_ != "det" and t.tag_ != "PRP$"]
        if len(words) + len(more) > _NAME_WORDS:
            break
        words += more
    return _join(words).rstrip(_TRAILING)


def places(prep: Token) -> list[Token]:
    """The named places a where-preposition points at ("in Berlin"); none for other words."""
    if prep.dep_ != "prep" or prep.lower_ not in PLACE_PREPOSITIONS:
        return []
    found = []
    for place in (c for c in prep.children if c.dep_ == "pobj"):
        span = entity_span(place)
        if span is not None and NER_TYPES.get(span.label_) in PLACE_TYPES:
            found.append(place)
    return found


def _noun_words(tok: Token) -> list[Token]:
    proper = tok.pos_ == "PROPN"
    keep = [tok]
    for child in tok.lefts:
        modifier = child.dep_ in NOUN_MODIFIERS and (not proper or child.pos_ == "PROPN")
        if modifier or child.tag_ == "HYPH":
            keep.extend(child.subtree)
    return keep


def _subtree(tok: Token) -> list[Token]:
    """`tok` and its dependents, without clauses of their own and appositions."""
    words = [tok]
    for child in tok.children:
        if child.dep_ not in ("relcl", "appos", "advcl"):
            words += _subtree(child)
    return words


_NAME_WORDS = 12
_TRAILING = " ,;:-\u2013\u2014"


def _names_someone(prep: Token) -> bool:
    """A prepositional phrase about a person or a name ("with my friend Peter"): not an activity."""
    return prep.dep_ == "prep" and any(t.pos_ in ("PROPN", "PRON") for t in prep.subtree)


def text_phrase(tok: Token) -> str:
    """The phrase as a sentence shows it, with its article ("a doctor")."""
    det = next((c.lower_ for c in tok.lefts if c.dep_ == "det"), None)
    if det in ("a", "an", "the") and entity_span(tok) is None:
        return f"{det} {phrase(tok)}"
    return phrase(tok)


def entity_span(tok: Token) -> Span | None:
    if not tok.ent_type_:
        return None
    for ent in tok.doc.ents:
        if ent.start <= tok.i < ent.end and ent.label_ not in VALUE_LABELS:
            return ent
    return None


def _name_before(tok: Token, span: Span) -> list[Token]:
    """The given name before a one-word person's span that the tagger left out ("Ana Lee",
    whose span is "Lee"): a capitalised proper noun right before it, in no span of its own."""
    before = tok.doc[span.start - 1] if span.start > 0 else None
    if len(span) != 1 or span.label_ != "PERSON" or before is None or before.head.i != tok.i:
        return []
    named = before.pos_ == "PROPN" and before.is_title and not before.ent_type_
    return [before] if named and before.dep_ == "compound" else []


def _join(tokens: Iterable[Token]) -> str:
    ordered = sorted({t.i: t for t in tokens}.values(), key=lambda t: t.i)
    return "".join(t.text_with_ws for t in ordered).strip()


def is_value(tok: Token) -> bool:
    """A word that can be a fact's object: not a pronoun, determiner or question word."""
    return tok.pos_ not in ("PRON", "DET") and not tok.tag_.startswith("W")


def value_ref(tok: Token) -> Ref:
    return Ref(phrase(tok), noun_type(tok))


def role_type(tok: Token | None) -> str | None:
    if tok is None:
        return None
    lemma = tok.lemma_.casefold()
    if lemma in PERSON_NOUNS:
        return "Person"
    return "Animal" if lemma in ANIMAL_NOUNS else None


def noun_type(tok: Token) -> str:
    span = entity_span(tok)
    if span is not None and span.label_ in NER_TYPES:
        return NER_TYPES[span.label_]
    role = role_type(tok)
    if role is not None:
        return role
    if tok.tag_ == "VBG" or (tok.tag_ == "NN" and tok.lower_.endswith("ing")):
        return "Activity"
    return "Thing"
