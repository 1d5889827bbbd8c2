"""Words of a query and how well an entity name matches them (no LLM, no model)."""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Sequence

from rapidfuzz.distance import Indel

from engine.normalize import CJK_CHARS
from engine.retrieval.tuning import NameParams

# CJK text has no spaces: each ideograph, kana or hangul syllable is a word of its own

_WORD = re.compile(rf"[{CJK_CHARS}]|[^\W_{CJK_CHARS}]+", re.UNICODE)
_JOINED = re.compile(r"[^\W_]+(?:_[^\W_]+)+")  # paul_mccartney: one token to a fulltext index
_CJK_RUN = re.compile(rf"[{CJK_CHARS}]{{2,}}")
_CJK_CHAR = re.compile(rf"[{CJK_CHARS}]")

STOPWORDS = frozenset(
    (
        "a about above after again against all am an and any are as at be because been before "
        "being below between both but by can could did do does doing down during each few for "
        "from further had has have having he her here hers herself him himself his how i if in "
        "into is it its itself just me more most my myself no nor not now of off on once only or "
        "other our ours ourselves out over own same she should so some such than that the their "
        "theirs them themselves then there these they this those through to too under until up "
        "very was we were what when where which while who whom why will with would you your yours "
        "yourself yourselves also ever tell know anything something"
    ).split()
)
# words asking for what shares a neighbour with the anchor: co-stars, the same director
SIBLING_CUES = frozenset({"same", "together", "co", "fellow", "share", "shares", "shared"})
# words asking for a kind of thing, named next ("which genres", "what country", "who is the
# husband of ...", "who directed ...": the thing named or done last on the way to the answer)
ASKING = frozenset({"what", "which", "who"})
_DO = frozenset({"do", "does", "did"})  # "what does X's daughter do": asks beyond the chain
# "where" asks for a place, and names the kind itself: the relations leading to places
WHERE = "where"
POSSESSIVE = "s"  # "X's" is tokenised as "x", "s"
_ARTICLES = frozenset({"the", "a", "an"})
_AND_OR = frozenset({"and", "or"})  # "a son or daughter of X": one hop, said two ways
_IMPERATIVE = frozenset({"name", "list", "give", "show", "find"})  # "name a sister of X"
# punctuation around a name's words: quotes, brackets, dashes ("\u2019" is a typed apostrophe)
_EDGE = "\"'()[]{},;:!?\u201c\u201d\u2018\u2019\u00ab\u00bb\u201e\u2014\u2013"
_POSSESSIVES = ("'s", "\u2019s")
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "我", "我的"})


def words(text: str) -> list[str]:
    """Case-folded word tokens of `text`."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def content_words(tokens: Sequence[str]) -> list[str]:
    """The words worth searching for (of `words(text)`): no stopwords, no repeats, in order."""
    seen: dict[str, None] = {}
    for word in tokens:
        if word not in STOPWORDS and word not in seen:
            seen[word] = None
    return list(seen)


def fulltext_terms(text: str, tokens: Sequence[str], content: list[str]) -> list[str]:
    """Terms for a fulltext index: the `content` words of `text` (of its `tokens`), the
    two-character pieces of its CJK runs (a fulltext index keeps a CJK run as one token; its
    pieces find it as prefixes), and its names as a dump writes them, one token to the index
    ("paul_mccartney", written so or as two words)."""
    terms = [w for w in content if not _CJK_CHAR.fullmatch(w)]
    for run in _CJK_RUN.findall(unicodedata.normalize("NFKC", text)):
        terms += [run[i : i + 2] for i in range(len(run) - 1)]
    terms += [t.casefold() for t in _JOINED.findall(text)]  # a name as a dump writes it
    # and two words as a dump would write them: "paul mccartney"
    terms += [f"{a}_{b}" for a, b in itertools.pairwise(tokens) if _name_word(a) and _name_word(b)]
    return list(dict.fromkeys(terms))


def _name_word(token: str) -> bool:
    return len(token) > 1 and token not in STOPWORDS


def relation_phrase(tokens: Sequence[str], spans: list[frozenset[int]]) -> str:
    """The words of a query (`tokens`) outside `spans` (the names it mentions, as positions),
    in order: what the question says about relations ("which teams have players from")."""
    taken: set[int] = set().union(*spans) if spans else set()
    return " ".join(w for i, w in enumerate(tokens) if i not in taken)


def asks_for_siblings(tokens: Sequence[str], spans: Sequence[frozenset[int]] = ()) -> bool:
    """A cue word outside the `spans` of names of several words ("who directed Same Old
    Story"); a name that is the cue alone may be a stray anchor ("who starred together with
    X": the film "Together")."""
    named = set().union(*(span for span in spans if len(span) > 1))
    return any(w in SIBLING_CUES for i, w in enumerate(tokens) if i not in named)


def asked_kind(tokens: Sequence[str], candidates: Sequence[str]) -> str | None:
    """The kind of thing a question asks for: the first of `candidates` after an asking word
    that opens the question or follows a stopword ("were in which genres"), not one after
    a noun ("the films which X directed": a relative clause); "where", itself when a
    candidate: a place ("where does the band of X come from")."""
    for i, word in enumerate(tokens):
        if word == WHERE and _asking(tokens, i):
            return word if word in candidates else None
        if word in ASKING and _asking(tokens, i):
            return next((t for t in tokens[i + 1 :] if t in candidates), None)
    return None


def asks_what_it_does(tokens: Sequence[str]) -> bool:
    """The asking word is followed by "do", "does" or "did": the nouns after it up to the verb
    are its subject, not the kind asked for ("what does X's daughter do": not a daughter;
    "what did X paint": the painted, as "what X painted")."""
    return any(
        w in ASKING and _asking(tokens, i) and i + 1 < len(tokens) and tokens[i + 1] in _DO
        for i, w in enumerate(tokens)
    )


def asks_where(tokens: Sequence[str]) -> bool:
    """The question asks "where" (not "the city where ...", a relative clause)."""
    return any(w == WHERE and _asking(tokens, i) for i, w in enumerate(tokens))


def _asking(tokens: Sequence[str], i: int) -> bool:
    """The word at `i` asks: it opens the question or follows a stopword."""
    return i == 0 or tokens[i - 1] in STOPWORDS


def chain_order(tokens: Sequence[str], span: frozenset[int], words: Sequence[str]) -> list[str]:
    """The nouns of `words` a question chains to its one named entity (`span`: the name's
    positions in `tokens`) by possessives and "of", nearest the entity first: "X's wife's
    father" and "the father of the wife of X": wife, father; "the husband of X's daughter":
    daughter, husband. Each is a hop of its own, in that order, before the question's other
    words: "who did X's son marry" (son, then marry). The order of other words says less:
    "the films X directed" and "the film X starred in" are no chain, nor is "the writer of X
    directed films" (the writer of the films X directed, not X's writer)."""
    wanted = set(words)
    chained, start, end = _chain(tokens, span)
    if _of_own_phrase(tokens, span, start, end):
        return []
    return [w for w in dict.fromkeys(chained) if w in wanted]


def chain_rest(tokens: Sequence[str], span: frozenset[int], kind: str | None) -> str:
    """What a question says beyond the chain of nouns tied to its name, when it asks for
    more than the chain's last one: "what does X's daughter do for a living" -> "what does do
    for a living" (her profession), "where does the band of X come from" -> "where does come
    from"; "" for "who is the husband of X's daughter" (the husband himself) and for a rest
    whose only word is the kind asked ("which actor is X's wife"). The kind's word is left
    out: the last relation says it ("which country hosts the head office of ..." -> "which
    hosts"); so are the name's own noun phrase ("the writer of X directed films": films X
    directed) and the nouns before the chained one ("movie co-writers of X")."""
    chained, start, end = _chain(tokens, span)
    if not chained:
        return ""
    if _of_own_phrase(tokens, span, start, end):
        end = len(tokens)
    rest = [w for i, w in enumerate(tokens) if (i < start or i >= end) and w != kind]
    return " ".join(rest) if _content(rest) or _DO.intersection(rest) else ""


def _content(tokens: Sequence[str]) -> int:
    return sum(w not in STOPWORDS and w not in _IMPERATIVE for w in tokens)


def _of_own_phrase(tokens: Sequence[str], span: frozenset[int], start: int, end: int) -> bool:
    """The noun chained by "of" is chained to the name's own noun phrase, which the two words
    after the name make ("the writer of X directed films"), not to the name."""
    return start < min(span) and end == max(span) + 1 and _content(tokens[end : end + 2]) == 2


def _chain(tokens: Sequence[str], span: frozenset[int]) -> tuple[list[str], int, int]:
    """The nouns chained to the name at `span`, nearest first, and the positions [start, end)
    the chain takes: the name, and before a noun chained by "of" up to two nouns of its own
    ("the head office of", "movie co-writers of"), another it is joined to by "and" or "or"
    ("a son or daughter of": one hop) and an article."""
    end = max(span) + 1
    chained: list[str] = []
    # one word a possessive: "X's wife born" is not a wife-birth
    while end + 1 < len(tokens) and tokens[end] == POSSESSIVE:
        chained.append(tokens[end + 1])
        end = end + 2
    start = min(span)
    while start >= 2 and tokens[start - 1] == "of":
        start = start - 2
        chained.append(tokens[start])
        for _ in range(2):
            start -= int(start >= 1 and _content(tokens[start - 1 : start]) == 1)
        if start >= 2 and tokens[start - 1] in _AND_OR and _content(tokens[start - 2 : start]) == 1:
            start = start - 2
        start -= int(start >= 1 and tokens[start - 1] in _ARTICLES)
    return chained, start, end


def first_person(text: str, tokens: Sequence[str]) -> bool:
    """`text` (tokenised as `tokens`) speaks of its writer: "I", "me", "my"."""
    return any(w in FIRST_PERSON for w in tokens) or "我" in text


def mentions_self(text: str) -> bool:
    return first_person(text, words(text))


def _token_match(
    token: str, query: Sequence[str], taken: set[int], params: NameParams
) -> tuple[int, float] | None:
    """Where `token` stands in the query (not at a position another token of the name took)
    and how surely: exactly (1.0) or with a small typo in a longer word (`typo_credit`, so
    an exact name beats a near one)."""
    for i, q in enumerate(query):
        if q == token and i not in taken:
            return i, 1.0
    if len(token) < params.typo_min_chars:
        return None
    gap = params.typo_max_gap
    for i, q in enumerate(query):
        if i not in taken and abs(len(q) - len(token)) <= gap and _near(token, q, params):
            return i, params.typo_credit
    return None


def _near(a: str, b: str, params: NameParams) -> bool:
    """At least `typo_similarity` alike: 2 * common characters in order / both lengths."""
    return bool(Indel.normalized_similarity(a, b, score_cutoff=params.typo_similarity))


def _size(token: str, params: NameParams) -> int:
    """Letters of evidence: a CJK character says about as much as a short Latin word, and
    so does a number however short."""
    if _CJK_CHAR.fullmatch(token):
        return params.cjk_chars
    return max(len(token), params.number_chars) if token.isdigit() else len(token)


def name_match(name: str, query_words: Sequence[str], params: NameParams) -> float:
    """How surely the query names this entity, in [0, 1] (see `name_span`)."""
    return name_span(name, query_words, params)[0]


def name_span(
    name: str, query_words: Sequence[str], params: NameParams
) -> tuple[float, frozenset[int]]:
    """How surely the query names this entity, in [0, 1], and which query words it takes.

    Coverage (the share of the name's characters found among the query's words, allowing a
    small typo in longer words) times specificity (long names are less likely to match by
    chance than short ones: "Up" inside a question is weak evidence, "Grégoire Colin" strong),
    times compactness: a name's words found far apart ("release dates of ... movies" for the
    film "Date Movie") are likely not the name, and found out of order ("Men Without Women"
    in "Women Without Men ...") less likely than in order.
    """
    tokens = words(name)
    if not tokens:
        return 0.0, frozenset()
    total = sum(_size(t, params) for t in tokens)
    whole = whole_span(tokens, query_words)
    if whole:
        return _score(total, total, params), whole
    matched, found = 0.0, list[int]()
    for token in tokens:
        hit = _token_match(token, query_words, set(found), params)
        if hit is not None:
            found.append(hit[0])
            credit = params.stopword_credit if token in STOPWORDS else 1.0
            matched += _size(token, params) * hit[1] * credit
    span = frozenset(found)
    compactness = len(span) / (max(span) - min(span) + 1) if span else 1.0
    order = 1.0 if found == sorted(found) else params.shuffled
    return _score(matched, total, params) * compactness * order, span


def whole_span(name: Sequence[str], query_words: Sequence[str]) -> frozenset[int]:
    """The positions of the first place the query has the `name`'s words whole, in order."""
    n, whole = len(name), tuple(name)
    for i in range(len(query_words) - n + 1):
        if tuple(query_words[i : i + n]) == whole:
            return frozenset(range(i, i + n))
    return frozenset()


def _score(matched: float, total: int, params: NameParams) -> float:
    return (matched / total) * (1.0 - math.exp(-matched / params.specific_chars))


def name_keys(text: str, longest: int, most: int) -> list[str]:
    """The keys (`normalize.entity_key`) of the names `text` may hold word for word: its runs
    of up to `longest` words, with stopwords ("Up in the Air", "The Con", "Joe"), each
    without the punctuation around it and a last word also without its possessive ("Joe's");
    the first `most`. A fulltext read ranks such a name below the many that share a word with
    the question, or drops it as stopwords."""
    tokens = [t.strip(_EDGE) for t in unicodedata.normalize("NFKC", text).casefold().split()]
    if tokens:
        tokens[-1] = tokens[-1].rstrip(".")  # "Mr." inside, a full stop at the end
    tokens = [t for t in tokens if t]
    keys: dict[str, None] = {}
    for i in range(len(tokens)):
        for run in (tokens[i:j] for j in range(i + 1, min(len(tokens), i + longest) + 1)):
            keys[" ".join(run)] = None
            last = _without_possessive(run[-1])
            if last != run[-1]:
                keys[" ".join([*run[:-1], last]).strip()] = None
    keys.pop("", None)
    return list(keys)[:most]


def _without_possessive(word: str) -> str:
    for ending in _POSSESSIVES:
        word = word.removesuffix(ending)
    return word
