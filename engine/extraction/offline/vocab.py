"""The words the offline rules know, and the two small values they pass around."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

USER = "USER"
USER_ROLES = frozenset({"user", "human"})
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "we", "us", "our", "ours"})
THIRD_PERSON = frozenset({"he", "him", "his", "she", "her", "hers"})
RELATIVE_PRONOUNS = frozenset({"who", "whom", "which", "that"})
CLAUSE_DEPS = frozenset({"ROOT", "conj", "ccomp", "advcl", "relcl", "parataxis"})
FINITE_TAGS = frozenset({"VBZ", "VBD", "VBP"})  # a verb that heads a clause of its own
NAMING_VERBS = frozenset({"call", "name"})
NOUN_MODIFIERS = frozenset({"compound", "amod", "nmod", "nummod", "quantmod"})
NOT_IN_PHRASE = frozenset(
    {"advmod", "npadvmod", "punct", "cc", "conj", "mark", "aux", "neg", "advcl", "nsubj", "dep"}
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NER_TYPES = {
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
VALUE_LABELS = frozenset({"DATE", "TIME", "PERCENT", "MONEY", "QUANTITY", "ORDINAL", "CARDINAL"})
# Nouns that name a person or an animal by its role: they type the names attached to them.
PERSON_NOUNS = _words("""friend boyfriend girlfriend partner wife husband spouse fiance fiancee
    mother father mom mum dad parent son daughter child kid baby brother sister sibling cousin
    uncle aunt nephew niece grandmother grandfather grandma grandpa grandson granddaughter
    colleague coworker boss manager neighbor neighbour classmate roommate teammate teacher
    doctor mentor student coach""")
ANIMAL_NOUNS = _words("""dog cat puppy kitten pet horse rabbit bunny hamster parrot bird fish
    turtle snake lizard pony pig ferret goldfish""")
# Roles that hold both ways: "my friend Peter" -> USER FRIEND_OF Peter.
MUTUAL = _words("""friend partner colleague coworker neighbor neighbour classmate roommate
    teammate cousin sibling""")
# Where-prepositions on a verb's object that still say where the subject does it:
# "works as a teacher in Berlin" -> WORKS_IN Berlin.
PLACE_PREPOSITIONS = frozenset({"in", "at", "near"})
# Prepositions that belong to the noun they follow ("a cup of tea"): not a separate fact.
OWN_PREPOSITIONS = frozenset({"of"})
PLACE_TYPES = frozenset({"Place", "Organization"})
# Past forms of common irregular verbs that are not also their base form ("lost", not "put"):
# a sentence that opens with one and has no subject is the speaker's past ("Lost my job").
IRREGULAR_PAST = _words("""went gone lost got made took taken saw seen met found bought brought
    thought felt left came did done said told gave given kept ran won began begun wrote written
    sent spent built taught caught fought heard held paid sold sat stood slept swam drove driven
    flew flown ate eaten drank forgot forgotten knew known grew grown threw wore worn broke
    broken chose chosen spoke spoken woke rode sang sung fell fallen became bit hid led lent
    meant shot shook stole struck swore tore understood wept""")
# The lemmas and forms of English auxiliaries: any other verb the parser hangs as one
# ("Kate loves cooking") is a content verb it misread.
AUXILIARIES = _words("""be have do will would shall should may might can could must ought
    need dare get let use am is are was were been being has had does did gets got""")
# What a statement ends on to ask for agreement: "I started a store - pretty cool, huh?"
QUESTION_TAGS = frozenset(
    {
        "right",
        "huh",
        "eh",
        "yeah",
        "you know",
        "ya know",
        "isn't it",
        "doesn't it",
        "don't they",
        "don't you",
        "isn't she",
        "isn't he",
        "wasn't it",
        "didn't it",
        "aren't they",
    }
)
POSITIVE = frozenset({"LIKES", "LOVES", "ENJOYS", "ADORES", "PREFERS"})
NEGATIVE = frozenset({"HATES", "DISLIKES", "DETESTS", "LOATHES"})
SINGLE_VALUED = frozenset({"HAS_NAME", "LIVES_IN"})


@dataclass(frozen=True)
class Ref:
    """An entity as a fact names it."""

    name: str
    type: str = "Thing"


@dataclass(frozen=True)
class Arg:
    """One object of a verb: the predicate it gives and the verb's words for the sentence."""

    predicate: str
    verb_text: str
    target: Token


USER_REF = Ref(USER, "Person")
