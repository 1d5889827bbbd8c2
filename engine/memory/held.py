"""The change history of an id a user holds, as the doors (CLI `history`, MCP
`memory_history`) answer it: an id the user holds with no change event (an entity a load
wrote) has an empty history; an id the user does not hold is not found.
`Memory.history` answers [] for both, so no id of another user is told apart from an unknown
one there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import NotFoundError
from engine.models import HistoryEvent

if TYPE_CHECKING:
    from engine.memory.facade import Memory


def holds(memory: Memory, user_id: str, uid: str) -> bool:
    """Whether the user has a fact or an entity of that uid."""
    reads = memory.reads
    return bool(reads.facts_by_uids(user_id, [uid]) or reads.entities_by_uids(user_id, [uid]))


def held_history(memory: Memory, uid: str, user_id: str) -> list[HistoryEvent]:
    """`Memory.history` of an id the user holds (oldest first, maybe none).

    Raises:
        NotFoundError: the user has no fact or entity of that id (naming both).
        InvalidInputError: a bad user id or uid.
    """
    events = memory.history(uid, user_id)
    if not events and not holds(memory, user_id, uid):
        raise NotFoundError(f"user {user_id!r} has no fact or entity {uid!r}")
    return events
