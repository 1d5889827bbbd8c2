"""The uids of the user's own entity and of a new entity, as every write path derives them."""

from __future__ import annotations

import re

from engine.normalize import entity_key, stable_uid

UID = re.compile(r"[0-9a-f]{32}")  # how every uid graphmem derives is written


def self_uid(user_id: str) -> str:
    """The uid of the entity standing for the user ("I", "me", "my")."""
    return stable_uid(user_id, "\x00self")


def entity_uid(user_id: str, key: str) -> str:
    """The uid of a new entity of `key` that no resolution named: the user's own entity for
    the key of their id (as `add` reads the user id as the user), else one derived from it."""
    return self_uid(user_id) if key == entity_key(user_id) else stable_uid(user_id, key)
