"""An import's messages for another user, each under the checksum that user's own `add` (or
`ingest`) gives it.

A message's checksum covers its user id (`engine.add.messages`): imported from alice's file
into bob's graph under alice's checksum, it is not the message bob's `add` of the same words,
speaker, session and time looks up, and bob stored it a second time. A file does not say how a
checksum was made, so each is made again for the file's own user in every way the engine makes
one (the words' `checksum`, dated or not, a repeat's in its call, `speaker_checksum`, an
ingest's `timed_checksum` and `id_checksum`); the way that gives the file's checksum makes the
target's, and of a dated message's words' checksum and its speaker's key, the target's own
episodes choose as its add does (`engine.add.keys.keyed_rows`). A checksum made in no way
found (by hand, or a file imported from a third user before) is kept, as every import kept it
before.

The messages of one dated call share its time (the first's; the n-th is stored n ms later,
`ORDER_S`). An export gives each time as the store holds it (`engine.store.rows.exact_time`),
but a file exported from FalkorDB before it did holds times to 15 significant digits (one to
the microsecond lost its last digit). The times tried for a message, `TRIES` at most, are:
the time of the latest call found in its session and source (its call's first message, met
first), its own (it is the first), its own less 1, 2 and 3 ms (the call's first is not in
the file), and the times of the messages just before it there; each also to the nearest
microseconds where the file's time may have lost digits (`_near`).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from engine.add.keys import MessageKeys, keyed_rows, speaker_key
from engine.add.messages import (
    ORDER_S,
    canonical_checksum,
    canonical_timed_checksum,
    id_checksum,
    repeat_checksum,
    speaker_checksum,
)
from engine.config import Settings
from engine.models import Episode
from engine.normalize import canonical_text, stable_uid
from engine.store.base import EpisodeRow
from engine.transfer.export import PAGE
from engine.transfer.snapshot import EpisodeRecord, GraphSnapshot

__all__ = ["TRIES", "for_target"]

TRIES = 64  # call times tried for one message, at most
# how far apart the first and last message of one call are stored, at most
_CALL_S = Settings.model_fields["max_messages_per_add"].default * ORDER_S
_DIGITS = 15  # significant digits an older export's times from FalkorDB have
_MICROSECOND = 1e-6
_EARLIER = 3  # places in its call tried for a message whose call's first is not in the file

Place = tuple[str | None, str | None]  # session, source
Holding = Callable[[list[str]], Iterable[Episode]]  # the target's episodes of some uids


def for_target(snapshot: GraphSnapshot, target: str, holding: Holding) -> GraphSnapshot:
    """The snapshot with each message's checksum made for `target` as it was made for the
    file's own user, and chosen as the target's add chooses it (`engine.add.keys`: the key
    holding it already, else its words' checksum if no message takes it, else its speaker's
    key; `holding` gives the target's episodes of the uids asked); the same snapshot for that
    user (an import of one's own file is kept exactly as it was)."""
    if target == snapshot.user_id or not snapshot.episodes:
        return snapshot
    # in time order: a call's first message is met, and its time found, first
    ordered = sorted(snapshot.episodes, key=lambda p: p.ts)
    messages = [_Message(p, canonical_text(p.content)) for p in ordered]
    found = _Keys(messages, snapshot.user_id, target)
    keys = [_keys(target, m.record, *found.made(m)) for m in messages]
    uids = sorted(set().union(*(key.uids for key in keys)))
    held: dict[str, Episode] = {}
    for start in range(0, len(uids), PAGE):
        held |= {e.uid: e for e in holding(uids[start : start + PAGE])}
    chosen = zip(messages, keyed_rows(keys, held), strict=True)
    made = {id(m.record): row.checksum for m, row in chosen}
    episodes = [p.model_copy(update={"checksum": made[id(p)]}) for p in snapshot.episodes]
    return snapshot.model_copy(update={"episodes": episodes})


def _keys(user: str, p: EpisodeRecord, own: str, words: str | None) -> MessageKeys:
    """The keys `p` may be stored under for `user`: `own`, or `words` (for a first message of
    its speaker in its call) where no message holds it."""
    row = _row(user, p, own)
    return MessageKeys(row, row if words is None else _row(user, p, words), row, True, user)


def _row(user: str, p: EpisodeRecord, checksum: str) -> EpisodeRow:
    uid = stable_uid(user, checksum)
    return EpisodeRow(
        uid, p.session_id, p.role, p.content, p.ts, p.source, checksum, speaker=p.speaker
    )


@dataclass(frozen=True, slots=True)
class _Message:
    """What a message's checksums cover but its time and user, read once."""

    record: EpisodeRecord
    canonical: str  # its text as checksums cover it (`canonical_text`)

    @property
    def place(self) -> Place:
        return (self.record.session_id, self.record.source)

    @property
    def words(self) -> tuple[object, ...]:
        p = self.record
        return (p.session_id, p.role, self.canonical, p.source)

    def checksum(self, user: str, ts: float | None) -> str:
        p = self.record
        return canonical_checksum(user, p.session_id, p.role, self.canonical, ts, p.source)

    def timed(self, user: str, ts: float) -> str:
        p = self.record
        return canonical_timed_checksum(user, p.session_id, p.role, p.speaker, self.canonical, ts)


class _Keys:
    """The checksums of one file's messages, made again for its user and for a target."""

    def __init__(self, messages: list[_Message], source: str, target: str) -> None:
        self.source, self.target = source, target
        self.times: dict[Place, list[float]] = {}  # the stored times of each place, in order
        for m in messages:  # in time order
            self.times.setdefault(m.place, []).append(m.record.ts)
        self.said = Counter(m.words for m in messages)  # how often a call may say them
        self.calls: dict[Place, float] = {}  # the time of the latest call found

    def made(self, m: _Message) -> tuple[str, str | None]:
        """The message's checksum for the target, and its words' checksum when it may take
        that instead (the first of its speaker's in its call); its own when no way makes it."""
        p = m.record
        if p.source and p.checksum == id_checksum(self.source, p.session_id, p.source):
            return id_checksum(self.target, p.session_id, p.source), None
        if p.checksum == m.checksum(self.source, None):
            return m.checksum(self.target, None), None
        who = speaker_key(p.speaker, self.source)
        for ts in self._tried(m):
            found = self._at(m, who, ts)
            if found is not None:
                self.calls[m.place] = ts
                return found
        return p.checksum, None

    def _at(self, m: _Message, who: str | None, ts: float) -> tuple[str, str | None] | None:
        """`made` if the message's call was dated `ts` (`who`: its speaker's key for the
        file's user)."""
        stored, words = m.record.checksum, m.checksum(self.source, ts)
        mine = m.checksum(self.target, ts)
        times = range(1, self.said[m.words] + 1)
        speaker = speaker_key(m.record.speaker, self.target)
        if stored == words:  # the first of its speaker's
            return speaker_checksum(mine, speaker, 1), mine
        for n in times[1:]:
            if stored == repeat_checksum(words, n):
                return repeat_checksum(mine, n), None
        for n in times:
            if stored == speaker_checksum(words, who, n):
                return speaker_checksum(mine, speaker, n), mine if n == 1 else None
        if stored == m.timed(self.source, ts):
            return m.timed(self.target, ts), None
        return None

    def _tried(self, m: _Message) -> Iterator[float]:
        """The times the message's call may have had, likeliest first, each once, `TRIES` at
        most."""
        at = m.record.ts
        call = self.calls.get(m.place)
        latest = [call] if call is not None and call <= at + _MICROSECOND else []
        earlier = [at - n * ORDER_S for n in range(1, _EARLIER + 1)]
        times = self.times[m.place]
        start, end = bisect_left(times, at - _CALL_S), bisect_left(times, at)
        before = times[max(start, end - TRIES) : end][::-1]  # nearest first
        seen: set[float] = set()
        for ts in (t for base in [*latest, at, *earlier, *before] for t in _near(base)):
            if ts not in seen:
                seen.add(ts)
                yield ts
                if len(seen) == TRIES:
                    return


def _near(ts: float) -> list[float]:
    """`ts`, and where it may have lost digits (15 significant ones, as an older export read
    them from FalkorDB), the times to the microsecond that round to it."""
    digits = repr(abs(ts)).replace(".", "").lstrip("0")
    if "e" not in digits and len(digits) < _DIGITS:
        return [ts]
    return [ts, *(round(ts + d * _MICROSECOND, 6) for d in range(-5, 6))]
