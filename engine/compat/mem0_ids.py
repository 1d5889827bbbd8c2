"""Mem0 memory ids: UUID-shaped, stable, and useless to anyone the store did not give them to.

A memory id is a keyed permutation of the fact's 128-bit uid, written as a UUID
(8-4-4-4-12 hex digits). The permutation is an 8-round Feistel network whose round function
is HMAC-SHA256 under a per-store secret (the Luby-Rackoff construction), so:

- the id says nothing of its user or its fact, and cannot be computed from them: a fact's uid
  is a public hash of (user, subject, predicate, object), its id is not without the secret;
- the id is the same in every process that opens the store (the secret lives in the store
  itself, a `:GraphmemKey` node created once), and needs no table: decrypting gives the uid;
- an id of another store, or a random UUID, decrypts to a uid no fact has: "not found".

The secret is kept in the graph, not in a file, because the store is what ids belong to: two
hosts sharing one Neo4j give the same ids, two data directories give different ones.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import uuid

from engine.errors import InvalidInputError, StoreError
from engine.store.base import GraphStore

KEY_NAME = "mem0_memory_ids"
_ROUNDS = 8
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LEGACY = re.compile(r"([0-9a-f]{32})@(.+)", re.DOTALL)
_MAX_ID_CHARS = 600  # a legacy id carries a user id (up to 256 characters)
LEGACY_ID_NEEDS_SCOPE = (
    "{id!r} is a memory id of an earlier graphmem (<uid>@<user>), which anyone could compute; "
    "pass the scope it belongs to (user_id=, agent_id= or run_id=) to use it, and keep the "
    "new id the result carries (get_all also lists them)"
)


def _round(key: bytes, index: int, half: bytes) -> bytes:
    return hmac.new(key, bytes([index]) + half, hashlib.sha256).digest()[:8]


def _xor(a: bytes, b: bytes) -> bytes:
    return bytes(x ^ y for x, y in zip(a, b, strict=True))


def permute(key: bytes, block: bytes) -> bytes:
    """The keyed permutation of a 16-byte block."""
    left, right = block[:8], block[8:]
    for index in range(_ROUNDS):
        left, right = right, _xor(left, _round(key, index, right))
    return left + right


def unpermute(key: bytes, block: bytes) -> bytes:
    """The inverse of `permute`."""
    left, right = block[:8], block[8:]
    for index in reversed(range(_ROUNDS)):
        left, right = _xor(right, _round(key, index, left)), left
    return left + right


def store_key(store: GraphStore) -> bytes:
    """The store's secret for memory ids, created on first use (one for the store's life).

    Raises:
        StoreError: the store holds no usable secret.
    """
    rows = store.run(
        "merge_graphmem_key",
        {"name": KEY_NAME, "secret": secrets.token_hex(32)},
        read_only=False,
    )
    secret = rows[0][0] if rows else None
    if not isinstance(secret, str) or len(secret) != 64:
        raise StoreError(f"the store's {KEY_NAME!r} key is missing or damaged")
    return bytes.fromhex(secret)


class MemoryIds:
    """Fact uid <-> memory id for one store, under its key."""

    def __init__(self, key: bytes) -> None:
        self._key = key

    def of(self, uid: str) -> str:
        """The memory id of the fact with `uid` (32 hex digits)."""
        return str(uuid.UUID(bytes=permute(self._key, bytes.fromhex(uid))))

    def uid(self, memory_id: str) -> str:
        """The fact uid a UUID-shaped memory id stands for (a fact may have none)."""
        return unpermute(self._key, uuid.UUID(memory_id).bytes).hex()


def parse(memory_id: object) -> tuple[str, str | None]:
    """What a caller passed as a memory id: (the id in lower case, None) for an id of the
    current form, or (uid, user) for a legacy `<uid>@<user>` id.

    Raises:
        InvalidInputError: not a string, or in neither form.
    """
    if not isinstance(memory_id, str):
        raise InvalidInputError(f"memory_id must be a string, got {type(memory_id).__name__}")
    if len(memory_id) > _MAX_ID_CHARS:
        raise InvalidInputError(f"memory_id has {len(memory_id)} characters; not a memory id")
    if _UUID.fullmatch(memory_id.lower()):
        return memory_id.lower(), None
    legacy = _LEGACY.fullmatch(memory_id)
    if legacy:
        return legacy.group(1), legacy.group(2)
    raise InvalidInputError(
        f"{memory_id!r} is not a memory id (a UUID, as `add`, `search` and `get_all` return)"
    )
