"""Messages in: parse them (OpenAI format or `ChatMessage`) and turn them into Episode rows.

Error policy: a plain string or a single message that is unusable (empty, over
`max_message_chars`, of an unknown role, of content parts none of which is text) raises before
anything is written. In a list, an unusable message is left out and reported ("message #i left
out: ..."), the rest are kept; only when no message is usable does the call raise. A message
kept without its content parts that are no text says so too ("message #i: its image_url part
is left out ...").

Messages are stored verbatim; only the keys they are matched on are normalized.

Identity: an episode's checksum covers user, session, role, content (`canonical_text`), the
caller's timestamp (if given) and source, and for the same words said again in one call, how
many times they were said before in it. A message with an explicit time (or an `ingest`
record) is keyed by its checksum: the same one added again is recognised and skipped
(retried if its extraction failed). Its speaker is not in that checksum (messages stored
before are kept under it): a dated `add` of a message whose checksum holds another message
keys it by its speaker too (`speaker_checksum`, as `engine.add.keys` chooses). A message
with no time is said anew each time it is added ("I have a headache again"): it gets
a fresh uid. An `ingest` record placed by its time (`ChatRecord.identified_by_time`) is keyed
without its file position, one an export identifies by its own id (`ChatRecord.exported_id`)
by that id, without its text: `record_checksums`.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from engine.errors import InvalidInputError, LimitExceededError
from engine.extraction.schema import ChatMessage
from engine.ingest.chat_records import ChatRecord, known_role
from engine.ingest.content_parts import parts_text
from engine.models import to_epoch
from engine.normalize import (
    canonical_text,
    clean_text,
    kept_text,
    stable_uid,
    verbatim_text,
)
from engine.retrieval.lexical import TERMS_VERSION, stored_terms
from engine.store.base import EpisodeRow

Messages = str | ChatMessage | Mapping[str, Any] | Sequence[ChatMessage | Mapping[str, Any]]
ORDER_S = 0.001  # messages of one call are spaced 1 ms apart to keep their order


def parse_messages(
    messages: Messages, max_chars: int, max_count: int
) -> tuple[list[ChatMessage], list[str]]:
    """Usable messages and the reasons others were left out (see the error policy).

    Raises:
        LimitExceededError: more than `max_count` messages (`max_messages_per_add`).
    """
    if isinstance(messages, str):
        return [ChatMessage(role="user", content=verbatim_text(messages, "message", max_chars))], []
    if isinstance(messages, ChatMessage | Mapping):
        notes: list[str] = []
        return [parse_message(messages, max_chars, notes)], [f"message: {n}" for n in notes]
    if not isinstance(messages, Sequence) or not messages:
        raise InvalidInputError("messages must be a string or a non-empty list of messages")
    if len(messages) > max_count:
        raise LimitExceededError(
            f"{len(messages)} messages in one add; the limit is {max_count} "
            "(max_messages_per_add): add them in several calls"
        )
    parsed: list[ChatMessage] = []
    errors: list[str] = []
    first: InvalidInputError | None = None
    for index, item in enumerate(messages):
        notes = []
        try:
            parsed.append(parse_message(item, max_chars, notes))
        except InvalidInputError as exc:
            first = first or exc
            errors.append(f"message #{index} left out: {exc}")
        errors += [f"message #{index}: {note}" for note in notes]
    if first is not None and not parsed:
        raise first
    return parsed, errors


def parse_message(item: object, max_chars: int, notes: list[str] | None = None) -> ChatMessage:
    """One OpenAI-format message (dict or `ChatMessage`), cleaned; its `content` a string or
    content parts (`engine.ingest.content_parts`), the parts left out named in `notes`.

    Raises:
        InvalidInputError: not a message, a role of none of `ROLES` (`known_role`), or no text.
        LimitExceededError: the text is longer than `max_chars`.
    """
    if isinstance(item, ChatMessage):
        item = item.model_dump()
    if not isinstance(item, Mapping):
        raise InvalidInputError(f"a message must be a dict or a ChatMessage, got {item!r:.80}")
    role = known_role(clean_text(item.get("role", "user"), "message role", 32))
    content = item.get("content")
    if isinstance(content, list):
        content, left_out = parts_text(content, "message content", max_chars)
        if left_out and notes is not None:
            notes.append(left_out)
    content = verbatim_text(content, "message content", max_chars)
    name = item.get("name")
    blank = name is None or (isinstance(name, str) and not name.strip())
    name = None if blank else kept_text(name, "message name", 256)
    return ChatMessage(role=role, content=content, name=name)


def checksum(
    user_id: str,
    session_id: str | None,
    role: str,
    content: str,
    ts: float | None,
    source: str | None,
) -> str:
    """sha256 of what makes a message the same message (ts only when the caller gave one),
    its text in the form it is matched on (`canonical_text`: what stores before verbatim
    messages held, so their checksums still match)."""
    return canonical_checksum(user_id, session_id, role, canonical_text(content), ts, source)


def canonical_checksum(
    user_id: str,
    session_id: str | None,
    role: str,
    canonical: str,
    ts: float | None,
    source: str | None,
) -> str:
    """`checksum` of a message whose text is given in its `canonical_text` form already."""
    stamp = repr(ts) if ts is not None else ""
    parts = [user_id, session_id or "", role, canonical, stamp, source or ""]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def speaker_checksum(words: str, speaker: str | None, times: int) -> str:
    """sha256 of a message's words' `checksum`, its speaker, and the how-manieth time in its
    call that speaker says them: the key of a message whose words' checksum holds another
    message (`engine.add.keys`). Its parts are tagged, so it never equals a `checksum`."""
    parts = ["speaker", words, speaker or "", str(times)]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def repeat_checksum(words: str, times: int) -> str:
    """sha256 of a message's words' `checksum` and the how-manieth time (2, 3, ...) its
    call says them: the checksum of the same words said again in one call."""
    return hashlib.sha256(f"{words}\x1f{times}".encode()).hexdigest()


def episode_rows(
    user_id: str,
    messages: list[ChatMessage],
    session_id: str | None,
    ts: float | None,
    source: str | None,
    metadata: Mapping[str, Any] | None,
    *,
    keyed: bool = False,
) -> list[EpisodeRow]:
    """One row per message; uid = stable_uid(user_id, checksum) when the row is keyed (a `ts`
    given, or `keyed`: see the module docstring), else a fresh random uid. A `keyed` row
    without a `ts` (a chat-log record that had no time) is undated: its `ts` is the time it
    is stored, which only orders it."""
    session = kept_text(session_id, "session_id", 256) if session_id is not None else None
    origin = clean_text(source, "source", 256) if source is not None else None
    meta = metadata_json(metadata)
    base = time.time() if ts is None else ts
    undated = keyed and ts is None
    keyed = keyed or ts is not None
    rows = []
    said: dict[str, int] = {}
    for index, message in enumerate(messages):
        digest = checksum(user_id, session, message.role, message.content, ts, origin)
        said[digest] = said.get(digest, 0) + 1
        if said[digest] > 1:  # the same words again in this call ("Yes"): another message
            digest = repeat_checksum(digest, said[digest])
        rows.append(
            EpisodeRow(
                stable_uid(user_id, digest) if keyed else uuid.uuid4().hex,
                session,
                message.role,
                message.content,
                base + index * ORDER_S,
                origin,
                digest,
                metadata=meta,
                speaker=message.name,
                terms=stored_terms(message.name, message.content),
                terms_v=TERMS_VERSION,
                undated=undated,
            )
        )
    return rows


def metadata_json(metadata: Mapping[str, Any] | None) -> str | None:
    """The metadata as JSON text (graph properties cannot hold maps).

    Raises:
        InvalidInputError: not a dict, or not JSON-serializable text (NaN and Infinity are
            not JSON).
    """
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True, allow_nan=False)
        text.encode("utf-8")  # a lone surrogate cannot be stored
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidInputError(f"metadata must be JSON-serializable text: {exc}") from exc
    except RecursionError:
        raise InvalidInputError("metadata is nested too deeply to store") from None
    return text


def record_message(record: ChatRecord) -> dict[str, str]:
    """A chat-log record as the one OpenAI-format message it holds."""
    message = {"role": record.role, "content": record.content}
    if record.speaker:
        message["name"] = record.speaker
    return message


def record_checksum(record: ChatRecord, user_id: str, max_chars: int) -> str:
    """The checksum the record's episode is stored under (the first of `record_checksums`).

    Raises:
        InvalidInputError: the record holds no usable message.
    """
    return record_checksums(record, user_id, max_chars)[0]


def record_checksums(record: ChatRecord, user_id: str, max_chars: int) -> tuple[str, ...]:
    """The checksums the record's episode may be stored under, the one it gets now first.

    A record with an `exported_id` is keyed by user, session and that id (`id_checksum`:
    edited, or rendered anew, it is the same message), then by the checksum stores written
    before held for it, with its text. A record `identified_by_time` is keyed by user,
    session, role, speaker, text and time (`timed_checksum`: the same line moved, or read
    from a renamed file, is the same message), then by the checksum stores written before
    held for it, with its source (its position in the file), so such a store is read, not
    added to again. Any other record has one checksum, with its source, as `add` stores it.

    Raises:
        InvalidInputError: the record holds no usable message.
    """
    message = parse_message(record_message(record), max_chars)
    ts = to_epoch(record.ts)
    [row] = episode_rows(user_id, [message], record.session_id, ts, record.source, None, keyed=True)
    if record.exported_id:
        return (id_checksum(user_id, row.session_id, row.source or record.source), row.checksum)
    if ts is None or not record.identified_by_time:
        return (row.checksum,)
    timed = timed_checksum(user_id, row.session_id, row.role, row.speaker, row.content, ts)
    return (timed, row.checksum)


def timed_checksum(
    user_id: str, session_id: str | None, role: str, speaker: str | None, content: str, ts: float
) -> str:
    """sha256 of what makes a turn placed by its time the same turn, wherever its file puts
    it: what a reader takes for a repeat (`engine.ingest.turns`). Its parts are tagged, so it
    never equals a `checksum`."""
    return canonical_timed_checksum(user_id, session_id, role, speaker, canonical_text(content), ts)


def canonical_timed_checksum(
    user_id: str, session_id: str | None, role: str, speaker: str | None, canonical: str, ts: float
) -> str:
    """`timed_checksum` of a turn whose text is given in its `canonical_text` form already."""
    parts = ["timed", user_id, session_id or "", role, speaker or "", canonical]
    return hashlib.sha256("\x1f".join([*parts, repr(ts)]).encode("utf-8")).hexdigest()


def id_checksum(user_id: str, session_id: str | None, source: str) -> str:
    """sha256 of what makes a message an export identifies by its own id (`source`) the same
    message, whatever its text: user, session and that id. Its parts are tagged, so it never
    equals a `checksum` or a `timed_checksum`."""
    parts = ["id", user_id, session_id or "", source]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()
