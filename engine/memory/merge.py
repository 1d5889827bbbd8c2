"""The write batch of `Memory.merge_entities`: one entity's facts moved onto another."""

from __future__ import annotations

from engine.add.resolve import history_row
from engine.models import Entity, Fact
from engine.normalize import stable_uid
from engine.store.base import FactMoveRow, MergeBatch


def merge_batch(kept: Entity, gone: Entity, facts: list[Fact], now: float) -> MergeBatch:
    """The batch that gives `kept` the `facts` of `gone` (each under the uid its new ends
    give it, joining a fact `kept` already has; a fact between the two is dropped), `gone`'s
    mentions, messages and names (as aliases), with the MERGE events. The store moves each
    fact with the values it holds when the batch runs (`MergeBatch`), and `gone`'s names as
    it holds them then: `facts` say which, and where to, not what they say."""
    batch = MergeBatch(kept.uid, gone.uid)
    for fact in facts:
        s = kept.uid if fact.subject_uid == gone.uid else fact.subject_uid
        o = kept.uid if fact.object_uid == gone.uid else fact.object_uid
        if s == o:  # a fact between the two: nothing left to say
            batch.drops.append(fact.uid)
            continue
        uid = stable_uid(kept.user_id, s, fact.predicate, o)
        event = history_row(uid, "MERGE", now, None, f"from fact {fact.uid}")
        batch.moves.append(FactMoveRow(fact.uid, uid, s, o, fact.predicate, event))
    detail = f"merged {gone.name!r} ({gone.uid})"
    batch.history.append(history_row(kept.uid, "MERGE", now, None, detail))
    return batch
