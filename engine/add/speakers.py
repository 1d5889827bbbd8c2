"""Who speaks a message: the entity its "I", "me" and "my" mean.

A message with a name (OpenAI's `name`, a chat log's speaker) speaks for that participant, an
entity of that name: a two-person or group log gives one entity per participant. A message
without a name, or named 'USER', the user id or the user's own known name (compared as entity
keys: "Maria" is user `maria`), speaks for the user: the user's own entity
(`engine.uids.self_uid`).
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.add.resolve import SELF_KEYS, Resolved
from engine.extraction.schema import ChatMessage
from engine.normalize import entity_key
from engine.store.reads import Reads
from engine.uids import self_uid


def speaks_for_user(name: str | None, user_name: str | None, user_id: str = "") -> bool:
    """Whether a message named `name` speaks for the user (see the module docstring)."""
    key = entity_key(name or "")
    own = {entity_key(n) for n in (user_name, user_id) if n}
    return not key or key in SELF_KEYS or key in own


def speaker_entities(
    reads: Reads, user_id: str, messages: Sequence[ChatMessage], user_name: str | None
) -> list[str]:
    """The stored entities the messages' self-references mean: the user's own (when a message
    speaks for them) and each named speaker's, in message order."""
    named = [m.name for m in messages if m.name and not speaks_for_user(m.name, user_name, user_id)]
    uids = [] if len(named) == len(messages) else [self_uid(user_id)]
    keys = list(dict.fromkeys(entity_key(name) for name in named))
    found = reads.entities_by_keys(user_id, keys) if keys else {}
    return uids + [found[key].uid for key in keys if key in found]


def speaker_uid(message: ChatMessage, resolved: Resolved) -> str | None:
    """The entity of one message's speaker in a resolved batch; None when the extraction
    never names that speaker."""
    if speaks_for_user(message.name, resolved.self_name, resolved.user_id):
        return resolved.self_uid
    assert message.name is not None  # only the user speaks without a name
    return resolved.uid(message.name)
