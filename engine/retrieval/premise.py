"""Whose memories a question asks about: one that names a speaker of the user's messages and
asks what the memories hold of another speaker ("What did Caroline realize after her charity
race?" when the race was Melanie's).

Facts name people the way messages cannot ("I ran a charity race" is Melanie's because she
said it; the fact says "Melanie"), so this is read from the facts: the query without the name
("What did realize after her charity race?") is embedded and compared with the user's facts
in one vector read, while the legs are fused. When a fact about another speaker is nearer to
it than every fact about the one named by at least `premise_margin` in cosine, the result
says so (`SearchResult.premise`) and `context()` opens with it. The check costs a model pass
and a read, a sixth of a chat search, so it runs for the searches that build a prompt block
(`max_tokens`), where the note is read. Only speakers are compared: in a chat log they are the
people a question mixes up, and people mentioned in passing ("my friends") have too few facts
to tell (benchmarks/results/premise.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass

from engine.embedding import Vector, as_param
from engine.models import Fact, Premise
from engine.retrieval.background import BACKGROUND
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.terms import POSSESSIVE, relation_phrase, words
from engine.retrieval.tuning import EpisodeParams
from engine.store.reads import Reads

Near = list[tuple[Fact, float]]  # facts with their (1 + cos) / 2, nearest first


@dataclass(frozen=True, slots=True)
class Plan:
    """What a query asks of the one speaker it names."""

    named: str  # that speaker, as the messages write the name
    others: frozenset[str]  # the speakers it does not name, case-folded
    asked: str  # the query's words without the name


class PremiseCheck:
    """Run while the legs are fused: the query without the name embedded, then one read."""

    def __init__(self, reads: Reads, embed: Callable[[str], Vector], params: EpisodeParams):
        self.reads, self.embed, self.params = reads, embed, params

    def start(self, plan: Plan, user_id: str, include_invalid: bool) -> Future[Premise | None]:
        k, margin = self.params.premise_facts, self.params.premise_margin

        def check() -> Premise | None:
            vector = as_param(self.embed(plan.asked))
            near = self.reads.vector_facts(user_id, vector, k, include_invalid=include_invalid)
            return premise(plan, near, margin)

        return BACKGROUND.submit(check)


def plan(tokens: Sequence[str], index: LexicalIndex | None) -> Plan | None:
    """None unless the query (its `Query.words`) names exactly one speaker of the user's
    messages word for word, and another speaker is left that it does not name."""
    speakers = index.speakers_by_key() if index is not None else {}
    places = {key: _places(words(name), tokens) for key, name in speakers.items()}
    named = [key for key, taken in places.items() if taken]
    if len(named) != 1:
        return None
    others = frozenset(speakers) - {named[0]}
    asked = relation_phrase(tokens, [places[named[0]]])
    return Plan(speakers[named[0]], others, asked) if others else None


def _places(name: Sequence[str], tokens: Sequence[str]) -> frozenset[int]:
    """Every place `tokens` have the name whole, with the possessive after it ("Caroline's"
    is "caroline", "s")."""
    seq, whole, n, taken = list(tokens), list(name), len(name), set[int]()
    for i in range(len(seq) - n + 1 if n else 0):
        if seq[i : i + n] == whole:
            taken.update(range(i, i + n + (seq[i + n : i + n + 1] == [POSSESSIVE])))
    return frozenset(taken)


def premise(plan: Plan, near: Near, margin: float) -> Premise | None:
    """Whether another speaker's facts come nearer what the query asks (`near`: the facts
    nearest the query without the name) than the named speaker's by `margin` in cosine; the
    named speaker's best is taken as the farthest fact read when none of theirs was read."""
    own_key = plan.named.casefold()
    ends = [{f.subject.casefold(), f.object.casefold()} for f, _ in near]
    own = [s for (_, s), at in zip(near, ends, strict=True) if own_key in at]
    best_own = max(own) if own else (near[-1][1] if near else 0.0)
    for (fact, score), at in zip(near, ends, strict=True):
        if own_key in at or not at & plan.others:
            continue
        if 2.0 * (score - best_own) < margin:
            return None
        other = fact.subject if fact.subject.casefold() in plan.others else fact.object
        return Premise(named=plan.named, matches=other)
    return None
