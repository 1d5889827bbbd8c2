"""Entity resolution: the names an extraction uses -> the user's entities.

In order, a name is:
1. a self-reference ('USER', I/me/my/我, the user id, or the user's current name or alias) ->
   the user's own entity, uid `self_uid(user_id)` (named after the user id, or the name the
   add gives it (`AddRequest.user_name`), until a name is known; an old store's entity named
   'USER' still is it); a HAS_NAME fact about it renames it (the old name stays an alias, the
   new name's key becomes an alias key; its own `key` never changes, so the unique
   `(user_id, key)` cannot clash);
2. an alias the extraction gives for another entity of the same batch -> that entity;
3. a stored entity's normalized key or alias key -> that entity;
4. close in meaning to a stored entity of the same type (cosine of the name embeddings at least
   `threshold`, user-scoped vector search) -> that entity, the name kept as an alias and the
   merge recorded as a MERGE history event; skipped for names the embedding model cannot read
   (mostly unknown tokens, e.g. Chinese names with an English model: they all embed alike);
5. otherwise a new entity.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from engine.embedding import Embedder, as_param
from engine.extraction.schema import Extraction
from engine.models import Entity
from engine.normalize import (
    entity_key,
    normalize_label,
    normalize_predicate,
    stable_uid,
)
from engine.store.base import AliasRow, EntityRow, HistoryRow, RenameRow
from engine.store.reads import Reads
from engine.uids import self_uid

SELF_NAME = "USER"
SELF_TYPE = "Person"
SELF_KEYS = frozenset({"user", "i", "me", "my", "mine", "myself", "我", "我的", "自己"})
NAME_PREDICATE = "HAS_NAME"
_SIMILAR_K = 5
_SELF_WORD = re.compile(rf"\b{SELF_NAME}\b")


def history_row(
    target: str, event: str, now: float, episode: str | None, detail: str | None = None
) -> HistoryRow:
    uid = stable_uid(target, event, episode or "", detail or "", repr(now))
    return HistoryRow(uid, target, event, now, episode, detail)


@dataclass(slots=True)
class _Name:
    name: str
    type: str | None = None
    aliases: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Resolved:
    """Where each extracted name landed and what writing the entities takes."""

    uid_of: dict[str, str] = field(default_factory=dict)  # name key -> entity uid
    entities: dict[str, EntityRow] = field(default_factory=dict)  # uid -> row
    embeddings: dict[str, list[float]] = field(default_factory=dict)
    aliases: list[AliasRow] = field(default_factory=list)
    renames: list[RenameRow] = field(default_factory=list)
    history: list[HistoryRow] = field(default_factory=list)
    # not stored when read: embedded; the write tells which it added (`Written.added_entities`)
    new: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    surfaces: dict[str, set[str]] = field(default_factory=dict)  # uid -> casefolded names
    self_uid: str = ""
    self_name: str | None = None  # the user's name after this batch, else the user id
    user_id: str = ""
    first_name: str = ""  # what the user's own entity is named when this batch creates it

    def uid(self, name: str) -> str | None:
        return self.uid_of.get(entity_key(name))


def stored_row(entity: Entity, etype: str | None, now: float, mentions: int) -> EntityRow:
    """The row of an entity read as stored: given no vector, it is written again whole (with
    the aliases it was read with) should it be deleted before the write."""
    aliases = tuple(entity.aliases)
    return EntityRow(
        entity.uid, entity.key, entity.name, etype, now, mentions, stored=True, aliases=aliases
    )


def current_self(reads: Reads, user_id: str) -> Entity | None:
    """The user's own entity, if stored yet."""
    found = reads.entities_by_uids(user_id, [self_uid(user_id)])
    return found[0] if found else None


def user_name(entity: Entity | None) -> str | None:
    """The user's name as their entity holds it, or None while it is still 'USER'."""
    if entity is None or entity_key(entity.name) == entity_key(SELF_NAME):
        return None
    return entity.name


def shown_self(entity: Entity | None, user_id: str) -> str:
    """The name the user goes by in fact texts and prompts: their known name, else their id."""
    return user_name(entity) or user_id


class Resolver:
    """Resolves one extraction's names for one user (see the module docstring).

    Args:
        reads: the graph store's reads.
        embedder: embeds names for the similarity step and for new entities.
        threshold: cosine similarity from which two same-type names are one entity.
    """

    def __init__(self, reads: Reads, embedder: Embedder, threshold: float) -> None:
        self.reads = reads
        self.embedder = embedder
        self.threshold = threshold

    def resolve(
        self,
        user_id: str,
        extraction: Extraction,
        episode: str | None,
        now: float,
        named: str | None = None,
    ) -> Resolved:
        """`named`: what the user goes by until a name is stored (default: the user id)."""
        names, counts = _collect(extraction)
        me = current_self(self.reads, user_id)
        first = named or user_id
        out = Resolved(
            self_uid=self_uid(user_id),
            self_name=shown_self(me, first),
            user_id=user_id,
            first_name=first,
        )
        self_keys = _self_keys(me, extraction) | {entity_key(user_id), entity_key(first)}
        canonical = _alias_targets(extraction, set(names))
        others = [k for k in names if k not in self_keys and k not in canonical]
        known = self.reads.entities_by_keys(user_id, [*others, entity_key(SELF_NAME)])
        self._resolve_self(out, me, known.get(entity_key(SELF_NAME)), self_keys, names, counts, now)
        rename = _new_self_name(extraction, self_keys)
        if rename is not None:
            self._rename_self(out, me, rename, episode, now)
        fresh = [k for k in others if k not in known]
        for key in others:
            if key in known:
                self._bind(out, key, known[key], names[key], counts[key], now)
        self._resolve_fresh(user_id, out, fresh, names, counts, episode, now)
        for key, target in canonical.items():  # aliases used as names follow their entity
            if target in out.uid_of and key not in self_keys:
                out.uid_of[key] = out.uid_of[target]
        out.aliases += _extracted_aliases(out, extraction)
        return out

    def _resolve_self(
        self,
        out: Resolved,
        me: Entity | None,
        user_keyed: Entity | None,
        self_keys: set[str],
        names: dict[str, _Name],
        counts: Counter[str],
        now: float,
    ) -> None:
        mentions = sum(counts[k] for k in names if k in self_keys)
        if not mentions:  # a batch that never names the user (another speaker's) leaves it be
            return
        if me is not None:
            out.entities[me.uid] = stored_row(me, SELF_TYPE, now, mentions)
        else:
            # 'user' may already name someone else (add_facts with "USER"): keep keys unique
            taken = user_keyed is not None and user_keyed.uid != out.self_uid
            key = "user (self)" if taken else entity_key(SELF_NAME)
            name = out.first_name  # readable until the user gives a name (`_rename_self`)
            out.entities[out.self_uid] = EntityRow(
                out.self_uid, key, name, SELF_TYPE, now, mentions
            )
            out.embeddings[out.self_uid] = as_param(self.embedder.encode_one(name))
            out.new.append(out.self_uid)
        for key in names:
            if key in self_keys:
                out.uid_of[key] = out.self_uid
                out.surfaces.setdefault(out.self_uid, set()).add(key)

    def _rename_self(
        self, out: Resolved, me: Entity | None, name: str, episode: str | None, now: float
    ) -> None:
        old = me.name if me is not None else out.first_name
        # the same name, or the user's id said as their name: one the id stands for ("alice"
        # named "Alice") takes the name as it was said
        same = entity_key(old) == entity_key(name) and (old != out.first_name or old == name)
        if out.self_uid not in out.entities or same:
            return
        out.renames.append(RenameRow(out.self_uid, name, entity_key(name)))
        out.embeddings[out.self_uid] = as_param(self.embedder.encode_one(name))
        detail = f"name: {old} -> {name}"
        out.history.append(history_row(out.self_uid, "UPDATE", now, episode, detail))
        out.self_name = name

    def _bind(
        self, out: Resolved, key: str, entity: Entity, name: _Name, mentions: int, now: float
    ) -> None:
        out.uid_of[key] = entity.uid
        out.surfaces.setdefault(entity.uid, set()).update({key, entity_key(entity.name)})
        row = out.entities.get(entity.uid)
        total = mentions + (row.mentions if row else 0)
        etype = entity.type or normalize_label(name.type)
        out.entities[entity.uid] = stored_row(entity, etype, now, total)

    def _resolve_fresh(
        self,
        user_id: str,
        out: Resolved,
        keys: list[str],
        names: dict[str, _Name],
        counts: Counter[str],
        episode: str | None,
        now: float,
    ) -> None:
        shown = {k: _owned(names[k].name, out.self_name or out.user_id) for k in keys}
        vectors = [as_param(v) for v in self.embedder.encode([shown[k] for k in keys])]
        for key, vector in zip(keys, vectors, strict=True):
            name = names[key]
            readable = self.embedder.reads(name.name)
            match = self._similar(user_id, vector, normalize_label(name.type)) if readable else None
            if match is not None:
                entity, cos = match
                self._bind(out, key, entity, name, counts[key], now)
                out.aliases.append(AliasRow(entity.uid, name.name, key))
                detail = f"{name.name!r} resolved to {entity.name!r} (cosine {cos:.3f})"
                out.history.append(history_row(entity.uid, "MERGE", now, episode, detail))
                out.merged.append(entity.uid)
                continue
            uid = stable_uid(user_id, key)
            etype = normalize_label(name.type)
            out.uid_of[key] = uid
            out.surfaces.setdefault(uid, set()).add(key)
            # its ADD is recorded only if the write creates it: another writer may store it first
            added = history_row(uid, "ADD", now, episode, shown[key])
            out.entities[uid] = EntityRow(
                uid, key, shown[key], etype, now, counts[key], on_create=added
            )
            if shown[key] != name.name:  # found by the name it shows too
                out.aliases.append(AliasRow(uid, shown[key], entity_key(shown[key])))
            out.embeddings[uid] = vector
            out.new.append(uid)

    def _similar(
        self, user_id: str, vector: list[float], etype: str | None
    ) -> tuple[Entity, float] | None:
        if etype is None:
            return None
        for entity, similarity in self.reads.vector_entities(user_id, vector, _SIMILAR_K):
            cos = 2.0 * similarity - 1.0  # stores return (1 + cos) / 2
            if cos >= self.threshold and entity.type == etype:
                return entity, cos
        return None


def _owned(name: str, self_name: str) -> str:
    """A new entity's name as shown: the user's own thing under the user's name ("USER's
    job", an extractor's placeholder for "my job", is "Alice's job", an alias of it; "people
    like USER", "people like Alice"); its key stays the placeholder's, so "my job" is the same
    entity whatever the user is called."""
    if entity_key(name) == entity_key(SELF_NAME):
        return name
    return _SELF_WORD.sub(self_name, name)


def extracted_names(extraction: Extraction) -> list[str]:
    """The names `Resolver.resolve` may embed for `extraction` (one per key)."""
    return [name.name for name in _collect(extraction)[0].values()]


def _collect(extraction: Extraction) -> tuple[dict[str, _Name], Counter[str]]:
    """Every name the extraction uses, by key, with its type and aliases; fact mentions."""
    names: dict[str, _Name] = {}
    counts: Counter[str] = Counter()
    for entity in extraction.entities:
        if entity.name.strip():
            key = entity_key(entity.name)
            item = names.setdefault(key, _Name(entity.name.strip()))
            item.type = item.type or entity.type
            item.aliases += [a for a in entity.aliases if a.strip()]
    for fact in extraction.facts:
        for name in (fact.source, fact.target):
            if name.strip():
                key = entity_key(name)
                names.setdefault(key, _Name(name.strip()))
                counts[key] += 1
    for key in names:
        counts[key] = max(counts[key], 1)
    return names, counts


def _self_keys(me: Entity | None, extraction: Extraction) -> set[str]:
    keys = set(SELF_KEYS)
    if me is not None:
        keys |= {me.key, entity_key(me.name)} | {entity_key(a) for a in me.aliases}
    for entity in extraction.entities:
        if entity_key(entity.name) in keys:
            keys |= {entity_key(a) for a in entity.aliases}
    # every name the batch gives the user is theirs: the last is current, the others history
    return keys | {entity_key(name) for name in _self_names(extraction, keys)}


def _new_self_name(extraction: Extraction, self_keys: set[str]) -> str | None:
    """The name the user gives themself in this batch (the last HAS_NAME about them)."""
    names = _self_names(extraction, self_keys)
    return names[-1] if names else None


def _self_names(extraction: Extraction, self_keys: set[str]) -> list[str]:
    """The names the user gives themself in this batch, in the order said."""
    return [
        fact.target.strip()
        for fact in extraction.facts
        if entity_key(fact.source) in self_keys and _is_name(fact.predicate) and fact.target.strip()
    ]


def _is_name(predicate: str) -> bool:
    try:
        return normalize_predicate(predicate) == NAME_PREDICATE
    except ValueError:
        return False


def _alias_targets(extraction: Extraction, names: set[str]) -> dict[str, str]:
    """Alias key -> the key of the batch entity it names, for aliases used as names that the
    extraction does not also list as entities of their own."""
    listed = {entity_key(e.name) for e in extraction.entities}
    out: dict[str, str] = {}
    for entity in extraction.entities:
        for alias in entity.aliases:
            key = entity_key(alias)
            if key in names and key not in listed:
                out[key] = entity_key(entity.name)
    return out


def _extracted_aliases(out: Resolved, extraction: Extraction) -> list[AliasRow]:
    rows = []
    for entity in extraction.entities:
        uid = out.uid(entity.name)
        if uid is None:
            continue
        for alias in entity.aliases:
            if alias.strip() and entity_key(alias) != entity_key(entity.name):
                rows.append(AliasRow(uid, alias.strip(), entity_key(alias)))
                out.surfaces.setdefault(uid, set()).add(entity_key(alias))
    return rows
