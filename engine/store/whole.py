"""A write batch stored whole though what its writer read changed before the write.

A writer embeds only what it reads as new: a fact or an entity it reads as stored goes with no
vector (`FactRow.stored`, `EntityRow.stored`). One deleted in between (another client's
`delete` or `delete_entity`) would come back from a plain MERGE without its vector (an entity
also without its aliases and its ADD event), which the vector searches never find; a fact
naming an entity gone by then would not be written at all. So, before the call that wrote it
returns (`write_whole`):
- a batch naming an entity read as stored that is gone writes nothing
  (`cypher/guard_stored_entities.cypher`); the entities gone are made new ones, whole (their
  name vectors, the aliases they were read with, an ADD event: `renewed`), and the batch is
  written again;
- the facts a write leaves out (`Written.vanished`: read as stored and gone, or naming an
  entity gone) are written again as new facts, with their vectors, and the entities they name
  that are gone are written with them, whole (`again`).
Nothing is embedded when nothing was deleted. What still could not be written stays in
`Written.vanished`, for the caller to report.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace

from engine.embedding import Embedder, as_param
from engine.normalize import entity_key, stable_uid
from engine.store.base import AliasRow, EntityRow, HistoryRow, WriteBatch, Written
from engine.store.reads import Reads

Write = Callable[[WriteBatch], Written]
Held = Callable[[list[str]], set[str]]  # the uids, of those asked, of entities the user holds
# times a batch is written again after an entity it read as stored was found gone; the last
# time, every entity it read as stored is written whole, with no guard (a bound, not a timing)
ENTITY_ROUNDS = 3


def held_in(reads: Reads, user_id: str) -> Held:
    """Which entities, of the uids asked, `user_id` holds, as `reads` reads them."""
    return lambda uids: {e.uid for e in reads.entities_by_uids(user_id, uids)}


def write_whole(
    write: Write,
    embedder: Embedder,
    batch: WriteBatch,
    held: Held | None = None,
    ends: Mapping[str, EntityRow] | None = None,
) -> Written:
    """`write(batch)`, written again with what it found gone made whole (see the module
    docstring); what the writes wrote together. `held` tells which entities are stored (a
    writer without it writes every entity it read as stored whole when one is gone); `ends`:
    rows of entities the batch's facts name beyond its own entities (a load's fact chunks),
    written whole with a fact that names them if they are gone."""
    batch, written = _entities_whole(write, embedder, batch, held)
    if written.stored_already or not written.vanished:
        return written
    rows = {**(ends or {}), **{e.uid: e for e in batch.entities}}
    part = again(batch, written.vanished, embedder, _gone(held, rows, batch, written.vanished))
    return joined(written, write(part))


def _entities_whole(
    write: Write, embedder: Embedder, batch: WriteBatch, held: Held | None
) -> tuple[WriteBatch, Written]:
    """`batch` as last written, and what it wrote: written again, the entities it read as
    stored that are gone made whole, while its guard says one is gone."""
    written = write(batch)
    for round_ in range(ENTITY_ROUNDS):
        stored = [e.uid for e in batch.entities if e.stored]
        if not (written.stored_already and stored):
            break
        gone = set(stored) - (held(stored) if held is not None else set())
        if not gone and batch.episodes:
            break  # its messages' guard said no: stored already
        if not gone or round_ == ENTITY_ROUNDS - 1:
            gone = set(stored)  # back, or gone again: all written whole, guarded no more
        batch = renewed(batch, gone, embedder)
        written = write(batch)
    return batch, written


def renewed(batch: WriteBatch, uids: set[str], embedder: Embedder) -> WriteBatch:
    """`batch` with the entities `uids` as new ones: no longer read as stored, each with the
    vector of its name (unless the batch gives one), an ADD event if it makes it, and the
    aliases it was read with."""
    rows = [_whole(e) if e.uid in uids else e for e in batch.entities]
    return replace(
        batch,
        entities=rows,
        entity_embeddings=_vectors(batch, [e for e in rows if e.uid in uids], embedder),
        aliases=[*batch.aliases, *_aliases(e for e in rows if e.uid in uids)],
    )


def _whole(row: EntityRow) -> EntityRow:
    uid = stable_uid(row.uid, "ADD", repr(row.ts))
    added = row.on_create or HistoryRow(uid, row.uid, "ADD", row.ts, None, row.name)
    return replace(row, stored=False, on_create=added)


def _vectors(
    batch: WriteBatch, rows: list[EntityRow], embedder: Embedder
) -> dict[str, list[float]]:
    missing = [e for e in rows if e.uid not in batch.entity_embeddings]
    vectors = embedder.encode([e.name for e in missing])
    fresh = {e.uid: as_param(v) for e, v in zip(missing, vectors, strict=True)}
    return {**batch.entity_embeddings, **fresh}


def _aliases(rows: Iterable[EntityRow]) -> list[AliasRow]:
    """The names each entity was read with besides its own key; the key of its name among
    them when that is not its key (a renamed entity is found by its name)."""
    out = []
    for row in rows:
        for name in (*row.aliases, row.name):
            key = entity_key(name)
            if key != row.key:
                out.append(AliasRow(row.uid, name, key))
    return out


def _gone(
    held: Held | None, rows: Mapping[str, EntityRow], batch: WriteBatch, facts: frozenset[str]
) -> list[EntityRow]:
    """The rows of the entities the facts `facts` of `batch` name that are gone."""
    named = {u for f in batch.facts if f.uid in facts for u in (f.subject_uid, f.object_uid)}
    known = sorted(u for u in named if u in rows)
    if held is None or not known:
        return []
    stored = held(known)
    return [rows[u] for u in known if u not in stored]


def again(
    batch: WriteBatch,
    vanished: frozenset[str],
    embedder: Embedder,
    entities: list[EntityRow] | None = None,
) -> WriteBatch:
    """The part of `batch` that writes the `vanished` facts, as new ones: their rows (each
    with its events: an ADD, if it has one, is recorded now), the vector of the sentence each
    ends with (the batch's, if it gives one), their new sentences and ends; with them the
    `entities` they name that are gone, whole. The rest of `batch` is written already."""
    rows = [replace(row, stored=False) for row in batch.facts if row.uid in vanished]
    texts: dict[str, str] = {}
    for row in rows:
        texts.setdefault(row.uid, batch.fact_texts.get(row.uid, row.text))
    given = {u: batch.fact_embeddings[u] for u in texts if u in batch.fact_embeddings}
    todo = [u for u in texts if u not in given]
    vectors = embedder.encode([texts[u] for u in todo])
    named = {e.uid for e in entities or []}
    part = WriteBatch(
        entities=list(entities or []),
        entity_embeddings={u: v for u, v in batch.entity_embeddings.items() if u in named},
        aliases=[a for a in batch.aliases if a.uid in named],
        renames=[r for r in batch.renames if r.uid in named],
        facts=rows,
        fact_embeddings={**given, **{u: as_param(v) for u, v in zip(todo, vectors, strict=True)}},
        fact_texts={uid: text for uid, text in batch.fact_texts.items() if uid in vanished},
        fact_ends=[row for row in batch.fact_ends if row.uid in vanished],
        invalidate=[uid for uid in batch.invalidate if uid in vanished],
        invalid_at=batch.invalid_at,
        invalid_at_of={u: t for u, t in batch.invalid_at_of.items() if u in vanished},
    )
    return renewed(part, named, embedder)


def joined(first: Written, second: Written) -> Written:
    """What two writes of one batch wrote (the second wrote no messages)."""
    return Written(
        mentions={**first.mentions, **second.mentions},
        added=first.added | second.added,
        added_entities=first.added_entities | second.added_entities,
        predicates=first.predicates | second.predicates,
        episodes=first.episodes,
        vanished=second.vanished,
    )
