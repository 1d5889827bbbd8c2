"""The vectors a `RelationMatch` compares: the question's words and relation phrase, and each
relation's readable form ("PLAYS_IN_CLUB" -> "plays in club") and its singular ("children" ->
"child"), embedded once and cached, so that scoring a question is a small matrix product."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.embedding import Embedder
from engine.normalize import predicate_words, singular_form
from engine.retrieval.blas import on_one_thread
from engine.retrieval.lexical import root
from engine.retrieval.predicates import RelationMatch, base_relation
from engine.retrieval.terms import WHERE
from engine.retrieval.tuning import RelationParams

USERS_CACHED = 64  # predicate lists whose relations are kept (one per recent user)
Vector = np.ndarray[Any, Any]
_Forms = dict[str, list[tuple[int, str]]]  # a root: the relations naming it, by which word
_Relations = tuple[list[str], dict[str, int], Vector, Vector, _Forms]
_NONE: Vector = np.zeros((0, 0))


class PredicateScorer:
    """Caches word and relation-phrase vectors; scoring is then a small matrix product."""

    def __init__(self, embedder: Embedder, params: RelationParams) -> None:
        self._embedder = embedder
        self.params = params
        self._cache: dict[str, Vector] = {}
        self._relations_of: dict[tuple[str, ...], _Relations] = {}

    def embed(self, text: str) -> Vector:
        """The query's vector, alone: one text runs faster than a batch of unequal ones."""
        return self._embedder.encode_one(text)

    def phrase(self, text: str) -> Vector:
        """A relation phrase's vector, kept with the words': a question's form comes back
        with other names in it ("who directed", "what languages are the films of ... in")."""
        vector: Vector = self._vectors([text])[0]
        return vector

    def learn(self, words: Sequence[str]) -> None:
        """Embed the `words` not yet cached (called while the database works on the reads
        the query's vector started)."""
        missing = [w for w in dict.fromkeys(words) if w not in self._cache]
        if missing:
            self._remember(missing, self._embedder.encode(missing))

    def relation_texts(self, predicates: Sequence[str]) -> list[str]:
        """The texts `match` embeds for the relations of `predicates`: each relation's readable
        form, then each one's singular."""
        names, singulars = _forms(_bases(predicates))
        return list(dict.fromkeys([*names, *singulars]))

    def cached(self, texts: Sequence[str]) -> bool:
        return all(t in self._cache for t in texts)

    def vectors(self, texts: list[str]) -> Vector:
        """The vectors of `texts`, those not cached embedded now."""
        return self._vectors(texts)

    def remember(self, texts: list[str], vectors: Vector) -> None:
        """Keep these vectors (embedded by this model, e.g. read back from the store)."""
        self._remember(texts, vectors)

    def _remember(self, texts: list[str], vectors: Vector) -> None:
        if len(self._cache) + len(texts) > self.params.cached_vectors:
            self._cache.clear()
        self._cache.update(zip(texts, vectors, strict=True))

    def _vectors(self, texts: list[str]) -> Vector:
        self.learn(texts)
        return np.stack([self._cache[t] for t in texts])

    def match(
        self,
        words: Sequence[str],
        predicates: Sequence[str],
        phrase: Vector | None = None,
        siblings: bool = False,
        kind: str | None = None,
        chain: Sequence[str] = (),
        rest: str = "",
    ) -> RelationMatch:
        """Similarities of each question word, and of the relation `phrase`, to each relation
        of `predicates`; `siblings`: the question asks for what shares a neighbour; `kind`: the
        word naming the kind of thing asked for ("which genres"); `chain`: the nouns the
        question chains to its one anchor, nearest first; `rest`: what it asks beyond them."""
        words = [*words, rest] if rest and rest not in words else list(words)
        bases, of, readable, singular, forms = self._relations(predicates)
        if not bases:
            return RelationMatch(self.params, [], bases, of, _NONE, np.zeros(0), None, siblings)
        if words:
            vectors = self._vectors(words)
            most = self.params.one_thread_products
            sims = on_one_thread(vectors, readable, most)
            # a noun chained to the name is one of what the relation leads to: "X's son" is
            # one of X's children, and the model puts "son" nearer "child" than "children"
            nouns = [i for i, w in enumerate(words) if w in chain]
            sims[nouns] = np.maximum(sims[nouns], on_one_thread(vectors[nouns], singular, most))
            self._other_forms(sims, words, forms)
            specificity = np.clip(sims.max(axis=1) - sims.mean(axis=1), 0.0, None)
            specificity *= [self.params.where_weight if w == WHERE else 1.0 for w in words]
        else:
            sims, specificity = np.zeros((0, len(bases))), np.zeros(0)
        centred = None
        if phrase is not None:
            similarity = readable @ phrase
            centred = np.clip(similarity - similarity.mean(), 0.0, None)
        return RelationMatch(
            self.params, words, bases, of, sims, specificity, centred, siblings, kind, chain, rest
        )

    def _other_forms(self, sims: Vector, words: list[str], forms: _Forms) -> None:
        """A question word that is another form of a word in a relation's name ("director",
        "directed by") matches that relation at least `same_form_sim`: the model puts
        "director" barely nearer "directed by" (0.58) than "starred actors" (0.48)."""
        for i, word in enumerate(words):
            for j, form in forms.get(root(word, self.params.same_form_root), ()):
                if form != word:
                    sims[i, j] = max(sims[i, j], self.params.same_form_sim)

    def _relations(self, predicates: Sequence[str]) -> _Relations:
        """The relations of `predicates`, each predicate's relation, their readable forms'
        vectors: the same for every search of a user until a write adds a predicate."""
        key = tuple(predicates)
        found = self._relations_of.get(key)
        if found is None:
            bases = _bases(predicates)
            column = {b: i for i, b in enumerate(bases)}
            of = {p: column[base_relation(p)] for p in predicates}
            names, singulars = _forms(bases)
            readable = self._vectors(names) if bases else _NONE
            singular = self._vectors(singulars) if bases else _NONE
            found = (bases, of, readable, singular, _by_root(names, self.params.same_form_root))
            if len(self._relations_of) >= USERS_CACHED:
                self._relations_of.clear()
            self._relations_of[key] = found
        return found


def _by_root(names: list[str], shortest: int) -> _Forms:
    """The words of the relations' readable `names` by their roots of `shortest` letters or
    more: each with the relations (indexes) whose name holds it."""
    forms: _Forms = {}
    for j, name in enumerate(names):
        for word in dict.fromkeys(name.split()):
            base = root(word, shortest)
            if len(base) >= shortest:
                forms.setdefault(base, []).append((j, word))
    return forms


def _bases(predicates: Sequence[str]) -> list[str]:
    return sorted({base_relation(p) for p in predicates})


def _forms(bases: list[str]) -> tuple[list[str], list[str]]:
    """Each relation's readable form ("plays in club"), and each one's singular."""
    names = [predicate_words(b) for b in bases]
    return names, [singular_form(n) for n in names]
