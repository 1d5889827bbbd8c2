"""The entities a search is near (`search(near=...)`), found as `entity()` finds one: by name
or alias, else by the name read without spaces and punctuation ("katherinelee")."""

from __future__ import annotations

from engine.knowledge import LOOSE_DROPPED, loose_key
from engine.models import Entity
from engine.normalize import entity_key
from engine.store.reads import Reads


def near_entities(reads: Reads, user_id: str, names: tuple[str, ...]) -> dict[str, Entity]:
    """The user's entity of each name, by its key (`entity_key`); a name none has is left out."""
    keys = [entity_key(name) for name in names]
    found = reads.entities_by_keys(user_id, keys)
    for key in keys:
        loose = loose_key(key)
        if key not in found and loose:
            entity = reads.entity_by_loose_key(user_id, loose, list(LOOSE_DROPPED))
            if entity is not None:
                found[key] = entity
    return found
