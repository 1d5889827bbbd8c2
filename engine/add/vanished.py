"""Facts a write found gone: read as stored (so given no vector), deleted before the write.

A writer embeds only the facts it reads as new; the others go as `FactRow.stored`. One of
those deleted in between (another client's `delete`) would come back from a plain MERGE
without its vector, a fact the semantic leg can never find. The store does not create it
(`cypher/merge_facts.cypher`) and names it in `Written.vanished`; `write_whole` writes it
again as a new fact, with its vector, before the call that wrote it returns.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from engine.embedding import Embedder, as_param
from engine.store.base import WriteBatch, Written


def write_whole(
    write: Callable[[WriteBatch], Written], embedder: Embedder, batch: WriteBatch
) -> Written:
    """`write(batch)`, then the facts it found vanished written again, embedded; what the
    two wrote together (`joined`)."""
    written = write(batch)
    if not written.vanished:
        return written
    return joined(written, write(again(batch, written.vanished, embedder)))


def again(batch: WriteBatch, vanished: frozenset[str], embedder: Embedder) -> WriteBatch:
    """The part of `batch` that writes the `vanished` facts, as new ones: their rows (each
    with its events: an ADD, if it has one, is recorded now), the vector of the sentence each
    ends with, their new sentences and ends. The rest of `batch` is written already."""
    rows = [replace(row, stored=False) for row in batch.facts if row.uid in vanished]
    texts: dict[str, str] = {}
    for row in rows:
        texts.setdefault(row.uid, batch.fact_texts.get(row.uid, row.text))
    vectors = embedder.encode(list(texts.values()))
    return WriteBatch(
        facts=rows,
        fact_embeddings={uid: as_param(v) for uid, v in zip(texts, vectors, strict=True)},
        fact_texts={uid: text for uid, text in batch.fact_texts.items() if uid in vanished},
        fact_ends=[row for row in batch.fact_ends if row.uid in vanished],
    )


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
