"""What one batch extracts, deduplicated, and which known facts it contradicts."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime

from engine.extraction.offline.dates import Dated
from engine.extraction.offline.verbs import possessive, predicate_of, third_person
from engine.extraction.offline.vocab import NEGATIVE, POSITIVE, SINGLE_VALUED, USER, USER_REF, Ref
from engine.extraction.schema import ExtractedEntity, ExtractedFact, Invalidation, KnownFact
from engine.normalize import entity_key

Triple = tuple[str, str, str]


class Collector:
    """Entities and facts of one batch, deduplicated; of two that contradict each other both
    are kept, the write making the last said current (`engine.add.changes`).

    `speaker` is who "I/me/my" means in the message being read; `sent_at` is when it was
    written (relative dates are read against it). The facts added `together` were said in one
    coordination ("Rome and Madrid"): they share its `ExtractedFact.said_with`.
    """

    def __init__(self, user_name: str | None) -> None:
        self.user_name = user_name
        self.entities: dict[str, ExtractedEntity] = {}
        self.facts: list[ExtractedFact] = []
        self.speaker = USER_REF
        self.sent_at: datetime | None = None
        self._said_with: str | None = None

    def entity(self, ref: Ref) -> None:
        key = entity_key(ref.name)
        old = self.entities.get(key)
        if old is None:
            self.entities[key] = ExtractedEntity(name=ref.name, type=ref.type)
        elif old.type == "Thing" and ref.type != "Thing":
            old.type = ref.type

    def add(
        self, source: Ref, predicate: str, target: Ref, text: str, when: Dated | None = None
    ) -> None:
        pred = predicate_of(predicate)
        source, target = self._said_by_name(source), self._said_by_name(target)
        text = said_by_name(text, self.speaker)
        if pred is None or not target.name or entity_key(source.name) == entity_key(target.name):
            return
        fact = ExtractedFact(
            source=source.name, predicate=pred, target=target.name, fact=text,
            valid_at=when.at if when else None, valid_unit=when.unit if when else None,
            said_with=self._said_with,
        )  # fmt: skip
        triple = fact_triple(fact.source, fact.predicate, fact.target, self.user_name)
        olds = [fact_triple(f.source, f.predicate, f.target, self.user_name) for f in self.facts]
        if triple in olds:
            self._said_again(olds.index(triple), olds)
            return
        self.entity(source)
        self.entity(target)
        self.facts.append(fact)

    @contextmanager
    def together(self, key: str | None) -> Iterator[None]:
        """The facts added inside were said in the coordination `key` names (None: none)."""
        outer, self._said_with = self._said_with, key
        try:
            yield
        finally:
            self._said_with = outer

    def _said_again(self, at: int, olds: list[Triple]) -> None:
        """A value said again after another value of its one-value fact ("Madrid. Rome.
        Madrid.") moves after it: the last said is the current one. It keeps the company of
        its last saying ("Madrid. Rome and Madrid.": both hold)."""
        self.facts[at].said_with = self._said_with
        if any(contradicts(olds[at], later) for later in olds[at + 1 :]):
            self.facts.append(self.facts.pop(at))

    def _said_by_name(self, ref: Ref) -> Ref:
        named = said_by_name(ref.name, self.speaker)
        return ref if named == ref.name else Ref(named, ref.type)

    def entity_list(self) -> list[ExtractedEntity]:
        user = self.entities.get(entity_key(USER))
        if user is not None and self.user_name and self.user_name not in user.aliases:
            user.aliases.append(self.user_name)
        return list(self.entities.values())


def said_by_name(text: str, speaker: Ref) -> str:
    """`text` with the speaker's "my", "mine", "me" and "myself" said by name: "people like
    me" said by Caroline and by Melanie are two things, and a fact read out of its message
    names whose they are ("have my friends" -> "have Caroline's friends"). In lower case only:
    a title keeps its words ("Despicable Me", "My Neighbor Totoro"). "I" stays (also a
    numeral: "World War I"), and so do "we", "us" and "our" (the speaker and others)."""

    def named(match: re.Match[str]) -> str:
        owned = match.group(0) in _POSSESSIVE_FIRST_PERSON
        return possessive(speaker.name) if owned else speaker.name

    return _FIRST_PERSON_WORD.sub(named, text)


_POSSESSIVE_FIRST_PERSON = frozenset({"my", "mine"})
_FIRST_PERSON_WORD = re.compile(r"\b(?:my|mine|me|myself)\b")


def fact_triple(source: str, predicate: str, target: str, user_name: str | None) -> Triple:
    """Comparable form: keys for names (the user's name counts as USER)."""
    key = entity_key(source)
    if user_name and key == entity_key(user_name):
        key = entity_key(USER)
    return key, predicate, entity_key(target)


def _polarity(predicate: str) -> tuple[str, bool]:
    """DOES_NOT_LIVE_IN -> (LIVES_IN, False); IS_NOT -> (IS, False); LIKES -> (LIKES, True)."""
    if predicate.startswith("DOES_NOT_"):
        head, _, tail = predicate.removeprefix("DOES_NOT_").partition("_")
        base = third_person(head.casefold()).upper()
        return (f"{base}_{tail}" if tail else base), False
    if predicate.startswith("IS_NOT"):
        return "IS" + predicate.removeprefix("IS_NOT"), False
    if predicate.startswith("NOT_"):
        return predicate.removeprefix("NOT_"), False
    return predicate, True


def _sentiment(predicate: str) -> int:
    base, positive = _polarity(predicate)
    if base in POSITIVE:
        return 1 if positive else -1
    return -1 if base in NEGATIVE and positive else 0


def contradicts(new: Triple, old: Triple) -> bool:
    """Same subject and object with opposite meaning, or a second value of a one-value fact."""
    if new[0] != old[0]:
        return False
    if new[1] == old[1] and new[1] in SINGLE_VALUED:
        return new[2] != old[2]
    if new[2] != old[2]:
        return False
    (base_new, pos_new), (base_old, pos_old) = _polarity(new[1]), _polarity(old[1])
    if base_new == base_old and pos_new != pos_old:
        return True
    return _sentiment(new[1]) * _sentiment(old[1]) < 0


def invalidations(
    facts: Sequence[ExtractedFact], known: Sequence[KnownFact], user_name: str | None
) -> list[Invalidation]:
    """The known facts that a new fact of the batch contradicts, each once."""
    found: dict[str, Invalidation] = {}
    for fact in facts:
        new = fact_triple(fact.source, fact.predicate, fact.target, user_name)
        for old in known:
            if old.id in found:
                continue
            if contradicts(new, fact_triple(old.source, old.predicate, old.target, user_name)):
                found[old.id] = Invalidation(fact_id=old.id, reason=f"contradicted: {fact.fact}")
    return list(found.values())
