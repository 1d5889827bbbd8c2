"""The write batch of `Memory.merge_entities`: one entity's facts moved onto another."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from engine.add.resolve import history_row
from engine.embedding import Embedder, as_param
from engine.models import Entity, Fact
from engine.normalize import entity_key, stable_uid
from engine.store.base import AliasRow, EntityRow, FactEndsRow, FactRow, WriteBatch
from engine.store.reads import Reads


def merge_batch(
    reads: Reads, embedder: Embedder, kept: Entity, gone: Entity, facts: list[Fact], now: float
) -> tuple[WriteBatch, list[str]]:
    """The batch that gives `kept` the `facts` of `gone` (each under the uid its new ends
    give it, joining a fact `kept` already has), `gone`'s mentions and names as aliases, and
    the MERGE events; with the uids of `gone`'s facts, to delete once it is written."""
    batch, old = moved_facts(reads, embedder, kept, gone, facts, now)
    seen = gone.last_seen.timestamp() if gone.last_seen else now
    batch.entities.append(EntityRow(kept.uid, kept.key, kept.name, kept.type, seen, gone.mentions))
    keys = {kept.key}
    for alias in [gone.name, *gone.aliases]:
        if (key := entity_key(alias)) not in keys:
            keys.add(key)
            batch.aliases.append(AliasRow(kept.uid, alias, key))
    detail = f"merged {gone.name!r} ({gone.uid})"
    batch.history.append(history_row(kept.uid, "MERGE", now, None, detail))
    return batch, old


def moved_facts(
    reads: Reads, embedder: Embedder, kept: Entity, gone: Entity, facts: list[Fact], now: float
) -> tuple[WriteBatch, list[str]]:
    """The batch that moves the `facts` of `gone` onto `kept` (a MERGE event each), and the
    uids of those facts, to delete once it is written: the part of `merge_batch` a merge
    writes again for facts another writer gave `gone` while it ran."""
    user_id = kept.user_id
    batch = WriteBatch()
    moved: dict[str, Fact] = {}  # new uid -> the first fact moved there
    for fact in facts:
        s = kept.uid if fact.subject_uid == gone.uid else fact.subject_uid
        o = kept.uid if fact.object_uid == gone.uid else fact.object_uid
        if s == o:  # a fact between the two: nothing left to say
            continue
        uid = stable_uid(user_id, s, fact.predicate, o)
        batch.facts += _rows(fact, uid, s, o, now)
        batch.history.append(history_row(uid, "MERGE", now, None, f"from fact {fact.uid}"))
        moved.setdefault(uid, fact)
    stored = {f.uid: f for f in reads.facts_by_uids(user_id, list(moved))}
    # a fact there already gets no vector (deleted before the write, it is written again,
    # embedded: `engine.add.vanished`)
    batch.facts = [replace(row, stored=row.uid in stored) for row in batch.facts]
    new = [uid for uid in moved if uid not in stored]
    if new:
        vectors = embedder.encode([moved[uid].text for uid in new])
        batch.fact_embeddings = {uid: as_param(v) for uid, v in zip(new, vectors, strict=True)}
    batch.fact_ends = [_ends(uid, fact, stored.get(uid)) for uid, fact in moved.items()]
    return batch, [f.uid for f in facts]


def _rows(fact: Fact, uid: str, s: str, o: str, now: float) -> list[FactRow]:
    """`fact` under its new uid: its mentions once, each of its sources once."""
    ts = fact.last_seen.timestamp() if fact.last_seen else now
    valid_at = _epoch(fact.valid_at)
    sources: list[str | None] = list(fact.episodes) or [None]
    return [
        FactRow(
            uid,
            s,
            o,
            fact.predicate,
            fact.text,
            ts,
            valid_at,
            fact.confidence,
            episode,
            fact.mentions if i == 0 else 0,
        )
        for i, episode in enumerate(sources)
    ]


def _ends(uid: str, moved: Fact, stored: Fact | None) -> FactEndsRow:
    """The ends of a moved fact: its own, or joined with the fact already there (current if
    either is, true from the earlier start)."""
    start, end = _epoch(moved.valid_at), _epoch(moved.invalid_at)
    if stored is not None:
        starts = [t for t in (start, _epoch(stored.valid_at)) if t is not None]
        start = min(starts) if starts else None
        other = _epoch(stored.invalid_at)
        end = None if end is None or other is None else max(end, other)
    return FactEndsRow(uid, True, start, True, end)


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()
