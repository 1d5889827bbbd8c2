"""Which key each message of a dated `add` is stored under, its speaker told apart.

`episode_rows` keys a message by the checksum of its words (`checksum`: no speaker in it, so
the messages stored before keep theirs), a repeat of them in the same call by its ordinal too.
Here a message is recognised under any key that holds it: its row's or its words' checksum
holding a message of its speaker, or its speaker's key (`speaker_checksum`: its words'
checksum, its speaker and how many times that speaker said them in the call). A new message
takes its words' checksum when no message holds it, else its speaker's key: the same words by
another speaker, in this call or another, are another message, and a call added again, whole
or in part, stores nothing more (a repeat stored by its ordinal, before speakers had keys, is
recognised when its call is added again).

Speakers are told apart as their entities are (`speaker_key`): "Bob", "BOB" and " bob " are
one speaker, and no name, 'USER' and the user id ("alice", "Alice") are the user. The user's
own name learnt from a message is not read here: a key must not change once a message holds
it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from engine.add.messages import checksum, speaker_checksum
from engine.add.speakers import speaks_for_user
from engine.models import Episode
from engine.normalize import entity_key, stable_uid
from engine.store.base import EpisodeRow


@dataclass(frozen=True, slots=True)
class MessageKeys:
    """One message's row under each key it may be stored under: as `episode_rows` made it,
    under its words' checksum (`words`), and under its speaker's key (`own`); `first`: the
    first time its speaker says these words in the call."""

    row: EpisodeRow
    words: EpisodeRow
    own: EpisodeRow
    first: bool
    user_id: str = ""

    @classmethod
    def only(cls, row: EpisodeRow) -> MessageKeys:
        """A row with one key (an ingest record's, which its ingest found for it)."""
        return cls(row, row, row, True)

    def said_by(self, speaker: str | None) -> bool:
        """Whether a message of `speaker` is one of this message's speaker."""
        return speaker_key(speaker, self.user_id) == speaker_key(self.row.speaker, self.user_id)

    @property
    def uids(self) -> set[str]:
        return {self.row.uid, self.words.uid, self.own.uid}


def message_keys(user_id: str, rows: list[EpisodeRow], ts: float) -> list[MessageKeys]:
    """The keys of a dated add's rows (`episode_rows` of the call, dated `ts`)."""
    said: dict[tuple[str, str | None], int] = {}
    keys = []
    for row in rows:
        words = checksum(user_id, row.session_id, row.role, row.content, ts, row.source)
        who = speaker_key(row.speaker, user_id)
        times = said[words, who] = said.get((words, who), 0) + 1
        own = _under(user_id, row, speaker_checksum(words, who, times))
        first = times == 1
        keys.append(MessageKeys(row, _under(user_id, row, words), own, first, user_id))
    return keys


def speaker_key(speaker: str | None, user_id: str) -> str | None:
    """Who says a message, as a key: None for the user (no name, 'USER', the user id), else
    the speaker's name as an entity key (`entity_key`)."""
    return None if speaks_for_user(speaker, None, user_id) else entity_key(speaker or "")


def fresh_rows(keys: list[MessageKeys], held: Mapping[str, Episode]) -> dict[int, EpisodeRow]:
    """The rows to write, by position, each under its key: the messages not stored yet, and
    those stored as failed (under their key: the write retries them). `held`: the episodes
    stored under the keys, by uid."""
    chosen: set[str] = set()
    fresh = {}
    for index, row in enumerate(keyed_rows(keys, held)):
        stored = held.get(row.uid)
        if row.uid not in chosen and (stored is None or stored.status == "failed"):
            chosen.add(row.uid)
            fresh[index] = row
    return fresh


def keyed_rows(keys: list[MessageKeys], held: Mapping[str, Episode]) -> list[EpisodeRow]:
    """Each message's row under the key it is stored under: the key holding it already (a
    message of its speaker), else the one a new message takes, the keys holding a message or
    taken by one before it in `keys` being taken. `held`: the episodes stored under the keys,
    by uid."""
    claimed = set(held)  # the keys holding a message, or chosen for one before
    rows = []
    for key in keys:
        row = _stored(key, held) or _new(key, claimed)
        claimed.add(row.uid)
        rows.append(row)
    return rows


def _stored(key: MessageKeys, held: Mapping[str, Episode]) -> EpisodeRow | None:
    """The row under the key that holds its message already, if one does."""
    rows = (key.row, key.words, key.own) if key.first else (key.row, key.own)
    for row in rows:
        stored = held.get(row.uid)
        if stored is not None and key.said_by(stored.speaker):
            return row
    return None


def _new(key: MessageKeys, claimed: set[str]) -> EpisodeRow:
    """The row under its words' checksum if it is free and the first of its speaker's, else
    under its speaker's key."""
    return key.words if key.first and key.words.uid not in claimed else key.own


def _under(user_id: str, row: EpisodeRow, digest: str) -> EpisodeRow:
    return replace(row, checksum=digest, uid=stable_uid(user_id, digest))
