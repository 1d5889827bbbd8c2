"""Clauses: the facts a verb, a copula or a naming verb states, read off the parse."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.extraction.offline.collector import Collector
from engine.extraction.offline.dates import Dated, clause_date
from engine.extraction.offline.phrases import (
    is_value,
    name_token,
    owner_token,
    phrase,
    places,
    relation,
    resolve,
    role_type,
    role_words,
    text_phrase,
    value_ref,
)
from engine.extraction.offline.speech import (
    asks,
    clause_words,
    dropped_subject,
    object_noun,
    participle_clause,
    prep_words,
)
from engine.extraction.offline.verbs import article, negation_of, possessive, verb_words
from engine.extraction.offline.vocab import (
    CLAUSE_DEPS,
    FINITE_TAGS,
    FIRST_PERSON,
    NAMING_VERBS,
    NER_TYPES,
    OWN_PREPOSITIONS,
    PLACE_PREPOSITIONS,
    RELATIVE_PRONOUNS,
    Arg,
    Ref,
)
from engine.normalize import stable_uid

_OBJECTS = frozenset({"dobj", "xcomp"})  # where a parser hangs a verb coordinated with its own

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token


def read_doc(doc: Doc, out: Collector) -> None:
    """Every statement of one message (questions are skipped) into `out`."""
    statements = [t for sent in doc.sents if not asks(sent) for t in sent]
    for tok in statements:
        if tok.pos_ in ("VERB", "AUX") and (tok.dep_ in CLAUSE_DEPS or participle_clause(tok)):
            _clause(tok, out)
    for tok in statements:
        if tok.pos_ in ("NOUN", "PROPN") and owner_token(tok) is not None:
            resolve(tok, out)  # "... with my friend Peter": the relation alone
    for ent in doc.ents:
        if ent.label_ in NER_TYPES:
            out.entity(Ref(ent.text, NER_TYPES[ent.label_]))


def _clause(verb: Token, out: Collector) -> None:
    lemma = verb.lemma_.casefold()
    if lemma in NAMING_VERBS and _named_by_verb(verb, out):
        return
    if lemma == "be":
        _copula(verb, out)
    subjects = [r for r in (resolve(s, out) for s in _subjects(verb)) if r is not None]
    if not subjects and dropped_subject(verb):
        subjects = [out.speaker]
    args = _arguments(verb, *clause_words(verb))
    when = clause_date(verb, out.sent_at) if subjects and args else None
    for arg in args:
        with out.together(_coordination(arg.target)):
            _argument_facts(verb, arg, subjects, out, when)


def _argument_facts(
    verb: Token, arg: Arg, subjects: list[Ref], out: Collector, when: Dated | None
) -> None:
    target = resolve(arg.target, out)
    if target is None:
        return
    for subject in subjects:
        named = _have_named(verb, arg, subject, target)
        pred, text = named or (
            arg.predicate,
            f"{subject.name} {arg.verb_text} {text_phrase(arg.target)}",
        )
        out.add(subject, pred, target, text, when)
        for other in _more_names(arg.target, out) if named else []:
            pred, text = _have_named(verb, arg, subject, other) or (pred, text)
            out.add(subject, pred, other, text, when)


def _more_names(noun: Token, out: Collector) -> list[Ref]:
    """The names coordinated with the one a role noun carries ("two sisters, Ann and Beth")."""
    name = name_token(noun)
    more = [] if name is None or name is noun else name.conjuncts
    return [r for r in (resolve(c, out) for c in more if c.pos_ == "PROPN") if r is not None]


def _subjects(verb: Token) -> list[Token]:
    """The verb's subjects, shared down a coordination ("I like tea but hate coffee")."""
    subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")]
    if len(subjects) > 1:  # not coordinated: one names whom the sentence is said to
        subjects = [s for s in subjects if not _addressed(s)] or subjects
    if not subjects and verb.dep_ == "conj" and verb.head is not verb:
        head = verb.head  # "loves reading and plays chess": "plays" hung under the object
        return _subjects(head.head if _own_clause(verb) and head.dep_ in _OBJECTS else head)
    if not subjects and participle_clause(verb):
        return _subjects(_clause_head(verb))
    found: list[Token] = []
    for subject in subjects:
        if subject.lower_ in RELATIVE_PRONOUNS and verb.dep_ == "relcl":
            subject = verb.head
        found.extend(_coordinated(subject))
    return found


def _addressed(subject: Token) -> bool:
    """A name set off by a comma beside the verb's other subject: the one spoken to ("Hey
    Caroline, I've had a lot happening", which the parser gives two subjects)."""
    after = subject.i + 1
    return subject.pos_ == "PROPN" and after < len(subject.doc) and subject.doc[after].text == ","


def _clause_head(verb: Token) -> Token:
    """The verb whose clause `verb` hangs from (through its object: "had a blast exploring")."""
    return verb.head.head if verb.dep_ == "acl" else verb.head


def _coordinated(tok: Token) -> list[Token]:
    """`tok` and the words coordinated with it that are not clauses of their own."""
    extra = [c for c in tok.conjuncts if not any(g.dep_ == "nsubj" for g in c.children)]
    if not _own_clause(tok):
        extra = [c for c in extra if not _own_clause(c)]
    return sorted({tok, *extra}, key=lambda t: t.i)


def _coordination(tok: Token) -> str | None:
    """What names the coordination `tok` is one of ("Rome and Madrid", "both X and Y"): the
    same for each of its words, another for any other (its message's words and where it
    begins: one add may hold slices read apart); None when `tok` stands alone."""
    words = _coordinated(tok)
    if tok.dep_ in ("pobj", "pcomp"):  # "in Rome and in Madrid": the prepositions' words
        preps = _coordinated_preps(tok.head)
        words = [
            w for p in preps for c in p.children if c.dep_ == tok.dep_ for w in _coordinated(c)
        ]
    if len(words) < 2:
        return None
    return f"{stable_uid(tok.doc.text)}:{min(w.i for w in words)}"


def _coordinated_preps(prep: Token) -> list[Token]:
    """`prep` and the prepositions coordinated with it ("in Rome and in Madrid")."""
    return sorted({prep, *(c for c in prep.conjuncts if c.pos_ == "ADP")}, key=lambda t: t.i)


def _own_clause(tok: Token) -> bool:
    """A finite verb: coordinated with an object, it says a clause of its own ("loves reading
    and plays chess"), never a second object."""
    return tok.pos_ == "VERB" and tok.tag_ in FINITE_TAGS


def _arguments(verb: Token, predicate: str, verb_text: str) -> list[Arg]:
    args: list[Arg] = []
    thing = object_noun(verb)
    for child in verb.children:
        if child.dep_ == "dobj":
            args += [Arg(predicate, verb_text, t) for t in _coordinated(child)]
            args += _place_arguments(predicate, verb_text, child)
            args += _object_prep_arguments(predicate, verb_text, child)
        elif child.dep_ == "xcomp":
            args += _xcomp_arguments(predicate, verb_text, child)
        elif child.dep_ == "acomp":  # "passionate about dancing": the adjective's own object
            preps = [c for c in child.children if c.dep_ == "prep"]
            args += [a for prep in preps for a in _prep_arguments(predicate, verb_text, prep)]
        elif child.dep_ in ("prep", "agent") and thing is not None:
            # "lost my job at Door Dash": where the job was lost, not where Kate lost
            args += _prep_arguments(
                f"{predicate}_{thing.lemma_}", f"{verb_text} {thing.lemma_}", child
            )
        elif child.dep_ in ("prep", "agent"):
            args += _prep_arguments(predicate, verb_text, child)
    return args


def _object_prep_arguments(predicate: str, verb_text: str, noun: Token) -> list[Arg]:
    """A common noun object's own preposition: "lost my job as a banker" -> LOSES_JOB_AS."""
    if noun.pos_ != "NOUN":
        return []
    args = []
    for prep in noun.children:
        if prep.dep_ == "prep" and prep.lower_ not in OWN_PREPOSITIONS | PLACE_PREPOSITIONS:
            args += _prep_arguments(
                f"{predicate}_{noun.lemma_}", f"{verb_text} {noun.lemma_}", prep
            )
    return args


def _xcomp_arguments(predicate: str, verb_text: str, xcomp: Token) -> list[Arg]:
    """`like playing badminton` -> LIKES; `want to learn Spanish` -> WANTS_TO_LEARN."""
    if xcomp.tag_ == "VBG" or xcomp.pos_ != "VERB":
        return [Arg(predicate, verb_text, t) for t in _coordinated(xcomp)]
    lemma = xcomp.lemma_.casefold()
    inner = _arguments(xcomp, f"{predicate}_TO_{lemma}", f"{verb_text} to {lemma}")
    return inner or [Arg(f"{predicate}_TO", f"{verb_text} to", xcomp)]


def _prep_arguments(predicate: str, verb_text: str, prep: Token) -> list[Arg]:
    """The objects of `prep` and of the prepositions coordinated with it ("in Rome and in
    Madrid")."""
    args = []
    for each in _coordinated_preps(prep):
        pred, text = prep_words(predicate, verb_text, each.lower_)
        objects = [c for c in each.children if c.dep_ in ("pobj", "pcomp")]
        args += [Arg(pred, text, t) for obj in objects for t in _coordinated(obj)]
        args += [a for obj in objects for a in _place_arguments(predicate, verb_text, obj)]
    return args


def _place_arguments(predicate: str, verb_text: str, noun: Token) -> list[Arg]:
    """A named place on the verb's object still says where: "works as a teacher in Berlin"
    -> WORKS_IN Berlin, "work at a bakery in Oslo" -> WORKS_IN Oslo."""
    args = []
    for prep in noun.children:
        word = prep.lower_
        args += [Arg(f"{predicate}_{word}", f"{verb_text} {word}", p) for p in places(prep)]
    return args


def _have_named(verb: Token, arg: Arg, subject: Ref, target: Ref) -> tuple[str, str] | None:
    """`John has a dog named Tommy` -> HAS_DOG Tommy."""
    noun = arg.target
    if verb.lemma_.casefold() != "have" or arg.predicate.upper() != "HAS" or noun.pos_ != "NOUN":
        return None
    if name_token(noun) in (None, noun):
        return None
    role = role_words(noun)
    return f"HAS_{role}", f"{subject.name} has {article(role)} {role} named {target.name}"


# ---------------------------------------------------------------------------- copulas, names


def _copula(verb: Token, out: Collector) -> None:
    """`X is Y`: a name (`My friend is John`), an owned attribute, or IS."""
    values = [t for c in verb.children if c.dep_ in ("attr", "acomp") for t in _coordinated(c)]
    values = [v for v in values if not _adjective_with_object(v)]
    for subject in _subjects(verb):
        for value in values:
            with out.together(_coordination(value)):
                _copula_fact(verb, subject, value, out)


def _adjective_with_object(value: Token) -> bool:
    """ "allergic to peanuts": the clause says IS_ALLERGIC_TO peanuts, which holds IS allergic."""
    preps = (c for c in value.children if c.dep_ == "prep")
    return value.pos_ == "ADJ" and any(
        g.dep_ in ("pobj", "pcomp") for p in preps for g in p.children
    )


def _copula_fact(verb: Token, subject: Token, value: Token, out: Collector) -> None:
    if not is_value(value):
        return
    negated = negation_of(verb) is not None
    unnamed_owned = owner_token(subject) is not None and name_token(subject) is None
    is_name = value.pos_ == "PROPN" or subject.lemma_.casefold() == "name"
    if not negated and unnamed_owned and is_name and _assign_name(subject, value_ref(value), out):
        return
    if not negated and unnamed_owned and role_type(subject) is None:
        _owned_attribute(subject, value, out)
        return
    if not negated and _owned_value(subject, value) and is_value(subject):
        _owned_attribute(value, subject, out)  # "Paris is my favorite city"
        return
    source, target = resolve(subject, out), resolve(value, out)
    if source is not None and target is not None:
        pred, words = verb_words(verb)
        text = f"{source.name} {words} {text_phrase(value)}"
        out.add(source, pred, target, text, clause_date(verb, out.sent_at))


def _owned_value(subject: Token, value: Token) -> bool:
    """`value` is someone's attribute and `subject` a thing ("Paris is my favorite city")."""
    if owner_token(subject) is not None or value.pos_ != "NOUN" or role_type(value) is not None:
        return False
    return owner_token(value) is not None and name_token(value) is None


def _owned_attribute(subject: Token, value: Token, out: Collector) -> None:
    """`My favorite color is blue` -> USER HAS_FAVORITE_COLOR blue."""
    owner_tok = owner_token(subject)
    owner = resolve(owner_tok, out) if owner_tok is not None else None
    target = resolve(value, out)
    if owner is None or target is None:
        return
    attribute = phrase(subject)
    text = f"{possessive(owner.name)} {attribute} is {text_phrase(value)}"
    out.add(owner, f"HAS_{attribute}", target, text)


def _named_by_verb(verb: Token, out: Collector) -> bool:
    """`My friend is called John` / `I named my dog Rex`: the named thing gets its name."""
    names = [c for c in verb.children if c.dep_ in ("oprd", "attr") and is_value(c)]
    passive = any(c.dep_ == "auxpass" for c in verb.children)
    named = [c for c in verb.children if c.dep_ == ("nsubjpass" if passive else "dobj")]
    if not names or not named or negation_of(verb) is not None:
        return False
    for thing in named:
        name = value_ref(names[0])
        if not _assign_name(thing, name, out):
            source = resolve(thing, out)
            if source is not None:
                out.add(source, "HAS_NAME", name, f"{possessive(source.name)} name is {name.name}")
    return True


def _assign_name(subject: Token, name: Ref, out: Collector) -> bool:
    """Give `subject` (me, my name, my friend, my wife's name) the name; False if it can't."""
    if subject.lower_ in FIRST_PERSON:
        speaker = out.speaker
        ref = Ref(name.name, "Person")
        out.add(speaker, "HAS_NAME", ref, f"{possessive(speaker.name)} name is {name.name}")
        return True
    owner_tok = owner_token(subject)
    if owner_tok is None or name_token(subject) is not None:
        return False
    if subject.lemma_.casefold() == "name":
        return _assign_name(owner_tok, name, out)
    owner = resolve(owner_tok, out)
    if owner is None:
        return False
    out.add(*relation(owner, subject, Ref(name.name, role_type(subject) or name.type)))
    return True
