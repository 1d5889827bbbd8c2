"""Names a query asks about that nothing stored for the user holds.

A search returns its best matches; when the query names someone the memory has never heard of
("Where does Bob live?" with no Bob), those matches are about others ("Peter lives in New
York"). No similarity floor tells them from answers (benchmarks/results/relevance_floor.md),
so the result says it instead: `SearchResult.unknown_names`, and `context()` opens with it.
When those names are all the query names (nothing it names is known but the user), the facts
about others are held back: a fact stays only when the user is its subject or object and the
query speaks of the user ("my", or the user's own name). The messages stay, for the agent to
read with the warning.

A name is a capitalized word of two letters or more, not the first of its sentence, that no
anchored entity's name or alias holds, no fact found names (its subject or object) and no
message of the user's (its text or speaker) contains; a search that did not look the query's
names up asks the user's entities for those left. Words a message index never keeps
(stopwords: "Will") and the names of days and months ("May", "Aug") are never judged.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from engine.models import ScoredFact
from engine.retrieval.lexical import LexicalIndex, stem
from engine.retrieval.terms import STOPWORDS, words

_TOKEN = re.compile(r"[^\W\d_]\w*")
_SENTENCE_END = re.compile(r"[.!?:;]\s")
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december mon tue tues wed thu thur thurs "
    "fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec".split()
)


def unknown_names(
    text: str,
    index: LexicalIndex | None,
    known_names: Iterable[str],
    lookup: Callable[[list[str]], Iterable[str]] | None = None,
) -> list[str]:
    """The names in `text` that nothing of the user's holds; none when `index` is None (the
    user's messages not read: nothing can tell). The `known_names` are read only when some
    name of `text` is in no message; `lookup` (the stored entities' names holding any of the
    given words) only when a name is in none of those either: a search that did not look
    the query's names up."""
    if index is None:
        return []
    candidates = {
        name: word
        for name, word in judged_names(text).items()
        if not index.term_postings(stem(word))
    }
    if not candidates:
        return []
    known = {word for name in known_names for word in words(name)}
    left = sorted({word for word in candidates.values() if word not in known})
    if left and lookup is not None:
        known.update(word for name in lookup(left) for word in words(name))
    return [name for name, word in candidates.items() if word not in known]


def judged_names(text: str) -> dict[str, str]:
    """The names of `text` that are judged, each with its word as a message index reads it."""
    judged: dict[str, str] = {}
    names = [n for sentence in _SENTENCE_END.split(text) for n in _TOKEN.findall(sentence)[1:]]
    for name in names:
        tokens = words(name)
        if not name[0].isupper() or len(name) < 2 or len(tokens) != 1:
            continue
        if tokens[0] not in STOPWORDS and tokens[0] not in _CALENDAR:
            judged.setdefault(name, tokens[0])
    return judged


def about_the_user(
    found: list[ScoredFact], self_uid: str | None, asked_of_user: bool
) -> list[ScoredFact]:
    """What answers a query that names only people the memory has never heard of: the facts
    of `found` whose subject or object is the user, when the query speaks of the user too
    (`asked_of_user`: "is Bob coming to my party?"); none when it does not ("where does Bob
    live?": where the user lives is no answer)."""
    if not asked_of_user:
        return []
    return [s for s in found if self_uid in (s.fact.subject_uid, s.fact.object_uid)]
