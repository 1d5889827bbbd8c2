"""`MemoryEdit`: the verbs that change or remove what is stored, by hand (`Memory` has them).

Every verb is scoped by `user_id`: an id of another user answers `NotFoundError`, exactly as
an id that does not exist.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from engine.add.resolve import history_row
from engine.embedding import as_param
from engine.errors import InvalidInputError, NotFoundError, StoreError
from engine.memory.core import MemoryCore
from engine.memory.merge import merge_batch
from engine.models import Deleted, Entity, Fact, UserSummary
from engine.normalize import check_user_id, clean_text, entity_key
from engine.store.base import FactEndsRow, WriteBatch
from engine.store.statements import delete_fact
from engine.uids import UID

MERGE_ROUNDS = 5  # rounds a merge tries before it stops unfinished (`StoreError`), deleting nothing
MAX_UID_CHARS = 256  # uids are 32 hex digits; anything longer names nothing
When = datetime | float | int | str


def to_when(value: When, what: str) -> float:
    """A time given as a datetime (naive meaning UTC), epoch seconds or ISO 8601 text.

    Raises:
        InvalidInputError: anything else, or not a finite time.
    """
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            raise InvalidInputError(
                f"{what} must be an ISO 8601 date or time (2024-05-01, 2024-05-01T09:30), "
                f"got {value!r}"
            ) from None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError(f"{what} must be a datetime or epoch seconds, got {value!r}")
    return float(value)


class MemoryEdit(MemoryCore):
    """Update, delete, merge and forget by hand; list the store's users."""

    def users(self) -> list[UserSummary]:
        """Every user of the store, sorted by id, with the size of their memory (ids and
        counts only). A store-wide listing: give it to administrators, not to one user."""
        self._setup()
        found: dict[str, UserSummary] = {}
        for user_id, kind, count in self.store.run("list_users", {}):
            summary = found.setdefault(user_id, UserSummary(user_id=user_id))
            setattr(summary, kind, int(count))
        return [found[u] for u in sorted(found)]

    def update(
        self,
        uid: str,
        user_id: str,
        *,
        text: str | None = None,
        valid_at: When | None = None,
        invalid_at: When | None = None,
    ) -> Fact:
        """Change one fact by hand: its sentence (`text`, embedded again) and/or when it
        became true (`valid_at`) or stopped being true (`invalid_at`: the fact stays, as
        history, and search leaves it out). Times: a datetime (naive meaning UTC), epoch
        seconds or ISO 8601 text. Written as one batch with a history event: UPDATE (its
        detail the sentence) for a text or `valid_at`, INVALIDATE for an `invalid_at`.

        Returns the fact as stored now.

        Raises:
            InvalidInputError: nothing to change, an unusable value, or an `invalid_at`
                before the `valid_at` (given or the fact's).
            NotFoundError: the user has no fact with that uid.
        """
        if text is None and valid_at is None and invalid_at is None:
            raise InvalidInputError("nothing to update: give text, valid_at or invalid_at")
        fact = self._fact(uid, user_id)
        new_text = None if text is None else clean_text(text, "text", self.settings.max_text_chars)
        start = None if valid_at is None else to_when(valid_at, "valid_at")
        end = None if invalid_at is None else to_when(invalid_at, "invalid_at")
        begun = start if start is not None else _epoch(fact.valid_at)
        ended = end if end is not None else _epoch(fact.invalid_at)
        if ended is not None and begun is not None and ended < begun:
            raise InvalidInputError(
                "the fact would stop being true (invalid_at) before it became true (valid_at)"
            )
        now = time.time()
        batch = WriteBatch()
        if new_text is not None:
            self._setup(vectors=True)
            batch.fact_texts[fact.uid] = new_text
            batch.fact_embeddings[fact.uid] = as_param(self.embedder.encode([new_text])[0])
        if start is not None or end is not None:
            row = FactEndsRow(fact.uid, start is not None, start, end is not None, end)
            batch.fact_ends.append(row)
        if new_text is not None or start is not None:
            detail = new_text or fact.text
            batch.history.append(history_row(fact.uid, "UPDATE", now, None, detail))
        if end is not None:
            batch.history.append(history_row(fact.uid, "INVALIDATE", now, None))
        self.store.write(fact.user_id, batch)
        self.retriever.forget(fact.user_id)
        return self._fact(fact.uid, fact.user_id)

    def delete_episode(self, uid: str, user_id: str) -> Deleted:
        """Delete one message (episode). The facts it was a source of stay, with their other
        sources; entities nothing names or mentions any more go with it. Search and
        `context()` no longer show the message. (`forget` removes a fact with its messages.)

        Raises:
            NotFoundError: the user has no message with that uid.
        """
        user_id = self._held_user(user_id)
        uid = clean_text(uid, "uid", MAX_UID_CHARS)
        self._setup()
        rows = self.store.run("delete_episode", {"user_id": user_id, "uid": uid}, read_only=False)
        if not rows:
            raise NotFoundError(f"user {user_id!r} has no message {uid!r}")
        entities = self._drop_orphans(user_id, list(rows[0][1]))
        self.retriever.forget(user_id)
        return Deleted(episodes=[uid], entities=entities)

    def forget(self, uid: str, user_id: str) -> Deleted:
        """Forget one fact entirely: the fact (both forms) and its change history, every
        message it came from (so neither search nor `context()` shows what was said), and
        its entities once nothing names or mentions them. Other facts those messages gave
        stay, without them among their sources. (`delete` removes the fact alone.)

        Raises:
            NotFoundError: the user has no fact with that uid.
            StoreError: the database failed; what is gone stays gone, run it again to finish.
        """
        fact = self._fact(uid, user_id, held=True)
        user_id = fact.user_id
        entities: list[str] = []
        for episode in fact.episodes:
            params = {"user_id": user_id, "uid": episode}
            for _, mentioned in self.store.run("delete_episode", params, read_only=False):
                entities += mentioned
        delete_fact(self.store, user_id, fact.uid)
        gone = self._drop_orphans(user_id, [fact.subject_uid, fact.object_uid, *entities])
        self.retriever.forget(user_id)
        return Deleted(facts=[fact.uid], episodes=fact.episodes, entities=gone)

    def delete_entity(self, name_or_uid: str, user_id: str) -> Deleted:
        """Delete one entity (by name, alias or uid) with every fact that names it, current
        or past. The messages that mention it stay.

        Raises:
            NotFoundError: the user has no such entity.
        """
        entity = self._entity(name_or_uid, user_id, held=True)
        params = {"user_id": entity.user_id, "uid": entity.uid}
        rows = self.store.run("delete_entity", params, read_only=False)
        self.retriever.forget(entity.user_id)
        return Deleted(facts=list(rows[0][0]) if rows else [], entities=[entity.uid])

    def merge_entities(self, keep: str, merge: str, user_id: str) -> Entity:
        """Make `merge` (a name, alias or uid) part of `keep`: its facts now name `keep`
        (joining any `keep` already had, mentions and sources added up; a fact between the
        two is dropped), its messages mention `keep`, its name and aliases become aliases of
        `keep`, its load marks (`engine.load.plan`) go to `keep`, and `merge` is deleted.
        History: a MERGE event on `keep` and on each moved fact's new uid. Returns `keep` as
        stored now.

        Each round is one write that moves what the store holds as it runs, so what another
        writer does meanwhile is kept: a fact it changes moves as changed, the mentions it
        adds are counted. `merge` goes only once nothing names or mentions it: a fact given
        it meanwhile is read and moved in the next round (`MERGE_ROUNDS` at most).

        Raises:
            InvalidInputError: both name the same entity, or `merge` is the user's own.
            NotFoundError: the user has no such entity.
            StoreError: the database failed midway, or another writer kept giving `merge`
                new facts for `MERGE_ROUNDS` rounds; run it again to finish.
        """
        kept, gone = self._entity(keep, user_id), self._entity(merge, user_id)
        if kept.uid == gone.uid:
            raise InvalidInputError(f"{keep!r} and {merge!r} are the same entity")
        if gone.uid == self.self_uid(gone.user_id):  # "I" would name a new, empty entity
            raise InvalidInputError(
                f"{merge!r} is the user's own entity (whom 'I' and 'my' name) and stays: merge "
                f"the other way, merge_entities({gone.name!r}, {kept.name!r}, user_id)"
            )
        self._setup()
        user_id, now = kept.user_id, time.time()
        try:
            for _ in range(MERGE_ROUNDS):
                batch = merge_batch(kept, gone, self._named(gone), now)
                if self.store.write(user_id, batch).merged:
                    break
            else:
                raise StoreError(
                    f"entity {gone.name!r} was given new facts during each of {MERGE_ROUNDS} "
                    "rounds of the merge: what was moved stays moved and nothing was deleted; "
                    "run merge_entities again once those writes stop"
                )
        finally:
            self.retriever.forget(user_id)
        return self._entity(kept.uid, user_id)

    def _named(self, entity: Entity) -> list[Fact]:
        """Every fact naming `entity`, current or past."""
        return self.reads.entity_facts(
            entity.user_id, entity.uid, include_invalid=True, limit=10**6
        )

    # -- lookups --------------------------------------------------------------------------

    def _fact(self, uid: str, user_id: str, *, held: bool = False) -> Fact:
        """`held`: for a delete, which takes an id an older version stored (`_held_user`)."""
        user_id = self._held_user(user_id) if held else check_user_id(user_id)
        uid = clean_text(uid, "uid", MAX_UID_CHARS)
        self._setup()
        found = self.reads.facts_by_uids(user_id, [uid])
        if not found:
            raise NotFoundError(f"user {user_id!r} has no fact {uid!r}")
        return found[0]

    def _entity(self, name_or_uid: str, user_id: str, *, held: bool = False) -> Entity:
        """`held`: for a delete, which takes an id an older version stored (`_held_user`)."""
        user_id = self._held_user(user_id) if held else check_user_id(user_id)
        name = clean_text(name_or_uid, "entity", self.settings.max_name_chars)
        self._setup()
        if UID.fullmatch(name):
            by_uid = self.reads.entities_by_uids(user_id, [name])
            if by_uid:
                return by_uid[0]
        key = entity_key(name)
        found = self.reads.entities_by_keys(user_id, [key]).get(key)
        if found is None:
            raise NotFoundError(f"user {user_id!r} has no entity named {name_or_uid!r}")
        return found

    def _drop_orphans(self, user_id: str, uids: list[str]) -> list[str]:
        """Delete those of `uids` (entities) nothing names or mentions; the user's own entity
        stays."""
        wanted = sorted(set(uids) - {self.self_uid(user_id)})
        if not wanted:
            return []
        params = {"user_id": user_id, "uids": wanted}
        rows = self.store.run("delete_orphan_entities", params, read_only=False)
        return list(rows[0][0]) if rows else []


def _epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()
