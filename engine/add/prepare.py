"""Phase one of an add: what is new, what is known, the extraction. Writes nothing.

`prepare` parses the messages (`engine.add.messages`), makes their Episode rows, drops those
already stored (by checksum), fetches what is KNOWN about the entities they name (the
retriever, no LLM) where the extractor needs it before it runs (a prompt does; a `KnownAfter`
extractor is given it in phase two) and runs the extractor ONCE for the whole batch. Phase two,
`engine.add.batch.apply`, resolves and writes. A pipeline may `prepare` the next batch while
`apply` writes this one, as long as one user's `apply` calls run in order.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from engine.add.changes import likely_texts
from engine.add.keys import MessageKeys, fresh_rows, message_keys
from engine.add.messages import Messages, episode_rows, metadata_json, parse_messages
from engine.add.resolve import current_self, extracted_names, shown_self
from engine.add.speakers import speaker_entities
from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.extraction.batching import extract_in_prompts
from engine.extraction.guard import guard_outcome
from engine.extraction.schema import (
    ChatMessage,
    ExtractionOutcome,
    Extractor,
    KnownAfter,
    KnownFact,
)
from engine.models import Fact
from engine.normalize import check_length, check_user_id, kept_text, stable_uid
from engine.retrieval.lexical import episode_text
from engine.retrieval.retriever import DualRetriever
from engine.store.base import EpisodeRow, GraphStore, WriteBatch, Written
from engine.store.reads import Reads
from engine.store.whole import held_in, write_whole
from engine.times import TimeLike, epoch
from engine.uids import self_uid

KNOWN_FROM_SEARCH = 20  # facts the retriever finds for the messages
KNOWN_MAX = 30  # plus the user's own facts, up to this many in the prompt
_QUERY_CHARS = 2000  # the embedding model reads ~256 tokens anyway


@dataclass(frozen=True, slots=True)
class AddRequest:
    """One add as asked: the messages, whose they are, and what places and dates them.

    `ts` is when they were written (`engine.times.TimeLike`); `speaker` names who wrote the
    messages that carry no name; `key`: the message is an ingest record, stored under this
    checksum (`engine.add.messages.record_checksums`, as the pipeline found it), so one stored
    already is skipped even without a time; `retry`: it may be stored as failed under that
    checksum with a uid of its own (a dead letter of an `add` without a time), and lands on
    that episode.
    """

    messages: Messages
    user_id: str
    session_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    ts: TimeLike = None
    source: str | None = None
    speaker: str | None = None
    key: str | None = None
    retry: bool = False
    user_name: str | None = None  # what the user goes by until a name is stored (not the id)


@dataclass(frozen=True, slots=True)
class AddContext:
    """The collaborators both phases use."""

    store: GraphStore  # written to
    reads: Reads  # of the same store
    embedder: Embedder
    retriever: DualRetriever
    extractor: Callable[[], Extractor]  # built on first use
    settings: Settings

    def write(self, user_id: str, batch: WriteBatch) -> Written:
        """Write `batch` whole (`write_whole`: a fact or an entity read as stored but deleted
        since is written again, with its vector); the retriever's caches follow what it
        wrote."""

        def once(part: WriteBatch) -> Written:
            written = self.store.write(user_id, part)
            self.retriever.written(user_id, written)
            return written

        return write_whole(once, self.embedder, batch, held_in(self.reads, user_id))


@dataclass(slots=True)
class PreparedAdd:
    """A batch of messages ready to write: new episodes, what was known, the extraction."""

    user_id: str
    episodes: list[EpisodeRow]
    messages: list[ChatMessage]
    outcome: ExtractionOutcome
    extractor: str
    known: list[KnownFact] = field(default_factory=list)
    known_after: KnownAfter | None = None  # given the known facts in phase two (`contradicted`)
    user_name: str | None = None  # as the extractor was told it
    episode_vectors: dict[str, list[float]] = field(default_factory=dict)
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # time spent preparing
    request: AddRequest | None = None  # what it was prepared from: prepared again on a clash


def prepare(ctx: AddContext, request: AddRequest) -> PreparedAdd:
    """Phase one of an add (see the module docstring); writes nothing.

    A message with a `ts` (or any, with a `key`) that is stored already is skipped; one
    without is a new episode. Either way, an episode of the same message kept as "failed" is
    extracted again, and the write turns it into a good one (same uid, its first time kept).

    Raises:
        InvalidInputError: bad user_id, session_id, source, speaker, ts or metadata, or no
            usable message.
        LimitExceededError: a single message, or the metadata as JSON, longer than
            `max_message_chars`; more messages than `max_messages_per_add`.
    """
    started = time.perf_counter()
    user_id = check_user_id(request.user_id)
    chat, errors = _parsed(request, ctx.settings)
    called = user_id if request.user_name is None else _user_name(request, ctx.settings)
    when, keyed = epoch(request.ts, "ts"), request.key is not None
    rows = episode_rows(
        user_id, chat, request.session_id, when, request.source, request.metadata, keyed=keyed
    )
    if request.key is not None:
        rows = [
            replace(row, checksum=request.key, uid=stable_uid(user_id, request.key)) for row in rows
        ]
    keyed = keyed or when is not None
    dated = None if request.key is not None else when  # a record keeps the key it was given
    if not keyed:
        fresh = _retried(ctx, user_id, dict(enumerate(rows)))
    elif request.retry:
        fresh = _retried(ctx, user_id, _fresh_keyed(ctx.reads, user_id, rows, dated))
    else:
        fresh = _fresh_keyed(ctx.reads, user_id, rows, dated)
    kept = [(row, _dated(chat[i], row)) for i, row in fresh.items()]
    prepared = PreparedAdd(
        user_id=user_id,
        episodes=[row for row, _ in kept],
        messages=[msg for _, msg in kept],
        outcome=ExtractionOutcome(mode="none"),
        extractor=ctx.extractor().name,
        skipped=len(rows) - len(kept),
        errors=errors,
        request=request,
    )
    if kept:
        extractor = ctx.extractor()
        prepared.episode_vectors = episode_vectors(ctx.embedder, prepared.episodes)
        name = shown_self(current_self(ctx.reads, user_id), called)
        outcome = _extract(ctx, prepared, extractor, name)
        prepared.outcome, left_out = guard_outcome(outcome, ctx.settings)
        prepared.errors += left_out
        warm_vectors(ctx, prepared.outcome, name)
    prepared.seconds = time.perf_counter() - started
    return prepared


def _dated(message: ChatMessage, row: EpisodeRow) -> ChatMessage:
    """The message with its episode's time, which relative dates in it are read against."""
    when = None if row.undated else datetime.fromtimestamp(row.ts, UTC)
    return message.model_copy(update={"ts": when})


def _parsed(request: AddRequest, limits: Settings) -> tuple[list[ChatMessage], list[str]]:
    """The request's usable messages (the speaker named where they name nobody), and what
    was wrong with the others; its metadata checked."""
    chat, errors = parse_messages(
        request.messages, limits.max_message_chars, limits.max_messages_per_add
    )
    if request.speaker is not None:
        who = kept_text(request.speaker, "speaker", limits.max_name_chars)
        chat = [m if m.name else m.model_copy(update={"name": who}) for m in chat]
    if request.metadata is not None:
        text = metadata_json(request.metadata) or ""
        check_length(text, "metadata", limits.max_message_chars)
    return chat, errors


def _user_name(request: AddRequest, limits: Settings) -> str:
    return kept_text(request.user_name, "user_name", limits.max_name_chars)


def _fresh_keyed(
    reads: Reads, user_id: str, rows: list[EpisodeRow], ts: float | None
) -> dict[int, EpisodeRow]:
    """The keyed rows to write, by position: not stored yet or stored as failed, first of
    their key in this call. Rows of a call dated `ts` are keyed as `engine.add.keys` says,
    their keys looked up in one read; others (ingest records) by their checksum alone."""
    if ts is None:
        keys = [MessageKeys.only(row) for row in rows]
    else:
        keys = message_keys(user_id, rows, ts)
    uids = sorted(set().union(*(key.uids for key in keys)))
    held = {e.uid: e for e in reads.episodes_by_uids(user_id, uids)} if uids else {}
    return fresh_rows(keys, held)


def _retried(ctx: AddContext, user_id: str, rows: dict[int, EpisodeRow]) -> dict[int, EpisodeRow]:
    """The rows (by position), each taking the uid of a failed episode of the same message
    where there is one (adding it again retries it, not leaving it failed beside)."""
    params = {"user_id": user_id, "checksums": sorted({r.checksum for r in rows.values()})}
    failed: dict[str, list[str]] = {}
    for checksum, uid in ctx.store.run("find_failed_episodes", params):
        failed.setdefault(checksum, []).append(uid)
    out = {}
    for index, row in rows.items():
        uids = failed.get(row.checksum)
        out[index] = replace(row, uid=uids.pop()) if uids else row
    return out


def _extract(
    ctx: AddContext, prepared: PreparedAdd, extractor: Extractor, name: str | None
) -> ExtractionOutcome:
    """The extraction, with what is known searched for before it, as a prompt needs; an
    extractor that only compares what it found with what is stored (`KnownAfter`) is given
    the stored facts in phase two instead (`engine.add.contradicted`)."""
    user_id, messages = prepared.user_id, prepared.messages
    prepared.user_name = name
    if isinstance(extractor, KnownAfter):
        prepared.known_after = extractor
    else:
        prepared.known = known_facts(ctx, user_id, messages, name)
    per_prompt = ctx.settings.max_messages_per_prompt
    return extract_in_prompts(
        extractor, messages, prepared.known, user_name=name, per_prompt=per_prompt
    )


def episode_vectors(embedder: Embedder, rows: list[EpisodeRow]) -> dict[str, list[float]]:
    vectors = embedder.encode([episode_text(r.speaker, r.content) for r in rows])
    return {row.uid: as_param(vector) for row, vector in zip(rows, vectors, strict=True)}


# -- what is known --------------------------------------------------------------------------


def known_facts(
    ctx: AddContext, user_id: str, messages: list[ChatMessage], name: str | None = None
) -> list[KnownFact]:
    """The valid facts about what the messages name: the retriever's best for their text,
    then the speakers' own facts (the user's, `name` being the user's name, and each named
    speaker's), deduplicated, at most `KNOWN_MAX`."""
    text = " ".join(m.content for m in messages)[:_QUERY_CHARS]
    me = self_uid(user_id)
    found = ctx.retriever.search(
        text, user_id, KNOWN_FROM_SEARCH, self_uid=me, rank_relations=False
    )
    facts: dict[str, Fact] = {sf.fact.uid: sf.fact for sf in found.facts}
    for speaker in speaker_entities(ctx.reads, user_id, messages, name):
        own = ctx.reads.entity_facts(user_id, speaker, include_invalid=False, limit=KNOWN_MAX)
        for fact in own[: max(KNOWN_MAX - len(facts), 0)]:
            facts.setdefault(fact.uid, fact)
    return [
        KnownFact(id=f.uid, text=f.text, source=f.subject, predicate=f.predicate, target=f.object)
        for f in facts.values()
        if f.is_valid
    ]


def warm_vectors(ctx: AddContext, outcome: ExtractionOutcome, speaker: str | None) -> None:
    """Embed now what `apply` will embed (names, fact sentences): prepares run in parallel
    and share model passes, and the ordered `apply` then finds the vectors kept."""
    if outcome.error is not None:
        return
    names = extracted_names(outcome.extraction)
    sentences = likely_texts(outcome.extraction, speaker, ctx.settings.max_text_chars)
    ctx.embedder.encode(names + sentences)
    for name in names:
        ctx.embedder.reads(name)
