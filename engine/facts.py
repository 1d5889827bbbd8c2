"""Turning pre-extracted facts into a write batch: validation, resolution, embeddings."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError, LimitExceededError
from engine.models import FactInput, to_epoch
from engine.normalize import (
    clean_text,
    entity_key,
    normalize_label,
    normalize_predicate,
    predicate_words,
    stable_uid,
)
from engine.store.base import EntityRow, FactRow, GraphStore, HistoryRow, WriteBatch


@dataclass(frozen=True, slots=True)
class CleanFact:
    subject: str
    predicate: str
    object: str
    text: str
    subject_type: str | None
    object_type: str | None
    valid_at: float | None
    confidence: float


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
        raise InvalidInputError(f"invalid fact {item!r}: {exc.errors()[0]['msg']}") from exc
    raise InvalidInputError(
        f"a fact must be (subject, predicate, object[, text]), a dict or a FactInput; got {item!r}"
    )


def clean_fact(fact: FactInput, settings: Settings) -> CleanFact:
    subject = clean_text(fact.subject, "subject", settings.max_name_chars)
    obj = clean_text(fact.object, "object", settings.max_name_chars)
    predicate = normalize_predicate(fact.predicate)
    if fact.text is not None:
        text = clean_text(fact.text, "fact text", settings.max_text_chars)
    else:
        text = f"{subject} {predicate_words(predicate)} {obj}"
    return CleanFact(
        subject,
        predicate,
        obj,
        text,
        fact.subject_type,
        fact.object_type,
        to_epoch(fact.valid_at),
        fact.confidence,
    )


def validate_facts(items: Iterable[Any], settings: Settings) -> list[CleanFact]:
    """Validate every fact before anything is written: one bad fact rejects the call."""
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


def build_batch(
    store: GraphStore,
    embedder: Embedder,
    user_id: str,
    facts: list[CleanFact],
    episode: str | None = None,
    now: float | None = None,
) -> tuple[WriteBatch, set[str]]:
    """The batch that writes `facts`, and the uids of the facts that are new."""
    now = time.time() if now is None else now
    names: dict[str, tuple[str, str | None]] = {}
    counts: Counter[str] = Counter()
    for f in facts:
        for name, etype in ((f.subject, f.subject_type), (f.object, f.object_type)):
            key = entity_key(name)
            counts[key] += 1
            if key not in names or (names[key][1] is None and etype):
                names[key] = (name, normalize_label(etype))
    known = store.entities_by_keys(user_id, list(names))
    uid_of = {k: (known[k].uid if k in known else stable_uid(user_id, k)) for k in names}
    batch = WriteBatch()
    batch.entities = [
        EntityRow(
            uid_of[k],
            known[k].key if k in known else k,
            known[k].name if k in known else n,
            t,
            now,
            counts[k],
        )
        for k, (n, t) in names.items()
    ]
    new_entities = [k for k in names if k not in known]
    vectors = embedder.encode([names[k][0] for k in new_entities])
    batch.entity_embeddings = {
        uid_of[k]: as_param(v) for k, v in zip(new_entities, vectors, strict=True)
    }
    rows: dict[str, FactRow] = {}
    for f in facts:
        s_uid, o_uid = uid_of[entity_key(f.subject)], uid_of[entity_key(f.object)]
        uid = stable_uid(user_id, s_uid, f.predicate, o_uid)
        previous = rows.get(uid)
        mentions = previous.mentions + 1 if previous else 1
        rows[uid] = FactRow(
            uid, s_uid, o_uid, f.predicate, f.text, now, f.valid_at, f.confidence, episode, mentions
        )
    batch.facts = list(rows.values())
    existing = {f.uid for f in store.facts_by_uids(user_id, list(rows))}
    new = [u for u in rows if u not in existing]
    fact_vectors = embedder.encode([rows[u].text for u in new])
    batch.fact_embeddings = {u: as_param(v) for u, v in zip(new, fact_vectors, strict=True)}
    batch.history = [
        HistoryRow(stable_uid(u, "ADD", repr(now)), u, "ADD", now, episode, rows[u].text)
        for u in new
    ]
    return batch, set(new)
