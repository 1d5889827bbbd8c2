"""Pre-extracted facts in (`Memory.add_facts`): validation, then the same batch as an add."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from engine.add.batch import assemble
from engine.add.changes import Changes, settle
from engine.add.resolve import Resolved, history_row, stored_row
from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError, LimitExceededError
from engine.models import FactInput, to_epoch
from engine.normalize import (
    check_label,
    check_storable,
    clean_text,
    entity_key,
    normalize_predicate,
    spoken_predicate,
    stable_uid,
)
from engine.store.base import EntityRow, FactRow, WriteBatch
from engine.store.reads import Reads
from engine.uids import entity_uid


@dataclass(frozen=True, slots=True)
class CleanFact:
    """A validated fact: names cleaned, the predicate a relationship type, each entity type
    a label (`check_label`) or None."""

    subject: str
    predicate: str
    object: str
    text: str
    subject_type: str | None
    object_type: str | None
    valid_at: float | None
    confidence: float


# a fact's text fields, and the names its errors give them
_TEXTS = {
    "subject": "subject", "predicate": "predicate", "object": "object", "text": "fact text",
    "subject_type": "subject_type", "object_type": "object_type",
}  # fmt: skip


def coerce_fact(item: Any) -> FactInput:
    """Accept a FactInput, a mapping, or a tuple `(subject, predicate, object[, text])`."""
    try:
        if isinstance(item, FactInput):
            return item
        if isinstance(item, dict):
            return FactInput.model_validate(item)
        if isinstance(item, Sequence) and not isinstance(item, str) and 3 <= len(item) <= 4:
            fields = dict(zip(("subject", "predicate", "object", "text"), item, strict=False))
            return FactInput.model_validate(fields)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid fact {item!r}: {_why(exc)}") from exc
    raise InvalidInputError(
        f"a fact must be (subject, predicate, object[, text]), a dict or a FactInput; got {item!r}"
    )


def _why(exc: ValidationError) -> str:
    """What is wrong with a fact, naming the field: pydantic's message alone ("Input should
    be a valid string", "Extra inputs are not permitted") does not say which."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"])
    if error["type"] == "extra_forbidden":
        hint = (
            "; a fact is added current: end it with update(uid, user_id, invalid_at=...)"
            if field == "invalid_at"
            else ""
        )
        return f"{field!r} is not a field of a fact ({', '.join(FactInput.model_fields)}){hint}"
    said = str(error["msg"]).removeprefix("Value error, ")
    return said if not field or said.startswith(field) else f"{field}: {said}"


def clean_fact(fact: FactInput, settings: Settings) -> CleanFact:
    """`fact` validated: names and text cleaned (spacing, control characters, NFKC), what no
    store can hold refused (a NUL, a lone surrogate: `add` refuses them too), each length
    checked before any other pass over the value.

    Raises:
        InvalidInputError: a field is unusable (the message names it).
        LimitExceededError: a field is longer than its limit.
    """
    subject = clean_text(fact.subject, "subject", settings.max_name_chars)
    obj = clean_text(fact.object, "object", settings.max_name_chars)
    predicate = normalize_predicate(fact.predicate)
    if fact.text is not None:
        text = clean_text(fact.text, "fact text", settings.max_text_chars)
    else:
        text = f"{subject} {spoken_predicate(fact.predicate)} {obj}"
    clean = CleanFact(
        subject,
        predicate,
        obj,
        text,
        check_label(fact.subject_type, "subject_type", settings.max_name_chars),
        check_label(fact.object_type, "object_type", settings.max_name_chars),
        to_epoch(fact.valid_at),
        fact.confidence,
    )
    for field, named in _TEXTS.items():  # as given: cleaning turned them into spaces
        value = getattr(fact, field)
        if isinstance(value, str):
            check_storable(value, named)
    return clean


def validate_facts(items: Iterable[Any], settings: Settings) -> list[CleanFact]:
    """Validate every fact before anything is written: one bad fact rejects the call."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise InvalidInputError(
            f"facts must be a list of facts (triples or dicts), got {type(items).__name__}"
        )
    facts = []
    for index, item in enumerate(items):
        if index >= settings.max_facts_per_call:
            raise LimitExceededError(
                f"more than {settings.max_facts_per_call} facts in one call; split the input "
                "or raise max_facts_per_call"
            )
        try:
            facts.append(clean_fact(coerce_fact(item), settings))
        except InvalidInputError as exc:
            raise type(exc)(f"fact #{index}: {exc}") from exc
    return facts


def distinct_facts(facts: list[CleanFact]) -> list[CleanFact]:
    """One fact per subject, predicate and object (names by `entity_key`): a fact repeated
    in one call is said once, one mention for it and its entities however often the call
    repeats it (repeating cannot inflate an entity's salience). The first gives the text,
    valid_at, confidence and types, as a fact stored before keeps its own; a type only a
    later repeat names is taken."""
    kept: dict[tuple[str, str, str], CleanFact] = {}
    for fact in facts:
        key = (entity_key(fact.subject), fact.predicate, entity_key(fact.object))
        held = kept.get(key)
        kept[key] = (
            fact
            if held is None
            else replace(
                held,
                subject_type=held.subject_type or fact.subject_type,
                object_type=held.object_type or fact.object_type,
            )
        )
    return list(kept.values())


def facts_batch(
    reads: Reads,
    embedder: Embedder,
    user_id: str,
    facts: list[CleanFact],
    episode: str | None = None,
    now: float | None = None,
) -> tuple[WriteBatch, Changes]:
    """The batch that writes pre-extracted `facts` (names resolved by key alone; `episode`
    their source message, if any), and what it changes (`Changes.new`: the facts not stored
    when read; the write tells which it added, `Written.added`)."""
    now = time.time() if now is None else now
    resolved = resolve_keys(reads, embedder, user_id, facts, now, episode)
    changes = Changes()
    for f in facts:
        s_uid, o_uid = resolved.uid_of[entity_key(f.subject)], resolved.uid_of[entity_key(f.object)]
        uid = stable_uid(user_id, s_uid, f.predicate, o_uid)
        row = FactRow(
            uid, s_uid, o_uid, f.predicate, f.text, now, f.valid_at, f.confidence, episode
        )
        changes.collect(row)
    settle(changes, reads, embedder, user_id, now, said_again=False)
    return assemble(resolved, changes, now), changes


def resolve_keys(
    reads: Reads,
    embedder: Embedder,
    user_id: str,
    facts: list[CleanFact],
    now: float,
    episode: str | None = None,
) -> Resolved:
    """The facts' names as entities: a stored entity of the same key, else a new one, the
    user's own for the name of their id (no similarity merge; "I" or "me" is no
    self-reference: pre-extracted facts name what they mean). A new one's ADD event (from
    `episode`, if any) is recorded only if the write creates it, as an add's is: another
    writer may store it first."""
    names: dict[str, tuple[str, str | None]] = {}
    counts: Counter[str] = Counter()
    for f in facts:
        for name, etype in ((f.subject, f.subject_type), (f.object, f.object_type)):
            key = entity_key(name)
            counts[key] += 1
            if key not in names or (names[key][1] is None and etype):
                names[key] = (name, etype)  # a label already (`check_label`)
    known = reads.entities_by_keys(user_id, list(names))
    out = Resolved()
    for key, (name, etype) in names.items():
        found = known.get(key)
        uid = found.uid if found else entity_uid(user_id, key)
        out.uid_of[key] = uid
        mentions = counts[key] + (out.entities[uid].mentions if uid in out.entities else 0)
        if found is not None:
            out.entities[uid] = stored_row(found, etype, now, mentions)
        else:
            added = history_row(uid, "ADD", now, episode, name)
            out.entities[uid] = EntityRow(uid, key, name, etype, now, mentions, on_create=added)
    fresh = [key for key in names if key not in known]
    vectors = embedder.encode([names[key][0] for key in fresh])
    out.new = [out.uid_of[key] for key in fresh]
    out.embeddings = {uid: as_param(v) for uid, v in zip(out.new, vectors, strict=True)}
    return out
