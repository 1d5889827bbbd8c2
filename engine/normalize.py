"""Normalization and validation of names, predicates and labels before they reach a database."""

from __future__ import annotations

import functools
import hashlib
import re
import unicodedata
from collections.abc import Callable

from engine.errors import InvalidInputError, LimitExceededError
from engine.invisible import check_visible, hidden_at

MAX_LABEL_CHARS = 64  # a relationship type's or a label's characters
MAX_PREDICATE_CHARS = 1024  # a predicate as given: a namespaced one (a URI) keeps a short part
# labels graphmem's own queries match on: an entity type never becomes one of them
RESERVED_LABELS = frozenset(
    {
        "Entity", "Fact", "Episode", "History", "MessageIndex", "RelationVectors",
        "GraphmemKey", "GraphmemSchema",
    }
)  # fmt: skip
_SPACES = re.compile(r"\s+")
# a name's words: letters and digits, and the marks and joiners written with them (a vowel
# sign, an accent; the zero-width (non-)joiner of Persian or Sinhala); presentation only
# (a variation selector, an enclosing mark) is no part of a name
_WORD_START = frozenset({"Lu", "Ll", "Lt", "Lm", "Lo", "Nd", "Nl", "No"})
_WORD_PART = _WORD_START | {"Mn", "Mc"}
_JOINERS = frozenset("\u200c\u200d")
_PRESENTATION = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
_NAMESPACE_SEPARATORS = re.compile(r"[/.#:]+")
_CONTROL = {"Cc", "Cs"}
# plurals no ending rule makes singular
_IRREGULAR = {"children": "child", "people": "person", "men": "man", "women": "woman"}
# CJK text has no spaces between words: ideographs, kana and hangul syllables
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_CJK = re.compile(f"[{CJK_CHARS}]")


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def clean_text(value: object, what: str, max_chars: int) -> str:
    """Return `value` as NFKC text with control characters turned into spaces.

    The raw length is checked first, so an oversized value is refused before any pass over
    it; NFKC may lengthen a text (up to 18 times), so the result is checked again.

    Raises:
        InvalidInputError: `value` is not a string or is blank.
        LimitExceededError: `value`, raw or normalized, is longer than `max_chars`.
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    check_length(value, what, max_chars)  # before any work: NFKC alone costs seconds on MBs
    text = canonical_text(value)
    if not text:
        raise InvalidInputError(f"{what} is empty or only whitespace")
    check_length(text, what, max_chars)
    return text


def kept_text(value: object, what: str, max_chars: int) -> str:
    """`clean_text` of a caller's text that is stored (a speaker's name, a session, a user id):
    a NUL character or a lone surrogate in it is refused, as in a message, not cleaned into a
    space (nor, alone, taken for blank text).

    Raises:
        InvalidInputError: as `clean_text`, or `value` holds a NUL or a lone surrogate.
        LimitExceededError: as `clean_text` (checked first).
    """
    if isinstance(value, str):
        check_length(value, what, max_chars)
        check_storable(value, what)
    return clean_text(value, what, max_chars)


def canonical_text(text: str) -> str:
    """The form text is matched on (never stored in its place): NFKC, control characters as
    spaces, whitespace runs as one space, trimmed."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(" " if unicodedata.category(c) in _CONTROL else c for c in text)
    return _SPACES.sub(" ", text).strip()


def verbatim_text(value: object, what: str, max_chars: int) -> str:
    """Return `value` exactly as given, once it is storable text (a message is kept as said).

    Raises:
        InvalidInputError: not a string, blank, or holding what no database can store (a NUL
            character, a lone surrogate).
        LimitExceededError: longer than `max_chars` (checked before anything else is).
    """
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a string, got {type(value).__name__}")
    check_length(value, what, max_chars)
    if not canonical_text(value):
        raise InvalidInputError(f"{what} is empty or only whitespace")
    check_storable(value, what)
    return value


def check_storable(value: str, what: str) -> None:
    """Refuse text no database can store, rather than clean it: a caller's NUL character or
    lone surrogate is a mistake to be told of, not a character to drop.

    Raises:
        InvalidInputError: `value` holds a NUL character or a lone surrogate (named by `what`).
    """
    if "\x00" in value:
        raise InvalidInputError(f"{what} holds a NUL character, which cannot be stored")
    check_unicode(value, what)


def check_unicode(value: str, what: str) -> None:
    """Raises InvalidInputError when `value` holds a lone surrogate (UTF-8 cannot carry it),
    named by `what`."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} is not valid Unicode text (a lone surrogate at {exc.start})"
        ) from None


def split_text(text: str, limit: int | None) -> list[str]:
    """`text` in consecutive pieces of at most `limit` characters (None: one piece), cut at a
    space where one is in the second half of a piece; nothing is dropped but the spaces at
    the cuts and ends. Blank text gives no piece."""
    text = text.strip()
    pieces = []
    while limit is not None and len(text) > limit:
        cut = text.rfind(" ", limit // 2, limit + 1)
        cut = cut if cut > 0 else limit
        pieces.append(text[:cut].strip())
        text = text[cut:].strip()
    return [p for p in [*pieces, text] if p]


def entity_key(name: str) -> str:
    """The identity of an entity name: NFKC, case-folded, whitespace collapsed."""
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()


def normalize_predicate(predicate: object) -> str:
    """Turn `predicate` into an UPPER_SNAKE_CASE relationship type, in its own script.

    "friend of", "friendOf" and "FRIEND-OF" all become FRIEND_OF, "está casado con"
    ESTÁ_CASADO_CON, "住在" stays 住在; a namespaced name keeps its local part
    ("/people/person/nationality": NATIONALITY, see `_local_name`).

    Raises:
        InvalidInputError: nothing usable is left, or it does not start with a letter.
        LimitExceededError: longer than 1,024 characters as given, or than 64 as a type.
    """
    if not isinstance(predicate, str):
        raise InvalidInputError(f"predicate must be a string, got {type(predicate).__name__}")
    check_length(predicate, "predicate", MAX_PREDICATE_CHARS)  # before any pass over it
    snake = _snake_case(predicate)
    if len(snake) > MAX_LABEL_CHARS:
        raise LimitExceededError(
            f"predicate {predicate[:80]!r} is {len(snake)} characters as a relationship type "
            f"({snake[:20]}...); the limit is {MAX_LABEL_CHARS}"
        )
    if not is_relation_type(snake):
        raise InvalidInputError(
            f"predicate {predicate[:80]!r} cannot be a relationship type: it needs letters or "
            "digits and must start with a letter (e.g. FRIEND_OF)"
        )
    return snake


@functools.lru_cache(maxsize=4096)  # a graph's predicates repeat: loads normalize each fact's
def _snake_case(predicate: str) -> str:
    text = _local_name(unicodedata.normalize("NFKC", predicate).strip())
    # upper case may decompose a letter ("ΐ"): composed again, the type is its own form
    return unicodedata.normalize("NFKC", "_".join(name_words(text)).upper())


@functools.lru_cache(maxsize=4096)  # checked at every statement a search fills with types
def is_relation_type(name: str) -> bool:
    """True when `name` may be a relationship type: upper snake case in any script
    (FRIEND_OF, ESTÁ_CASADO_CON, 住在), a letter first, at most 64 characters. Such a name
    holds no character Cypher would read (it is written between backticks)."""
    return (
        0 < len(name) <= MAX_LABEL_CHARS
        and _is_letter(name[0])
        and all(c == "_" or _in_word(c) for c in name)
        and name == name.upper()
        and unicodedata.is_normalized("NFKC", name)
    )


def name_words(text: str) -> list[str]:
    """The words of a name: runs of letters and digits in any script with the marks and
    joiners written with them, split where a lower-case letter or a digit meets a capital
    ("friendOf": friend, Of) or where a caseless letter meets one ("住在Inverse")."""
    words: list[str] = []
    word: list[str] = []
    before = ""
    for c in _PRESENTATION.sub("", text):
        kind = unicodedata.category(c)
        joins = bool(word) and (kind in ("Mn", "Mc") or c in _JOINERS)
        starts = kind in _WORD_START
        if (not starts and not joins) or (kind == "Lu" and before in ("Ll", "Lo", "Nd")):
            _end_word(words, word)
            word = []
        if starts or joins:
            word.append(c)
        before = kind
    _end_word(words, word)
    return words


def _end_word(words: list[str], word: list[str]) -> None:
    while word and word[-1] in _JOINERS:
        word.pop()
    if word:
        words.append("".join(word))


def _in_word(c: str) -> bool:
    return unicodedata.category(c) in _WORD_PART or c in _JOINERS


def _is_letter(c: str) -> bool:
    return unicodedata.category(c)[0] == "L"


def _local_name(text: str) -> str:
    """The last part of a namespaced predicate (a URI, "people.person.nationality",
    "schema:birthPlace"); other text as it is. The namespace repeats across a graph's
    relations: kept, it would outweigh what tells them apart ("people person nationality",
    "people person parents") wherever a question's words are matched to relations."""
    if _SPACES.search(text):
        return text  # words, not a name: "born in St. Louis"
    parts = [p for p in _NAMESPACE_SEPARATORS.split(text) if p]
    # a local name has two letters or more: "citizen_of_U.S." is a name with dots in it
    named = len(parts) > 1 and sum(c.isalpha() for c in parts[-1]) > 1
    return parts[-1] if named else text


def spoken_predicate(predicate: str) -> str:
    """The words a fact's sentence says for `predicate` as given ("lives in" for LIVES_IN
    and livesIn): each in lower case, but a word beyond ASCII that holds a lower-case letter
    stays as written, as the type's upper case may have lost a letter (a Turkish dotless i
    is an I, a German sharp s an SS)."""
    words = name_words(_local_name(unicodedata.normalize("NFKC", predicate).strip()))
    return " ".join(w if not w.isascii() and w != w.upper() else w.lower() for w in words)


def predicate_words(predicate: str) -> str:
    """FRIEND_OF -> 'friend of' (what a sentence or an embedding sees)."""
    return predicate.replace("_", " ").lower()


def singular_form(name: str) -> str:
    """A relation's readable name with its last word in the singular ("starred actors" ->
    "starred actor", "children" -> "child")."""
    head, _, last = name.rpartition(" ")
    if last in _IRREGULAR:
        last = _IRREGULAR[last]
    elif last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith(("sses", "ches", "shes", "xes")):
        last = last[:-2]
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
        last = last[:-1]
    return f"{head} {last}" if head else last


def normalize_label(entity_type: str | None) -> str | None:
    """A PascalCase label for an entity type an extractor gave, or None when nothing valid is
    left (a type the caller names itself: `check_label`)."""
    if not entity_type:
        return None
    label = _pascal_case(unicodedata.normalize("NFKC", entity_type))[:MAX_LABEL_CHARS]
    return label if is_type_label(label) else None


def check_label(entity_type: object, what: str, max_chars: int) -> str | None:
    """The label of an entity type a caller names (`add_facts`): its words in PascalCase, in
    their own script ("person": Person, "sports team": SportsTeam, "país": País), or None
    for none (None, blank). Nothing is dropped or cut silently: a type that would lose a
    part is refused, naming it.

    Raises:
        InvalidInputError: not a string, or no label: no letter first, or one of graphmem's
            own labels.
        LimitExceededError: longer than `max_chars` as given, or than 64 as a label.
    """
    if entity_type is None:
        return None
    if not isinstance(entity_type, str):
        raise InvalidInputError(f"{what} must be a string, got {type(entity_type).__name__}")
    check_length(entity_type, what, max_chars)  # before any pass over it
    text = unicodedata.normalize("NFKC", entity_type)
    if not text.strip():
        return None
    label, shown = _pascal_case(text), f"{what} {entity_type[:80]!r}"
    if len(label) > MAX_LABEL_CHARS:
        raise LimitExceededError(
            f"{shown} is {len(label)} characters as a label ({label[:20]}...); the limit is "
            f"{MAX_LABEL_CHARS}"
        )
    if label in RESERVED_LABELS:
        raise InvalidInputError(
            f"{shown} cannot be an entity type: {label} is one of graphmem's own labels"
        )
    if not is_type_label(label):
        raise InvalidInputError(
            f"{shown} cannot be an entity type: it needs letters or digits and must start "
            "with a letter (e.g. person, or sports team for SportsTeam)"
        )
    return label


def _pascal_case(text: str) -> str:
    """The words of `text` joined, each capitalized ("sports team" and "SportsTeam":
    SportsTeam; "PERSON": Person; "país": País), composed again where a case change
    decomposed a letter."""
    label = "".join(w[:1].title() + w[1:].lower() for w in name_words(text))
    return unicodedata.normalize("NFKC", label)


@functools.lru_cache(maxsize=4096)
def is_type_label(label: str) -> bool:
    """True when `label` may be an entity's type label: PascalCase in any script (Person,
    País, 人物), at most 64 characters, not reserved. Such a label holds no character Cypher
    would read (it is written between backticks)."""
    return (
        0 < len(label) <= MAX_LABEL_CHARS
        and _is_letter(label[0])
        and label[0] == label[0].title()
        and all(_in_word(c) for c in label)
        and label not in RESERVED_LABELS
        and unicodedata.is_normalized("NFKC", label)
    )


def stable_uid(*parts: str) -> str:
    """A deterministic id: the same parts always give the same uid (idempotent writes)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode("utf-8"), digest_size=16)
    return digest.hexdigest()


def check_user_id(user_id: object, held: Callable[[str], bool] | None = None) -> str:
    """Validate a user id; it scopes every query, so it is taken exactly as given.

    Raises:
        InvalidInputError: not a string, blank, holding a lone surrogate, or not in
            canonical form (NFKC, no control characters, no surrounding or repeated
            whitespace): such an id would silently share a graph with its canonical twin
            (fullwidth "alice" and "alice"); or holding an invisible format character
            (`engine.invisible`: "alice\u200b" would pass for "alice"), unless `held(id)`
            says the store holds it (stored before: a call that reads or deletes takes it).
        LimitExceededError: longer than 256 characters.
    """
    if isinstance(user_id, str):  # a NUL is told as what it would alias: "al ice"
        check_length(user_id, "user_id", 256)
        check_unicode(user_id, "user_id")
    clean = clean_text(user_id, "user_id", 256)
    if clean != user_id:
        raise InvalidInputError(
            f"user_id {user_id!r} is not in canonical form (NFKC, no control characters, "
            f"single inner spaces, none around): it would be read as {clean!r}"
        )
    if not (held is not None and hidden_at(clean) and held(clean)):
        check_visible(clean, "user_id")
    return clean


def check_count(value: object, what: str, low: int, high: int | None = None) -> int:
    """A count a caller passed (a limit, an offset): an integer, not a bool, in [low, high].

    Raises:
        InvalidInputError: anything else, named (a database would reject it less clearly).
    """
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and low <= value
        and (high is None or value <= high)
    ):
        return value
    bound = f"between {low} and {high}" if high is not None else f"an integer of at least {low}"
    raise InvalidInputError(f"{what} must be {bound}, got {value!r}")


def check_length(value: str, what: str, max_chars: int) -> None:
    if len(value) > max_chars:
        raise LimitExceededError(f"{what} has {len(value)} characters; the limit is {max_chars}")


def check_length_of(parts: list[str], what: str, max_chars: int) -> None:
    """`check_length` of the text the `parts` make together, before it is made."""
    total = sum(len(part) for part in parts) + max(len(parts) - 1, 0)
    if total > max_chars:
        raise LimitExceededError(f"{what} has {total} characters; the limit is {max_chars}")
