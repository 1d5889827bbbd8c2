"""Conversations in, in two phases so batch ingestion can pipeline them.

`prepare` validates the messages, makes their Episode rows, drops those already stored (by
checksum), fetches what is KNOWN about the entities they name (the retriever, no LLM) and runs
the extractor ONCE for the whole batch. `apply` resolves the extraction against the graph and
writes everything (episodes with their MENTIONS links, entities, facts with the episode as
provenance, invalidations, aliases, history) in ONE `store.write`. `Memory.add` is the two in a
row; a pipeline may `prepare` the next batch while `apply` writes this one, as long as one
user's `apply` calls run in order.

Messages: a plain string (one user message), or a list of OpenAI-format dicts
(`{"role", "content", "name"?}`, content a string or a list of text parts) or `ChatMessage`s.
Error policy: a plain string or a single message that is unusable (empty, over
`max_message_chars`) raises before anything is written. In a list, an unusable message is left
out and reported on `AddResult.errors` ("message #i: ..."), the rest are added; only when no
message is usable does the call raise. A failed extraction never raises: the episodes are
kept with status "failed" and the reason, nothing else is written, `AddResult.extraction_error`
says why.

Idempotence: an episode's checksum covers user, session, role, content, the caller's
timestamp (if given) and source, so the same message added again is skipped
(`episodes_skipped`) and counts nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from engine.changes import Changes, FactContext, fact_changes, likely_texts
from engine.config import Settings
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError
from engine.extraction.guard import guard_outcome
from engine.extraction.schema import ChatMessage, ExtractionOutcome, Extractor, KnownFact
from engine.models import AddResult, Fact, to_epoch
from engine.normalize import check_length, check_user_id, clean_text, entity_key, stable_uid
from engine.resolve import (
    SELF_KEYS,
    Resolved,
    Resolver,
    current_self,
    extracted_names,
    self_uid,
    user_name,
)
from engine.retrieval.lexical import episode_text
from engine.retrieval.retriever import DualRetriever
from engine.retrieval.terms import mentions_self
from engine.speakers import speaker_entities, speaker_uid
from engine.store.base import EpisodeRow, GraphStore, WriteBatch

Messages = str | ChatMessage | Mapping[str, Any] | Sequence[ChatMessage | Mapping[str, Any]]
KNOWN_FROM_SEARCH = 20  # facts the retriever finds for the messages
KNOWN_MAX = 30  # plus the user's own facts, up to this many in the prompt
_QUERY_CHARS = 2000  # the embedding model reads ~256 tokens anyway
_ORDER_S = 0.001  # messages of one call are spaced 1 ms apart to keep their order


@dataclass(frozen=True, slots=True)
class AddContext:
    """The collaborators both phases use."""

    store: GraphStore
    embedder: Embedder
    retriever: DualRetriever
    extractor: Extractor
    settings: Settings


@dataclass(slots=True)
class PreparedAdd:
    """A batch of messages ready to write: new episodes, what was known, the extraction."""

    user_id: str
    episodes: list[EpisodeRow]
    messages: list[ChatMessage]
    outcome: ExtractionOutcome
    extractor: str
    known: list[KnownFact] = field(default_factory=list)
    episode_vectors: dict[str, list[float]] = field(default_factory=dict)
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # time spent preparing


def prepare(
    ctx: AddContext,
    messages: Messages,
    user_id: str,
    *,
    session_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    timestamp: datetime | float | None = None,
    source: str | None = None,
    speaker: str | None = None,
) -> PreparedAdd:
    """Phase one of an add (see the module docstring); writes nothing.

    Raises:
        InvalidInputError: bad user_id, session_id, source or metadata, or no usable message.
        LimitExceededError: a single message, or the metadata as JSON, longer than
            `max_message_chars`.
    """
    started = time.perf_counter()
    user_id = check_user_id(user_id)
    chat, errors = parse_messages(messages, ctx.settings.max_message_chars)
    if speaker is not None:
        who = clean_text(speaker, "speaker", ctx.settings.max_name_chars)
        chat = [m if m.name else m.model_copy(update={"name": who}) for m in chat]
    if metadata is not None:
        check_length(_metadata_json(metadata) or "", "metadata", ctx.settings.max_message_chars)
    rows = episode_rows(user_id, chat, session_id, to_epoch(timestamp), source, metadata)
    fresh = _fresh(ctx.store, user_id, rows)
    kept = [
        (row, _dated(msg, row)) for row, msg in zip(rows, chat, strict=True) if row.uid in fresh
    ]
    prepared = PreparedAdd(
        user_id=user_id,
        episodes=[row for row, _ in kept],
        messages=[msg for _, msg in kept],
        outcome=ExtractionOutcome(mode="none"),
        extractor=ctx.extractor.name,
        skipped=len(rows) - len(kept),
        errors=errors,
    )
    if kept:
        prepared.episode_vectors = episode_vectors(ctx.embedder, prepared.episodes)
        name = user_name(current_self(ctx.store, user_id))
        prepared.known = known_facts(ctx, user_id, prepared.messages, name)
        outcome = ctx.extractor.extract(prepared.messages, prepared.known, user_name=name)
        prepared.outcome, left_out = guard_outcome(outcome, ctx.settings)
        prepared.errors += left_out
        warm_vectors(ctx, prepared.outcome, name)
    prepared.seconds = time.perf_counter() - started
    return prepared


def apply(ctx: AddContext, prepared: PreparedAdd) -> AddResult:
    """Phase two: resolve and write everything in ONE `store.write`.

    Raises:
        StoreError: the database failed (nothing of the batch is written then).
    """
    started = time.perf_counter()
    result = _base_result(prepared)
    if not prepared.episodes:
        return _timed(result, prepared, started)
    error = prepared.outcome.error
    if error is not None:
        failed = [replace(row, status="failed", error=error) for row in prepared.episodes]
        batch = WriteBatch(episodes=failed, episode_embeddings=prepared.episode_vectors)
        ctx.store.write(prepared.user_id, batch)
        ctx.retriever.episode_leg.note(prepared.user_id, failed)
        result.extraction_error = error
        result.errors.append(f"extraction failed, episodes kept as failed: {error}")
        return _timed(result, prepared, started)
    batch, resolved, changes = _build(ctx, prepared, time.time())
    ctx.store.write(prepared.user_id, batch)
    ctx.retriever.note_predicates(prepared.user_id, (f.predicate for f in batch.facts))
    ctx.retriever.episode_leg.note(prepared.user_id, batch.episodes)
    _fill(result, resolved, changes)
    return _timed(result, prepared, started)


# -- messages and episodes ------------------------------------------------------------------


def parse_messages(messages: Messages, max_chars: int) -> tuple[list[ChatMessage], list[str]]:
    """Usable messages and the reasons others were left out (see the error policy)."""
    if isinstance(messages, str):
        return [ChatMessage(role="user", content=clean_text(messages, "message", max_chars))], []
    if isinstance(messages, ChatMessage | Mapping):
        return [parse_message(messages, max_chars)], []
    if not isinstance(messages, Sequence) or not messages:
        raise InvalidInputError("messages must be a string or a non-empty list of messages")
    parsed: list[ChatMessage] = []
    errors: list[str] = []
    first: InvalidInputError | None = None
    for index, item in enumerate(messages):
        try:
            parsed.append(parse_message(item, max_chars))
        except InvalidInputError as exc:
            first = first or exc
            errors.append(f"message #{index} left out: {exc}")
    if first is not None and not parsed:
        raise first
    return parsed, errors


def parse_message(item: object, max_chars: int) -> ChatMessage:
    """One OpenAI-format message (dict or `ChatMessage`), cleaned.

    Raises:
        InvalidInputError: not a message, a blank role, or no text.
        LimitExceededError: the text is longer than `max_chars`.
    """
    if isinstance(item, ChatMessage):
        item = item.model_dump()
    if not isinstance(item, Mapping):
        raise InvalidInputError(f"a message must be a dict or a ChatMessage, got {item!r:.80}")
    role = clean_text(item.get("role", "user"), "message role", 32).casefold()
    content = clean_text(_text_of(item.get("content")), "message content", max_chars)
    name = item.get("name")
    blank = name is None or (isinstance(name, str) and not name.strip())
    name = None if blank else clean_text(name, "message name", 256)
    return ChatMessage(role=role, content=content, name=name)


def _dated(message: ChatMessage, row: EpisodeRow) -> ChatMessage:
    """The message with its episode's time, which relative dates in it are read against."""
    return message.model_copy(update={"ts": datetime.fromtimestamp(row.ts, UTC)})


def _text_of(content: object) -> object:
    # OpenAI content may be a list of parts; only the text parts are memory
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return " ".join(t for t in texts if isinstance(t, str))
    return content


def checksum(
    user_id: str,
    session_id: str | None,
    role: str,
    content: str,
    ts: float | None,
    source: str | None,
) -> str:
    """sha256 of what makes a message the same message (ts only when the caller gave one)."""
    stamp = repr(ts) if ts is not None else ""
    parts = [user_id, session_id or "", role, content, stamp, source or ""]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def episode_rows(
    user_id: str,
    messages: list[ChatMessage],
    session_id: str | None,
    ts: float | None,
    source: str | None,
    metadata: Mapping[str, Any] | None,
) -> list[EpisodeRow]:
    """One row per message; uid = stable_uid(user_id, checksum)."""
    session = clean_text(session_id, "session_id", 256) if session_id is not None else None
    origin = clean_text(source, "source", 256) if source is not None else None
    meta = _metadata_json(metadata)
    base = time.time() if ts is None else ts
    rows = []
    for index, message in enumerate(messages):
        digest = checksum(user_id, session, message.role, message.content, ts, origin)
        rows.append(
            EpisodeRow(
                stable_uid(user_id, digest),
                session,
                message.role,
                message.content,
                base + index * _ORDER_S,
                origin,
                digest,
                metadata=meta,
                speaker=message.name,
            )
        )
    return rows


def _metadata_json(metadata: Mapping[str, Any] | None) -> str | None:
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InvalidInputError(f"metadata must be a dict, got {type(metadata).__name__}")
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, sort_keys=True)
        text.encode("utf-8")  # a lone surrogate cannot be stored
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise InvalidInputError(f"metadata must be JSON-serializable text: {exc}") from exc
    return text


def _fresh(store: GraphStore, user_id: str, rows: list[EpisodeRow]) -> set[str]:
    """Uids of the rows to write: not stored yet, first of their checksum in this call."""
    stored = store.existing_checksums(user_id, sorted({r.checksum for r in rows}))
    fresh: dict[str, str] = {}
    for row in rows:
        if row.checksum not in stored:
            fresh.setdefault(row.checksum, row.uid)
    return set(fresh.values())


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
    for speaker in speaker_entities(ctx.store, user_id, messages, name):
        own = ctx.store.entity_facts(user_id, speaker, include_invalid=False, limit=KNOWN_MAX)
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


# -- building the batch ---------------------------------------------------------------------


def _build(
    ctx: AddContext, prepared: PreparedAdd, now: float
) -> tuple[WriteBatch, Resolved, Changes]:
    extraction = prepared.outcome.extraction
    last = prepared.episodes[-1].uid
    resolver = Resolver(ctx.store, ctx.embedder, ctx.settings.resolve_threshold)
    resolved = resolver.resolve(prepared.user_id, extraction, last, now)
    links = episode_links(prepared, resolved)

    def episode_of(subject: str, obj: str) -> str | None:
        both = [e for e, uids in links.items() if subject in uids and obj in uids]
        either = [e for e, uids in links.items() if subject in uids or obj in uids]
        return (both or either or [last])[-1]

    times = {e.uid: e.ts for e in prepared.episodes}
    facts = FactContext(
        prepared.user_id, resolved, episode_of, ctx.settings.max_text_chars, now, times
    )
    changes = fact_changes(
        ctx.store,
        ctx.embedder,
        extraction,
        facts,
        known_ids={k.id for k in prepared.known},
        single_valued=ctx.settings.single_valued_predicates,
    )
    batch = WriteBatch(
        entities=list(resolved.entities.values()),
        entity_embeddings=resolved.embeddings,
        aliases=resolved.aliases,
        renames=resolved.renames,
        facts=list(changes.facts.values()),
        fact_embeddings=changes.embeddings,
        invalidate=list(changes.invalidate),
        invalid_at=now,
        episodes=[replace(e, entity_uids=tuple(links[e.uid])) for e in prepared.episodes],
        episode_embeddings=prepared.episode_vectors,
        history=resolved.history + changes.history,
    )
    return batch, resolved, changes


def episode_links(prepared: PreparedAdd, resolved: Resolved) -> dict[str, list[str]]:
    """Episode uid -> the entities it mentions: those whose name or alias it contains, the
    speaker's entity (`speakers`) for a user message in the first person; an entity no
    message names (a paraphrase) is linked to every episode of the batch, so provenance is
    never lost."""
    links: dict[str, list[str]] = {}
    for row, message in zip(prepared.episodes, prepared.messages, strict=True):
        text = entity_key(message.content)
        uids = [
            uid
            for uid, forms in resolved.surfaces.items()
            if uid in resolved.entities and any(f in text for f in forms - SELF_KEYS if f)
        ]
        first_person = message.role in ("user", "human") and mentions_self(message.content)
        speaker = speaker_uid(message, resolved) if first_person else None
        if speaker is not None and speaker in resolved.entities:
            uids.append(speaker)
        links[row.uid] = list(dict.fromkeys(uids))
    named = {uid for uids in links.values() for uid in uids}
    orphans = [uid for uid in resolved.entities if uid not in named]
    return {episode: uids + orphans for episode, uids in links.items()}


def _base_result(prepared: PreparedAdd) -> AddResult:
    outcome = prepared.outcome
    return AddResult(
        user_id=prepared.user_id,
        episode_uids=[e.uid for e in prepared.episodes],
        episodes_skipped=prepared.skipped,
        errors=list(prepared.errors),
        extractor=prepared.extractor,
        llm_calls=outcome.llm_calls,
        prompt_tokens=outcome.prompt_tokens,
        completion_tokens=outcome.completion_tokens,
        llm_latency_ms=outcome.latency_ms if outcome.llm_calls else 0.0,
    )


def _fill(result: AddResult, resolved: Resolved, changes: Changes) -> None:
    result.facts_added = len(changes.new)
    result.facts_updated = len(changes.updated)
    result.facts_invalidated = len(changes.invalidate)
    result.fact_uids = list(changes.facts)
    result.invalidated_uids = list(changes.invalidate)
    result.entity_uids = list(resolved.entities)
    result.entities_added = len(resolved.new)
    result.entities_merged = len(set(resolved.merged))
    result.errors += changes.errors


def _timed(result: AddResult, prepared: PreparedAdd, started: float) -> AddResult:
    result.latency_ms = (prepared.seconds + time.perf_counter() - started) * 1000.0
    return result
