"""Phase two of an add: resolve the extraction and write everything in ONE batch.

`assemble` is the one place a `WriteBatch` of additions is made, from a resolution (the
entities) and the fact changes; `add` and `add_facts` differ only in how they get those.
`apply` writes the episodes with their MENTIONS links, entities, facts with the episode as
provenance, invalidations, aliases and history in one `store.write`. A failed extraction
never raises: the episodes are kept with status "failed" and the reason, nothing else is
written, `AddResult.extraction_error` says why.
"""

from __future__ import annotations

import time
from dataclasses import replace

from engine.add.changes import Changes, FactContext, fact_changes
from engine.add.contradicted import with_contradicted
from engine.add.prepare import AddContext, PreparedAdd
from engine.add.resolve import SELF_KEYS, Resolved, Resolver
from engine.add.speakers import speaker_uid
from engine.extraction.schema import Extraction
from engine.models import AddResult
from engine.normalize import entity_key
from engine.retrieval.terms import mentions_self
from engine.store.base import EpisodeRow, WriteBatch, Written


def assemble(
    resolved: Resolved,
    changes: Changes,
    now: float,
    episodes: list[EpisodeRow] | None = None,
    episode_embeddings: dict[str, list[float]] | None = None,
    invalid_at: float | None = None,
) -> WriteBatch:
    """The batch that writes a resolution, its fact changes and the episodes they came from;
    the facts it ends end at `invalid_at` (default `now`), but those that end at their own
    time (`Changes.ended_at`)."""
    return WriteBatch(
        entities=list(resolved.entities.values()),
        entity_embeddings=resolved.embeddings,
        aliases=resolved.aliases,
        renames=resolved.renames,
        facts=list(changes.facts.values()),
        fact_embeddings=changes.embeddings,
        invalidate=list(changes.invalidate),
        invalid_at=now if invalid_at is None else invalid_at,
        invalid_at_of=dict(changes.ended_at),
        episodes=episodes or [],
        episode_embeddings=episode_embeddings or {},
        history=resolved.history + changes.history,
    )


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
        if ctx.write(prepared.user_id, batch).stored_already:
            return _timed(_stored_already(result), prepared, started)
        result.extraction_error = error
        result.errors.append(f"extraction failed, episodes kept as failed: {error}")
        return _timed(result, prepared, started)
    batch, resolved, changes = _build(ctx, prepared, time.time())
    written = ctx.write(prepared.user_id, batch)
    if written.stored_already:
        return _timed(_stored_already(result), prepared, started)
    _fill(result, resolved, changes, written)
    return _timed(result, prepared, started)


def _build(
    ctx: AddContext, prepared: PreparedAdd, now: float
) -> tuple[WriteBatch, Resolved, Changes]:
    extraction = prepared.outcome.extraction
    last = prepared.episodes[-1].uid
    resolver = Resolver(ctx.reads, ctx.embedder, ctx.settings.resolve_threshold)
    resolved = resolver.resolve(prepared.user_id, extraction, last, now, prepared.user_name)
    extraction = _invalidating(ctx, prepared, resolved)
    links = episode_links(prepared, resolved)

    def episode_of(subject: str, obj: str) -> str | None:
        both = [e for e, uids in links.items() if subject in uids and obj in uids]
        either = [e for e, uids in links.items() if subject in uids or obj in uids]
        return (both or either or [last])[-1]

    times = {e.uid: e.ts for e in prepared.episodes if not e.undated}
    facts = FactContext(
        prepared.user_id, resolved, episode_of, ctx.settings.max_text_chars, now, times
    )
    changes = fact_changes(
        ctx.reads,
        ctx.embedder,
        extraction,
        facts,
        known_ids={k.id for k in prepared.known},
        single_valued=ctx.settings.single_valued_predicates,
    )
    episodes = [replace(e, entity_uids=tuple(links[e.uid])) for e in prepared.episodes]
    # a contradicted fact ends when the message that ends it was written, not when it is read
    ended = max(times.values(), default=now)
    batch = assemble(resolved, changes, now, episodes, prepared.episode_vectors, ended)
    return batch, resolved, changes


def _invalidating(ctx: AddContext, prepared: PreparedAdd, resolved: Resolved) -> Extraction:
    """The extraction with the known facts it ends: a `KnownAfter` extractor's are found now,
    among the facts stored when it is written (`engine.add.contradicted`)."""
    after = prepared.known_after
    if after is None:
        return prepared.outcome.extraction
    known, outcome = with_contradicted(
        ctx.reads, after, prepared.outcome, resolved, prepared.user_name
    )
    prepared.known = known
    return outcome.extraction


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


def _stored_already(result: AddResult) -> AddResult:
    """Another writer stored these messages after `prepare` looked (two processes ingesting
    one log): nothing was written, the messages count as skipped."""
    result.episodes_skipped += len(result.episode_uids)
    result.episode_uids = []
    return result


def _fill(result: AddResult, resolved: Resolved, changes: Changes, written: Written) -> None:
    lost = written.vanished
    result.facts_added = len(written.added)
    result.facts_updated = len(changes.facts) - len(written.added) - len(lost)
    result.facts_invalidated = len(changes.invalidate)
    result.fact_uids = [uid for uid in changes.facts if uid not in lost]
    result.errors += [not_written(uid) for uid in changes.facts if uid in lost]
    result.invalidated_uids = list(changes.invalidate)
    result.entity_uids = list(resolved.entities)
    result.entities_added = len(written.added_entities)
    result.entities_merged = len(set(resolved.merged))
    result.errors += changes.errors


def not_written(uid: str) -> str:
    """The error of a fact the write could not store (`Written.vanished`)."""
    return (
        f"fact {uid} not written: an entity it names was deleted, or its name taken by another "
        "entity, while it was written; add it again"
    )


def _timed(result: AddResult, prepared: PreparedAdd, started: float) -> AddResult:
    result.latency_ms = (prepared.seconds + time.perf_counter() - started) * 1000.0
    return result
