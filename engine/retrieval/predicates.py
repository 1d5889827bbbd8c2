"""How well a path of relations (one to three hops) explains a question, before any edge is read.

Two kinds of evidence, both from the embedding model (the word lists of `terms` say only which
part a word plays: the asked kind, a chained noun, "where"):
- words: a question names its relations with words ("directed", "starred", "sister") mixed
  with generic ones ("films", "person"). Each word is compared with each relation's readable
  form ("directed by"); a word counts with its specificity (how much better its best relation
  matches it than the average one), so generic words weigh little. A path scores the words it
  explains, each by its best relation on the path, minus a small cost per extra hop: a longer
  path wins only when it explains words a shorter one cannot.
- phrase: the question without the names it mentions ("which teams have players from") is
  compared with each relation's readable form as a whole, which finds what single words miss
  ("team" ~ "plays in club"). A path gains `phrase_weight` times the best centred phrase
  similarity among its relations.
Both are blind to order but for a few words: the kind of thing a question asks for ("which
genres ... share actors") is what a path's last relation leads to, so only that relation
explains it (the genres of films sharing actors, not the actors of films sharing a genre),
by its name or by what it leads to (`retrieval.kinds`: "country" by `CONTAINED_BY`, which
leads where `NATIONALITY` does); and the nouns a question chains to its one name ("X's
wife's father", `terms.chain_order`), which a path explains a hop each, in their order,
before its other relation words (the nationality of X's wife's father, not of the wife of
X's father), each also matched to a relation's name in the singular ("son" ~ "child").
A predicate and its inverse twin (`PLAYS_IN_CLUB` and `PLAYS_IN_CLUB_INVERSE`) are one relation.
A question asking for siblings ("who co-wrote with X", "films with the same director as Y")
wants the path that goes out and back along one relation: with such a cue, that pair beats
the single relation it repeats; a relation then the twin storing it reversed (MEMBER_OF, then
HAS_MEMBER) goes out and back as well, and without such a cue the twin's name explains nothing
there: it reads the step before's facts again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.normalize import predicate_words
from engine.retrieval.named import named_relations, unnamed_steps
from engine.retrieval.order import ChainOrder
from engine.retrieval.steps import back_along_twins, no_triple, thrice, turns, unless_back
from engine.retrieval.terms import WHERE
from engine.retrieval.tuning import RelationParams

INVERSE_SUFFIXES = ("_INVERSE", "_INV", "_REVERSE")
NOTHING = -1e9  # the score of no path at all: below every path's
_ENDS = (True, False)  # a relation's subject end, its object end
Vector = np.ndarray[Any, Any]
_Prefix = tuple[tuple[str, ...], bool | None]  # a path's relations, where its last step arrived


def base_relation(predicate: str) -> str:
    """The relation a predicate names, its inverse twin folded in: X_INVERSE -> X."""
    for suffix in INVERSE_SUFFIXES:
        if predicate.endswith(suffix) and len(predicate) > len(suffix):
            return predicate[: -len(suffix)]
    return predicate


@dataclass(frozen=True, slots=True)
class Outlook:
    """Where a path can go from here (see `RelationMatch.outlook`)."""

    best: float  # the best score of the path itself or of any continuation
    own: float  # the path's own score
    steps: list[str]  # next relations, the most promising first
    via: dict[str, float]  # the best score of a continuation through each next relation


@dataclass(frozen=True, slots=True)
class Ends:
    """What the graph says of the relations most likely to end a path (`kinds.RelationEnds`):
    the share of each one's ends that are of the asked kind, each relation's twin (stored
    reversed), and what can follow each relation at each of its ends."""

    shares: Mapping[str, float] = field(default_factory=dict)
    twins: Mapping[str, str] = field(default_factory=dict)
    follows: Mapping[str, Mapping[bool, Iterable[tuple[str, bool]]]] = field(default_factory=dict)


class RelationMatch:
    """Scores relations, and paths of relations, against one question: built whole (the
    question's words, then `with_ends` for what the graph says), never changed after."""

    def __init__(
        self,
        params: RelationParams,
        words: list[str],
        bases: list[str],
        of: dict[str, int],
        sims: Vector,
        specificity: Vector,
        phrase: Vector | None,
        siblings: bool = False,
        kind: str | None = None,
        chain: Sequence[str] = (),
        rest: str = "",
        ends: Ends | None = None,
    ) -> None:
        self.params = params
        self._asked = (kind, tuple(chain), rest)
        self._words = words
        self.bases = bases
        self._of = of
        self._sims = sims
        self._weight = specificity
        self._phrase = phrase if phrase is not None else np.zeros(len(bases))
        self._named = named_relations(sims, params.name_margin)  # by some word
        self.siblings = siblings
        self._kind = words.index(kind) if kind in words else None  # the word asked for
        self._order = ChainOrder(words, chain, self.relation_words(), kind, rest)
        self._kind_through = np.zeros(len(bases))  # what each relation earns for it by its ends
        self._single: dict[str, float] | None = None
        self._index = {b: i for i, b in enumerate(bases)}
        self._one = list(range(len(bases)))  # each relation's column, or its twin's (one of two)
        self._mutual = list(range(len(bases)))  # the same, for twins each the other's only
        self._back_uncounted = False  # a step back along such a twin explains nothing
        # (relation, at its subject end): the relations met there, each with the ends it has
        self._follows: dict[tuple[int, bool], frozenset[tuple[str, bool]]] = {}
        self._arrived: dict[tuple[int, frozenset[bool], int], frozenset[bool]] = {}
        self._outlooks: dict[tuple[tuple[str, ...], int, bool | None], Outlook] = {}
        self._paths: dict[tuple[str, ...], float] = {}
        self._top_cache: list[int] | None = None
        if ends is not None:
            self._kind_by_ends(ends.shares)
            self._fold_twins(ends.twins)
            self._limit_steps(ends.follows)

    @property
    def asked(self) -> bool:
        """The question carries relation evidence at all (some word or its phrase)."""
        return bool(self.bases) and (bool(self._weight.sum()) or bool(self._phrase.sum()))

    def relation_words(self) -> set[str]:
        """Words that clearly name a relation ("directed", "actors"), not a thing."""
        if not len(self._weight):
            return set()
        best, params = self._sims.max(axis=1), self.params
        return {
            w
            for w, b, spec in zip(self._words, best, self._weight, strict=True)
            if b >= params.relation_word_sim and spec >= params.relation_word_specificity
        }

    def kind_relation(self) -> str | None:
        """The relation the asked kind's word names best ("country": `NATIONALITY`)."""
        return None if self._kind is None else self.named_by(self._words[self._kind])

    @property
    def asks_kind(self) -> bool:  # not "where": the employer answers "where does X work"
        return self._kind is not None and self._words[self._kind] != WHERE

    def kind_explained(self, relations: tuple[str, ...], at_subject: bool | None) -> float:
        """How well a path's last relation explains the asked kind (0 unless `asks_kind`) where
        the path arrived (`at_subject`; None: either end): by its name at the end the name speaks
        of (the object; the subject of "X_OF"), by what it leads to at its object."""
        last = self._index.get(base_relation(relations[-1])) if self.asks_kind else None
        if last is None:
            return 0.0
        named = at_subject in (None, predicate_words(self.bases[last]).endswith(" of"))
        back = len(relations) > 1 and base_relation(relations[-2]) == self.bases[last]
        by_ends = 0.0 if back or at_subject else self._kind_through[last]
        return float(max(self._sims[self._kind, last] if named else 0.0, by_ends))

    def best_relations(self, n: int) -> list[str]:
        """The `n` best relations as one-edge paths (before `with_ends`: by the question's
        words alone)."""
        return [self.bases[i] for i in self._ranked()[:n]]

    def with_ends(self, ends: Ends) -> RelationMatch:
        """This question's match, knowing `ends` (of the relations `best_relations` named)."""
        kind, chain, rest = self._asked
        return RelationMatch(
            self.params,
            self._words,
            self.bases,
            self._of,
            self._sims,
            self._weight,
            self._phrase,
            self.siblings,
            kind,
            chain,
            rest,
            ends,
        )

    def _kind_by_ends(self, shares: Mapping[str, float]) -> None:
        """A relation leading to the entities the kind's relation leads to (`shares`: the
        share of its ends that do) explains the asked kind as that relation does: "in which
        country was X born" ends with `CONTAINED_BY`, whose ends are `NATIONALITY`'s."""
        kind = self.kind_relation()
        if kind is None:
            return
        named = self._sims[self._kind, self._index[kind]] * self.params.kind_by_ends
        for relation, share in shares.items():
            self._kind_through[self._index[relation]] = share * named

    def _fold_twins(self, twins: Mapping[str, str]) -> None:
        """A relation and the twin storing it reversed (`RelationEnds.twins`: MEMBER_OF,
        HAS_MEMBER) are one relation: one after the other goes out and back. Their names
        still explain words apart: which of them a step took tells its direction ("father":
        PARENTS, not CHILDREN)."""
        for relation, twin in twins.items():
            i, j = self._index.get(relation), self._index.get(twin)
            if i is not None and j is not None:
                self._one[i] = self._one[j] = min(self._one[i], self._one[j])
                if twins.get(twin) == relation:  # not a part of it (a CEO is an employee)
                    self._mutual[i] = self._mutual[j] = min(i, j)
                    self._back_uncounted = not self.siblings

    def _limit_steps(
        self, follows: Mapping[str, Mapping[bool, Iterable[tuple[str, bool]]]]
    ) -> None:
        """What can follow each relation where it ends (`RelationEnds.follows`, per end: True
        at its subjects): a path going on with a relation never met at the end the one before
        arrived at is not hoped for ("the band that recorded X": a word names BAND_MEMBER, but
        no band member has a COUNTRY)."""
        for relation, ends in follows.items():
            if relation in self._index:
                for at, met in ends.items():
                    self._follows[(self._index[relation], at)] = frozenset(met)

    def back_along(self, a: str, b: str) -> bool:
        """A step along `b` after one along `a` goes back: the same relation, or its twin (a
        relation with a twin named twice goes on: X's parents' parents)."""
        return self._back(self._index[a], self._index[b])

    def _back(self, i: int, j: int) -> bool:
        return self._one[i] == self._one[j] and (i != j or self._one.count(self._one[i]) == 1)

    def goes_back(self, relations: Sequence[str]) -> bool:  # the last step goes back
        return len(relations) > 1 and self.back_along(relations[-2], relations[-1])

    def named_by(self, word: str) -> str | None:  # the relation one of its words names best
        if word not in self._words or not self.bases:
            return None
        return self.bases[int(np.argmax(self._sims[self._words.index(word)]))]

    def base(self, predicate: str) -> str | None:
        index = self._of.get(predicate)
        return None if index is None else self.bases[index]

    def single(self) -> dict[str, float]:  # each predicate as a one-edge path (callers keep it)
        if self._single is None:
            scores = self._scores([[i] for i in range(len(self.bases))])
            self._single = {p: float(scores[i]) for p, i in self._of.items()}
        return self._single

    def path(self, relations: Sequence[str]) -> float:
        """A path of relations (or predicates, folded to their relations) from the anchor out;
        one repeated back to back goes out and back (anchor -> film <- another film)."""
        key = tuple(relations)
        if key not in self._paths:
            self.paths([key])
        return self._paths[key]

    def paths(self, many: Iterable[Sequence[str]]) -> list[float]:
        """`path` of each of `many`, those not scored yet together (`_scores`: a pass per path
        length, which costs about the same for fifty paths as for one)."""
        keys = [tuple(relations) for relations in many]
        known: dict[tuple[str, ...], list[int]] = {}
        for key in keys:
            if key in self._paths or key in known:
                continue
            columns = [self._index.get(base_relation(r)) for r in key]
            if key and None not in columns:
                known[key] = [c for c in columns if c is not None]
            else:
                self._paths[key] = -self.params.extra_hop_cost * (len(key) - 1)
        if known:
            batch = sorted(known)  # see `_scores`
            scores = self._scores([known[key] for key in batch])
            self._paths.update(zip(batch, map(float, scores), strict=True))
        return [self._paths[key] for key in keys]

    def outlook(self, prefix: tuple[str, ...], depth: int, end: bool | None = None) -> Outlook:
        """How far a path starting with `prefix` can get: the best score of it or of any
        continuation up to `depth` hops, and each next relation by the best path through it.
        `end`: where the prefix's last step arrived (True: at its relation's subject)."""
        return self.outlooks([(prefix, end)], depth)[(prefix, end)]

    def outlooks(self, wanted: Iterable[_Prefix], depth: int) -> dict[_Prefix, Outlook]:
        """`outlook` of each (prefix, end) of `wanted`, those not known yet scored together."""
        wanted = list(dict.fromkeys(wanted))
        new = [(p, e) for p, e in wanted if (p, depth, e) not in self._outlooks]
        new.sort(key=lambda ends: (ends[0], repr(ends[1])))  # see `_scores`
        if new:
            self.paths(p for p, _ in new if p)
            tried = {(p, e): self._continuations(p, depth, e) for p, e in new}
            scores = self._scores([path for paths in tried.values() for path in paths])
            done = 0
            for (prefix, end), paths in tried.items():
                ahead: dict[str, float] = {}
                for path, score in zip(paths, scores[done : done + len(paths)], strict=True):
                    step = self.bases[path[len(prefix)]]
                    ahead[step] = max(ahead.get(step, NOTHING), float(score))
                done += len(paths)
                own = self.path(prefix) if prefix else NOTHING
                steps = sorted(ahead, key=lambda b: -ahead[b])
                outlook = Outlook(max([own, *ahead.values()]), own, steps, ahead)
                self._outlooks[(prefix, depth, end)] = outlook
        return {(p, e): self._outlooks[(p, depth, e)] for p, e in wanted}

    def _continuations(
        self, prefix: tuple[str, ...], depth: int, end: bool | None
    ) -> list[list[int]]:
        """The paths an outlook scores: `prefix` and up to `depth` hops of the best relations
        after it, each step met where the one before arrived. A tail that cannot be walked is
        not extended: no longer path through it can."""
        head = [self._index[b] for b in prefix]
        top = self._top()
        later = top[: self.params.later_steps]
        ends = frozenset(_ENDS) if end is None else frozenset({end})
        if not no_triple([self._one[i] for i in head]):
            return []
        last = head[-1] if head else None  # the steps before the last one walked are possible
        level: list[tuple[list[int], int | None, frozenset[bool]]] = [(head, last, ends)]
        paths: list[list[int]] = []
        for hop in range(max(depth - len(prefix), 1)):
            level = [
                ([*path, b], b, arrived)
                for path, at, met in level
                for b in (top if hop == 0 else later)
                if not thrice(path, b, self._one)
                and (arrived := met if at is None else self._arrivals(at, met, b))
            ]
            paths += [path for path, _, _ in level]
        return paths

    def _arrivals(self, a: int, ends: frozenset[bool], b: int) -> frozenset[bool]:
        """The ends (True: subject) step `b` may arrive at, leaving where step `a` arrived
        (`ends`); none when `b` was never met there. It leaves one end, arrives at the other."""
        key = (a, ends, b)
        if (arrived := self._arrived.get(key)) is None:
            step, found = self.bases[b], set[bool]()
            for at in ends:
                met = self._follows.get((a, at))
                found |= set(_ENDS) if met is None else {not s for s in _ENDS if (step, s) in met}
            arrived = self._arrived[key] = frozenset(found)
        return arrived

    def _top(self) -> list[int]:  # the relations tried as next steps: the best single ones
        if self._top_cache is None:
            self._top_cache = self._ranked()[: self.params.continuations]
        return self._top_cache

    def _ranked(self) -> list[int]:  # every relation, the best one-edge path first
        singles = self._scores([[i] for i in range(len(self.bases))])
        return [int(i) for i in np.argsort(-singles, kind="stable")]

    def _scores(self, paths: list[list[int]]) -> Vector:
        """Word coverage plus phrase evidence minus the hop cost, for each path of indexes;
        the paths of each length in one pass (padded with its last step, a shorter path could
        explain by the copy what a step going back may not). A path's score moves in its last
        float32 digits with its row in the pass, so callers pass paths in a fixed order: two
        near-equal paths must not be told apart by the hash order of a set of them, which
        differs from one process to the next."""
        scores = np.zeros(len(paths))
        rows: dict[int, list[int]] = {}
        for i, path in enumerate(paths):
            rows.setdefault(len(path), []).append(i)
        for same in rows.values():
            scores[same] = self._scores_of(np.array([paths[i] for i in same]))
        return scores

    def _scores_of(self, relations: Vector) -> Vector:
        """`_scores` of paths of one length (`relations`: a row of relation indexes each)."""
        params = self.params
        # a step back along a twin reads the same facts again, unless siblings are asked for
        back = back_along_twins(relations, self._mutual) if self._back_uncounted else None
        phrase = unless_back(self._phrase[relations], back, 0.0).max(axis=1) * params.phrase_weight
        hops = np.full(len(relations), relations.shape[1])
        turning, turned = turns(relations, self._one)  # back along the step before; at the first
        cost = params.extra_hop_cost * (hops - 1)
        if self.siblings:
            cost = cost - turned * params.sibling_bonus
        scores: Vector = phrase - cost
        if len(self._weight):
            on_path = unless_back(self._sims[:, relations], back, -1.0)
            explained = on_path.max(axis=-1)
            if self._order:  # most questions chain nothing: no order to keep
                steps = on_path.argmax(axis=-1)
                self._order.before_answer(on_path, hops, explained, steps)
                lost = self._order.lost(self._weight, relations, on_path, steps, explained, turned)
                scores = scores - lost  # a word explained out of order is not explained
            if self._kind is not None:
                last = relations[:, -1]
                # out and back at the end leads to what the relation leads from
                before = relations[np.arange(len(relations)), np.maximum(hops - 2, 0)]
                through = np.where((hops > 1) & (before == last), 0.0, self._kind_through[last])
                explained[self._kind] = np.maximum(self._sims[self._kind, last], through)
            scores = scores + self._weight @ explained
            unnamed = unnamed_steps(relations, turning, self._named)  # ties: asked steps win
            scores = scores - params.unnamed_step_cost * unnamed
        return scores
