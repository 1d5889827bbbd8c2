"""From a resolved extraction to the facts, invalidations and history events one add writes.

Conflicts never delete: a known fact the extractor invalidates (by its id, which must be one
of the KNOWN facts it was shown), or a valid fact replaced by a new value of a single-valued
predicate (`Settings.single_valued_predicates`: same subject, same predicate, another uid),
gets `invalid_at` on both its forms and stays as history, with an INVALIDATE event. A new
fact said before the stored one was last said (an older message added late) is the history
instead: it is written ended when the stored one began, which stays current.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from engine.add.resolve import NAME_PREDICATE, SELF_NAME, Resolved, history_row
from engine.embedding import Embedder, as_param
from engine.errors import InvalidInputError
from engine.extraction.offline.collector import contradicts
from engine.extraction.schema import ExtractedFact, Extraction
from engine.models import REVALIDATED, SAID_AGAIN, Fact, to_epoch
from engine.normalize import (
    clean_text,
    entity_key,
    normalize_predicate,
    spoken_predicate,
    stable_uid,
)
from engine.store.base import FactRow, HistoryRow
from engine.store.reads import Reads
from engine.times import stored_unit

EpisodeOf = Callable[[str, str], str | None]  # (subject uid, object uid) -> episode uid
Later = Callable[[FactRow, FactRow], bool]  # whether a later fact takes an earlier one's place
_SELF_WORD = re.compile(rf"\b{SELF_NAME}\b")


@dataclass(slots=True)
class Changes:
    """The facts one batch writes, each with its change events (`settle`), and the rest of
    what it changes. Which facts it adds is the write's to tell (`Written.added`)."""

    facts: dict[str, FactRow] = field(default_factory=dict)
    new: list[str] = field(default_factory=list)  # not stored when read: embedded
    embeddings: dict[str, list[float]] = field(default_factory=dict)
    invalidate: dict[str, str] = field(default_factory=dict)  # uid -> reason
    # uid -> when it ended, for a fact that ends at its own time rather than the batch's
    ended_at: dict[str, float] = field(default_factory=dict)
    history: list[HistoryRow] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # uid -> the coordination its last saying was said in (`ExtractedFact.said_with`)
    said_with: dict[str, str] = field(default_factory=dict)

    def collect(self, row: FactRow, said_with: str | None = None) -> None:
        """Add a fact row; a fact said twice in one batch is one row with two mentions."""
        previous = self.facts.get(row.uid)
        if previous is not None:
            row = replace(row, mentions=previous.mentions + 1)
        self.facts[row.uid] = row
        self.said_with.pop(row.uid, None)
        if said_with:
            self.said_with[row.uid] = said_with

    def together(self, one: FactRow, other: FactRow) -> bool:
        """Whether the two were said in one coordination ("Rome and Madrid"): both hold."""
        said = self.said_with.get(one.uid)
        return said is not None and said == self.said_with.get(other.uid)


@dataclass(frozen=True, slots=True)
class FactContext:
    """What turning extracted facts into rows needs besides the facts."""

    user_id: str
    resolved: Resolved
    episode_of: EpisodeOf
    max_text_chars: int
    now: float
    episode_times: dict[str, float] = field(default_factory=dict)  # a fact's default valid_at


def fact_changes(
    reads: Reads,
    embedder: Embedder,
    extraction: Extraction,
    ctx: FactContext,
    *,
    known_ids: set[str],
    single_valued: Iterable[str],
) -> Changes:
    """The fact rows, new-fact embeddings, invalidations and history of one extraction."""
    out = Changes()
    for index, fact in enumerate(extraction.facts):
        try:
            row = fact_row(fact, ctx)
        except InvalidInputError as exc:
            said = f"{fact.source} {fact.predicate} {fact.target}"
            out.errors.append(f"fact #{index} ({said}) skipped: {exc}")
            continue
        out.collect(row, fact.said_with)
    settle(out, reads, embedder, ctx.user_id, ctx.now, said_again=True)
    _model_invalidations(out, reads, ctx, extraction, known_ids)
    _single_valued(out, reads, ctx, set(single_valued))
    _opposites_said_last(out, ctx)
    for uid, reason in out.invalidate.items():
        out.history.append(history_row(uid, "INVALIDATE", ctx.now, _episode(out, ctx), reason))
    return out


def likely_texts(extraction: Extraction, speaker: str | None, limit: int) -> list[str]:
    """The sentences `fact_changes` embeds for the facts of `extraction` if they are new and
    `speaker` is still the user's name when they are written (what can be told before
    resolution)."""
    texts = []
    for fact in extraction.facts:
        with contextlib.suppress(InvalidInputError):
            normalize_predicate(fact.predicate)  # a fact it refuses is not written
            texts.append(_text(fact, speaker, limit))
    return texts


def fact_row(fact: ExtractedFact, ctx: FactContext) -> FactRow:
    """One extracted fact as a row between resolved entities.

    Raises:
        InvalidInputError: unusable predicate, an unresolved name, or a fact about one entity
            and itself (other than the user's own name).
    """
    resolved = ctx.resolved
    predicate = normalize_predicate(fact.predicate)
    subject, obj = resolved.uid(fact.source), resolved.uid(fact.target)
    if subject is None or obj is None:
        raise InvalidInputError("names no entity")
    own_name = subject == obj == resolved.self_uid and predicate == NAME_PREDICATE
    if subject == obj and not own_name:
        raise InvalidInputError("subject and object are the same entity")
    # the user's name is a fact from the self entity to itself; its value keeps uids apart
    value = entity_key(fact.target) if own_name else None
    uid = stable_uid(ctx.user_id, subject, predicate, obj, *([value] if value else []))
    # "USER's name is Alice" reads "The user's name is Alice", not "Alice's name is Alice"
    speaker = "the user" if own_name else resolved.self_name
    text = _text(fact, speaker, ctx.max_text_chars)
    episode = ctx.episode_of(subject, obj)
    said = to_epoch(fact.valid_at)
    valid_at = said or ctx.episode_times.get(episode or "")  # its message's time: a day
    unit = stored_unit(fact.valid_unit) if said else None
    return FactRow(
        uid, subject, obj, predicate, text, ctx.now, valid_at, 1.0, episode, valid_unit=unit
    )


def _text(fact: ExtractedFact, speaker: str | None, limit: int) -> str:
    try:
        text = clean_text(fact.fact, "fact text", limit)
    except InvalidInputError:
        text = f"{fact.source} {spoken_predicate(fact.predicate)} {fact.target}"
    # 'USER' is how the extractor calls the user until it knows their name
    if not speaker:
        return text
    replaced = _SELF_WORD.sub(speaker, text)
    if text.startswith(SELF_NAME) and speaker == "the user":
        return replaced[:1].upper() + replaced[1:]
    return replaced  # a name or user id stays as written


def settle(
    out: Changes,
    reads: Reads,
    embedder: Embedder,
    user_id: str,
    now: float,
    *,
    said_again: bool,
) -> None:
    """Give each collected fact its change events: ADD if the write creates it and, with
    `said_again` or for an ended fact (the write makes it current again), UPDATE if the write
    finds it stored; embed those not stored when read.

    The write, not this read, tells which facts are new: another writer may store one in
    between, and each fact is added (reported, and its ADD recorded) by one writer alone.
    """
    existing = {f.uid: f for f in reads.facts_by_uids(user_id, list(out.facts))}
    for uid, row in out.facts.items():
        old = existing.get(uid)
        again = None
        ended = old is not None and old.invalid_at is not None
        if said_again or ended:
            detail = REVALIDATED if ended else SAID_AGAIN
            again = history_row(uid, "UPDATE", now, row.episode, detail)
        added = history_row(uid, "ADD", now, row.episode, row.text)
        # stored: given no vector (deleted before the write, it is written again, embedded)
        stored = old is not None
        out.facts[uid] = replace(row, on_create=added, on_match=again, stored=stored)
        if not stored:
            out.new.append(uid)
    if out.new:
        vectors = embedder.encode([out.facts[u].text for u in out.new])
        out.embeddings = {u: as_param(v) for u, v in zip(out.new, vectors, strict=True)}


def _model_invalidations(
    out: Changes, reads: Reads, ctx: FactContext, extraction: Extraction, known_ids: set[str]
) -> None:
    """End the known facts the extractor contradicts, unless what contradicts one was said
    before it was last said (an older message added late): the new facts between its two
    ends are then the history (`_as_history`), and it stays current."""
    reasons: dict[str, str] = {}
    for item in extraction.invalidations:
        uid = item.fact_id.strip().strip("[]")
        if uid not in known_ids:
            out.errors.append(f"invalidation of unknown fact id {item.fact_id!r} ignored")
        elif uid not in out.facts:  # a fact both ended and said again stays valid
            reasons.setdefault(uid, item.reason.strip() or "contradicted")
    if not reasons:
        return
    stored = reads.facts_by_uids(ctx.user_id, list(reasons))
    last = _last_said(reads, ctx.user_id, stored)
    batch_said = max(ctx.episode_times.values(), default=None)
    for old in stored:
        ends = {old.subject_uid, old.object_uid}
        between = [r for r in out.facts.values() if {r.subject_uid, r.object_uid} == ends]
        heard = [ctx.episode_times.get(r.episode or "") for r in between] or [batch_said]
        if any(_newer(said, last.get(old.uid)) for said in heard):
            out.invalidate.setdefault(old.uid, reasons[old.uid])
            continue
        for row in between:
            _as_history(out, row, old.text, to_epoch(old.valid_at), last[old.uid])


def _single_valued(out: Changes, reads: Reads, ctx: FactContext, predicates: set[str]) -> None:
    """End the stored value of a single-valued predicate a new value replaces, unless the new
    one was said before the stored one was last said: the new one is then the history. Of
    the values one batch says, the last said stays (`_said_last`), and those said in one
    coordination all do."""
    rows = [r for r in out.facts.values() if r.predicate in predicates]
    for subject in dict.fromkeys(r.subject_uid for r in rows):
        current = reads.entity_facts(ctx.user_id, subject, include_invalid=False, limit=1000)
        mine = [r for r in rows if r.subject_uid == subject]
        said = {r.predicate for r in mine}
        replaced = [f for f in current if f.uid not in out.facts and f.predicate in said]
        last = _last_said(reads, ctx.user_id, replaced)
        for row in mine:
            for old in (f for f in replaced if f.predicate == row.predicate):
                if _newer(ctx.episode_times.get(row.episode or ""), last.get(old.uid)):
                    out.invalidate.setdefault(old.uid, f"replaced by: {row.text}")
                else:
                    _as_history(out, row, old.text, to_epoch(old.valid_at), last[old.uid])
        _said_last(out, ctx, mine)


def _said_last(out: Changes, ctx: FactContext, rows: list[FactRow]) -> None:
    """Of one subject's values of a predicate said in one batch ("I live in Rome", then "I
    moved, I live in Madrid"), the last said stays; each other is history, but a value said
    with it in one coordination ("I live in Rome and Madrid"): both hold."""
    for predicate in dict.fromkeys(r.predicate for r in rows):
        values = [r for r in rows if r.predicate == predicate]  # one per uid: another value each
        _last_said_stays(out, ctx, values, lambda later, earlier: True)


def _opposites_said_last(out: Changes, ctx: FactContext) -> None:
    """Of two facts of one batch between the same two entities that contradict each other
    ("I like tennis. I don't like tennis."), the last said stays; the other is history."""
    between: dict[tuple[str, str], list[FactRow]] = defaultdict(list)
    for row in out.facts.values():
        between[(row.subject_uid, row.object_uid)].append(row)
    for rows in between.values():
        if len(rows) > 1:
            _last_said_stays(out, ctx, rows, lambda a, b: contradicts(_triple(a), _triple(b)))


def _last_said_stays(
    out: Changes,
    ctx: FactContext,
    rows: list[FactRow],
    replaces: Later,
) -> None:
    """Each of `rows` (said in one batch) that a later one `replaces` is history, ended when
    the last of those began, as from two adds. Said in one message, the later in the
    extraction is the later; said in one coordination ("Rome and Madrid"), none replaces
    another."""
    ordered = sorted(rows, key=lambda row: _said(ctx, row))
    for index, row in enumerate(ordered):
        later = [r for r in ordered[index + 1 :] if replaces(r, row) and not out.together(r, row)]
        if later:
            _as_history(out, row, later[-1].text, later[-1].valid_at, _said(ctx, later[-1]))


def _said(ctx: FactContext, row: FactRow) -> float:
    return ctx.episode_times.get(row.episode or "", ctx.now)


def _triple(row: FactRow) -> tuple[str, str, str]:
    return row.subject_uid, row.predicate, row.object_uid


def _last_said(reads: Reads, user_id: str, facts: list[Fact]) -> dict[str, float]:
    """When each of `facts` was last said: its latest dated message, else its `valid_at` (a
    fact with neither is left out: said at no known time)."""
    uids = sorted({uid for fact in facts for uid in fact.episodes})
    held = reads.episodes_by_uids(user_id, uids) if uids else []
    times = {e.uid: e.ts.timestamp() for e in held if e.ts is not None}
    out: dict[str, float] = {}
    for fact in facts:
        said = [times[uid] for uid in fact.episodes if uid in times]
        at = max(said) if said else to_epoch(fact.valid_at)
        if at is not None:
            out[fact.uid] = at
    return out


def _newer(said: float | None, last_said: float | None) -> bool:
    """A fact said at `said` is news against one last said at `last_said` (None: now for the
    first, never for the second)."""
    return said is None or last_said is None or said >= last_said


def _as_history(
    out: Changes, row: FactRow, newer: str, began: float | None, last_said: float
) -> None:
    """Write `row`, said before the `newer` fact was last said, as history: ended when the
    newer one began (or, when that is before `row` began, when it was last said)."""
    start = row.valid_at if row.valid_at is not None else began
    end = began if began is not None and start is not None and began >= start else last_said
    out.invalidate.setdefault(row.uid, f"replaced by: {newer}")
    out.ended_at[row.uid] = min(out.ended_at.get(row.uid, end), end)


def _episode(out: Changes, ctx: FactContext) -> str | None:
    episodes = [r.episode for r in out.facts.values() if r.episode]
    return episodes[-1] if episodes else ctx.episode_of("", "")
