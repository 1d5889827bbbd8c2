"""The user's own entity in an import: the one record of the file that becomes it, written
onto the one the target holds.

For another user, an import derives the target's own uid (`engine.uids.self_uid`) for two
kinds of record (`restore.rekey`): the file's own user's entity, and an entity named as the
target user id ("Bob" for user `bob`), as `add_facts` and `load` derive it. At most one may
become it: the file's "I" and a person named as the target are two people, and writing both
onto one node would merge them unseen, so such a file is refused. The record then lands on
the node the target holds under that uid, whatever key it has now (the import's MERGE is by
key: its key and name are the held node's, its own names become aliases).

An entity named as the target is another record than the target's own: as `add_facts` would,
its mentions add up with the held one's, and a MERGE event on the user's own entity records
it. That event (its uid derived from the record's key alone) is how an import of the file
again, or of a later export of it, knows the mentions were added already: they are then
compared, never added twice. The file's own entity, for its user or another, is the user's
own record itself: it never lowers what the target holds, as every imported record.
"""

from __future__ import annotations

from engine.errors import InvalidInputError
from engine.models import Entity
from engine.normalize import entity_key, stable_uid
from engine.store.reads import Reads
from engine.transfer.snapshot import EntityRecord, GraphSnapshot, HistoryRecord
from engine.uids import self_uid

__all__ = ["own_entity"]


def own_entity(
    reads: Reads, snapshot: GraphSnapshot, source_user: str, source_own: str | None
) -> tuple[GraphSnapshot, int]:
    """The snapshot (rekeyed for its target, `snapshot.user_id`) with the record that becomes
    the target's own written onto the node the target holds, and 1 when that record is an
    entity named as the target (0 otherwise). `source_own` is the key of the file's own
    user's entity, if it has one.

    Raises:
        InvalidInputError: two records of the file would both be the target's own entity.
    """
    target = snapshot.user_id
    uid = self_uid(target)
    mine = [e for e in snapshot.entities if e.uid == uid]
    if not mine:
        return snapshot, 0
    if len(mine) > 1:
        raise InvalidInputError(_two_owns(mine, source_user, target, source_own))
    [record] = mine
    held = next(iter(reads.entities_by_uids(target, [uid])), None)
    named = source_user != target and record.key in {entity_key(target)} - {source_own}
    if not named:
        return _onto(snapshot, record, held, record.mentions), 0
    marker = _marker(record, uid, snapshot.exported_at)
    added = held is not None and marker.uid not in {h.uid for h in reads.history(target, uid)}
    mentions = record.mentions + (held.mentions if held is not None and added else 0)
    snapshot = _onto(snapshot, record, held, mentions)
    # the record's own ADD is no creation of an entity the user holds: the marker says it
    history = [
        h
        for h in snapshot.history
        if h.uid != marker.uid and (held is None or (h.target_uid, h.event) != (uid, "ADD"))
    ]
    history.append(marker)
    return snapshot.model_copy(update={"history": history}), 1


def _onto(
    snapshot: GraphSnapshot, record: EntityRecord, held: Entity | None, mentions: int
) -> GraphSnapshot:
    """The snapshot with `record` under the key and name of `held` (the target's own node,
    or None), its own names as aliases, and `mentions`."""
    update: dict[str, object] = {"mentions": mentions}
    if held is not None and held.key != record.key:
        key = held.key
        names = [n for n in [record.name, *record.aliases] if entity_key(n) != key]
        aliases = list(dict.fromkeys(names))
        update |= {"key": key, "name": held.name, "aliases": aliases}
        update["alias_keys"] = list(dict.fromkeys(entity_key(n) for n in aliases))
    moved = record.model_copy(update=update)
    entities = [moved if e is record else e for e in snapshot.entities]
    return snapshot.model_copy(update={"entities": entities})


def _marker(record: EntityRecord, uid: str, exported_at: float) -> HistoryRecord:
    """The MERGE event saying the imported `record` is the user's own entity `uid`."""
    return HistoryRecord(
        uid=stable_uid(uid, "MERGE", "imported as the user's own", record.key),
        target_uid=uid,
        event="MERGE",
        ts=record.first_seen or record.created_at or exported_at,
        detail=f"imported {record.name!r} as the user's own entity (named as the user id)",
    )


def _two_owns(
    mine: list[EntityRecord], source_user: str, target: str, source_own: str | None
) -> str:
    def told(e: EntityRecord) -> str:
        if e.key == source_own:
            return f"{e.name!r} (the own entity of {source_user!r})"
        if e.key == entity_key(target):
            return f"{e.name!r} (named as user {target!r})"
        return f"{e.name!r} (the name of {target!r}'s own entity)"

    return (
        f"the export holds {len(mine)} entities that would all be {target}'s own entity: "
        f"{', '.join(told(e) for e in mine)}; nothing was written. Import it for another "
        f"user id, or merge or rename them in {source_user!r}'s graph first"
    )
