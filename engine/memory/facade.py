"""`Memory`: the public face of graphmem."""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Iterable, Mapping
from typing import Any

from engine.add.facts import validate_facts
from engine.add.failed import keep_failed
from engine.add.messages import Messages
from engine.add.prepare import AddRequest, PreparedAdd
from engine.errors import InvalidInputError, NotFoundError
from engine.ingest.pipeline import DEAD_LETTERS
from engine.knowledge import DAY_S, RANKINGS, EntityView, entity_view, top_entities
from engine.memory.bulk import MemoryBulk
from engine.memory.edit import MemoryEdit
from engine.memory.transfer import MemoryTransfer
from engine.metadata_filter import parse_filters, search_matching
from engine.models import AddResult, Fact, HistoryEvent, ScoredEntity, SearchResult
from engine.normalize import check_count, check_user_id, clean_text, entity_key
from engine.prompt_block import MAX_LIMIT, hits_for
from engine.retrieval.retriever import MODES, WALKING_MODES, Mode
from engine.retrieval.similarity import checked_floor
from engine.store.base import RankBy
from engine.store.statements import delete_fact
from engine.times import TimeLike, as_of_window, one_time, read_window

_MAX_UID_CHARS = 256  # uids are 32 hex digits; anything longer names nothing
MAX_NEAR = 20  # the names a search may be near: each starts a walk


class Memory(MemoryEdit, MemoryTransfer, MemoryBulk):
    """Long-term graph memory for one or many users.

    `Memory()` starts (or reuses) the embedded FalkorDB in `~/.graphmem` (`GRAPHMEM_HOME` or
    `GRAPHMEM_DATA_DIR`), embeds with the local all-MiniLM-L6-v2; the schema is set up on first use.

    Example:
        >>> mem = Memory()
        >>> mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
        >>> mem.search("who is Alice's friend?", user_id="alice").facts[0].fact.text
        'Alice friend of John'
    """

    # -- writing --------------------------------------------------------------------------

    def add_facts(
        self, facts: Iterable[Any], user_id: str, *, show_progress: bool = False
    ) -> AddResult:
        """Store pre-extracted facts `(subject, predicate, object[, text])` for `user_id`.

        Idempotent: the same fact again bumps its mentions and creates nothing new. A fact
        repeated within one call counts once (one mention for it and its entities).

        Raises:
            InvalidInputError: a fact is malformed (nothing is written then).
            LimitExceededError: more facts than `max_facts_per_call`.
        """
        user_id = check_user_id(user_id)
        clean = validate_facts(facts, self.settings)
        self._setup(vectors=True)
        return self._adder.add_facts(clean, user_id, show_progress=show_progress)

    def add(
        self,
        messages: Messages,
        user_id: str,
        *,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        ts: TimeLike = None,
        source: str | None = None,
        speaker: str | None = None,
        timestamp: TimeLike = None,
        user_name: str | None = None,
    ) -> AddResult:
        """Remember a conversation: each message becomes an Episode, ONE extraction call reads
        them (seeing what is already known), and everything is written in one batch.

        `messages` is a string (one user message) or a list of OpenAI-format dicts
        (`{"role": "user", "content": "..."}`) or `ChatMessage`s. In a list, unusable messages
        are left out and listed in `AddResult.errors`. A failed extraction does not raise: the
        episodes are kept as "failed", `AddResult.extraction_error` says why, and each message
        is listed in `<data_dir>/dead_letters.jsonl`; adding it again retries it. A message
        with a `ts` that is stored already is skipped (`episodes_skipped`); one without a
        time is a new episode each time it is added.

        `speaker` names who wrote the messages that carry no `name` of their own: their "I"
        means that speaker (a participant of a group chat), not the user. `ts` (a datetime,
        naive meaning UTC, an ISO 8601 date or time, or epoch seconds or milliseconds:
        `engine.times`) is when they were written; it dates the episodes, is the default
        `valid_at` of their facts and the `invalid_at` of those they contradict. `timestamp`
        is its alias (other memories' name for it); given both, they must agree.
        `user_name` is what the user goes by until a message names them (their own entity is
        named after `user_id` otherwise): the name of the user's own entity when this add
        creates it, and the name the extraction is told.

        Raises:
            InvalidInputError: bad arguments (a `ts` that is no time), or no usable message.
            LimitExceededError: a single message longer than `max_message_chars`, or more
                messages than `max_messages_per_add`.
            StoreError: the database failed.

        Example:
            >>> mem.add("I like hiking", user_id="alice").facts_added  # doctest: +SKIP
            1
        """
        when = one_time(ts, timestamp)
        request = AddRequest(
            messages, user_id, session_id, metadata, when, source, speaker, user_name=user_name
        )
        self._setup(vectors=True)
        prepared = self._adder.prepare(request)
        result = self.apply_add(prepared)
        if result.extraction_error is not None:  # the episodes are kept as failed; listed too
            path = self.settings.data_dir.expanduser() / DEAD_LETTERS
            result.errors += keep_failed(path, prepared, result.extraction_error)
        return result

    def prepare_add(
        self,
        messages: Messages,
        user_id: str,
        *,
        session_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        ts: TimeLike = None,
        source: str | None = None,
        speaker: str | None = None,
    ) -> PreparedAdd:
        """Phase one of `add` (validation, episodes, known facts, the extraction); writes
        nothing. Pipelines run it ahead of `apply_add` (see `engine.add`)."""
        self._setup(vectors=True)
        request = AddRequest(messages, user_id, session_id, metadata, ts, source, speaker)
        return self._adder.prepare(request)

    def apply_add(self, prepared: PreparedAdd) -> AddResult:
        """Phase two of `add`: resolve and write in one batch; counts the LLM usage."""
        self._setup(vectors=True)
        return self._adder.apply(prepared)

    # -- reading --------------------------------------------------------------------------

    def search(
        self,
        query: str,
        user_id: str,
        limit: int | None = None,
        *,
        include_invalid: bool = False,
        mode: Mode = "dual",
        since: TimeLike = None,
        until: TimeLike = None,
        min_similarity: float | None = None,
        explain: bool = False,
        filters: Mapping[str, Any] | None = None,
        max_tokens: int | None = None,
        as_of: TimeLike = None,
        near: str | Iterable[str] | None = None,
    ) -> SearchResult:
        """The facts, messages, paths and entities of `user_id`'s memory that answer `query`
        (no LLM): `limit` facts and `limit` messages (`SearchResult.episodes`; default the
        `search_limit` setting, 10), more when `max_tokens` (`context()`'s budget) holds more.

        `mode` picks the legs: "dual" (default: all of them), "expansion", "semantic" (the
        fact legs) or "episodes" (the messages alone). `since` / `until` (as `add`'s `ts`)
        keep messages written, and facts that became true, in that window. `as_of` (the same
        forms) asks what the memory held then: the messages said by then and the facts true
        then, ended since or not (a fact is true from its `valid_at`, else from when it was
        first stored, until its `invalid_at`). `min_similarity`
        (default: the `search_min_similarity` setting, off) keeps hits at least that similar to
        the query (`similarity`, a cosine). `explain`: each hit's `explanation` (its legs'
        ranks and scores, path and fusion). `filters` ({key: value} or {key: {"eq"|"ne"|"in"|
        "nin": value}}) keeps the hits whose messages' metadata match them all
        (`engine.metadata_filter`). `near` (a name or names) says whom or what the
        conversation is about: each entity of that name or alias anchors the search as if the
        query named it, so "what does she like?" near "Kate" is answered from Kate's facts;
        a name nothing stored holds is listed in `unknown_names`.

        Raises:
            InvalidInputError: an unknown mode, a limit outside 1-1000, a bad user id, time
                or window (`since` later than `until` or `as_of`), `min_similarity`,
                `filters`, `max_tokens` (below 1) or `near` (not names, more than 20, or
                with a mode that does not walk the graph: "semantic", "episodes"), or an
                `include_invalid` or `explain` that is not True or False.
        """
        user_id = check_user_id(user_id)
        query = clean_text(query, "query", self.settings.max_message_chars)
        _check_flags(include_invalid=include_invalid, explain=explain)
        limit = self.settings.search_limit if limit is None else limit
        limit = hits_for(max_tokens, check_count(limit, "limit", 1, MAX_LIMIT))
        if mode not in MODES:
            raise InvalidInputError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        floor = checked_floor(min_similarity, self.settings.search_min_similarity)
        where, (window, at) = parse_filters(filters), as_of_window(since, until, as_of)
        around = self._near(near, mode)
        self._setup(vectors=True)
        ask = functools.partial(
            self.retriever.search,
            query,
            user_id,
            mode=mode,
            include_invalid=include_invalid or at is not None,
            self_uid=self.self_uid(user_id),
            window=window,
            as_of=at,
            min_similarity=floor,
            explain=explain,
            check_premise=max_tokens is not None,
            near=around,
        )
        result = search_matching(ask, where, self.reads, limit, MAX_LIMIT)
        result.warming = self.store.warming()  # vector legs that scanned instead
        result.max_tokens = max_tokens
        return result

    def _near(self, near: str | Iterable[str] | None, mode: str) -> tuple[str, ...]:
        if near is None:
            return ()
        if mode not in WALKING_MODES:
            raise InvalidInputError(
                f"near anchors the graph walk: use mode 'dual' or 'expansion', not {mode!r}"
            )
        names = [near] if isinstance(near, str) else near
        if not isinstance(names, Iterable) or isinstance(names, Mapping | bytes):
            raise InvalidInputError(
                f"near must be a name or a list of names, got {type(near).__name__}"
            )
        most = itertools.islice(names, MAX_NEAR + 1)
        found = [clean_text(n, "a name in near", self.settings.max_name_chars) for n in most]
        if len(found) > MAX_NEAR:
            raise InvalidInputError(f"near holds {len(found)} names; at most {MAX_NEAR}")
        return tuple(dict.fromkeys(found))

    def get_all(
        self,
        user_id: str,
        *,
        include_invalid: bool = False,
        limit: int = 1000,
        offset: int = 0,
        since: TimeLike = None,
        until: TimeLike = None,
    ) -> list[Fact]:
        """A page of the user's facts, oldest first; with `since` / `until` (as `add`'s `ts`),
        those that became true in that window (`valid_at`, else when first stored).

        Raises:
            InvalidInputError: a bad user id or window, `limit` / `offset` (integers from 0),
                or an `include_invalid` that is not True or False.
        """
        user_id = self._held_user(user_id)
        _check_flags(include_invalid=include_invalid)
        limit, offset = check_count(limit, "limit", 0), check_count(offset, "offset", 0)
        window = read_window(since, until)
        self._setup()
        return self.reads.list_facts(
            user_id, include_invalid=include_invalid, skip=offset, limit=limit, window=window
        )

    def entity(
        self,
        name: str,
        user_id: str,
        *,
        limit: int = 100,
        since: TimeLike = None,
        until: TimeLike = None,
    ) -> EntityView:
        """An entity by name or alias with its facts and timeline; with `since` / `until` (as
        `add`'s `ts`), the facts that became true and the messages said in that window.

        Raises:
            NotFoundError: the user has no entity of that name.
            InvalidInputError: a bad user id, name or window, or a limit below 1.
        """
        user_id = check_user_id(user_id)
        check_count(limit, "limit", 1)
        key = entity_key(clean_text(name, "name", self.settings.max_name_chars))
        window = read_window(since, until)
        self._setup()
        view = entity_view(self.reads, user_id, key, limit, window)
        if view is None:
            raise NotFoundError(f"user {user_id!r} has no entity named {name!r}")
        return view

    def top_entities(
        self,
        user_id: str,
        k: int = 10,
        by: RankBy = "salience",
        *,
        since: TimeLike = None,
        until: TimeLike = None,
    ) -> list[ScoredEntity]:
        """The user's most salient (or frequent, or recent) entities, best first (salience:
        see `engine.knowledge`); with `since` / `until`, those seen in that window.

        Raises:
            InvalidInputError: a bad user id, `by` or window, or `k` below 1.
        """
        check_count(k, "k", 1)
        if by not in RANKINGS:
            raise InvalidInputError(f"by must be salience, frequency or recency, got {by!r}")
        user_id = check_user_id(user_id)
        window = read_window(since, until)
        self._setup()
        half_life = self.settings.ranking.fusion.half_life_days * DAY_S
        return top_entities(self.reads, user_id, k, by, time.time(), half_life, window)

    def history(self, uid: str, user_id: str) -> list[HistoryEvent]:
        """The change events of a fact or entity, oldest first ([] for an id not held)."""
        user_id, uid = check_user_id(user_id), clean_text(uid, "uid", _MAX_UID_CHARS)
        self._setup()
        return self.reads.history(user_id, uid)

    # -- deleting -------------------------------------------------------------------------

    def delete(self, uid: str, user_id: str) -> None:
        """Delete one fact (both its forms) and its change history: a fact added again later
        (the same uid) starts a history of its own. The messages it came from stay, and search
        still shows them: `forget` deletes the fact with its messages.

        Raises:
            NotFoundError: the user has no fact with that uid.
        """
        user_id = self._held_user(user_id)
        uid = clean_text(uid, "uid", _MAX_UID_CHARS)
        self._setup()
        if not delete_fact(self.store, user_id, uid):
            raise NotFoundError(f"user {user_id!r} has no fact {uid!r}")
        self.retriever.forget(user_id)

    def delete_all(self, user_id: str) -> int:
        """Delete everything of one user; return the number of nodes removed."""
        user_id = self._held_user(user_id)
        self._setup()
        self.retriever.forget(user_id)
        return self.store.delete_user(user_id)


def _check_flags(**flags: object) -> None:
    """A flag is True or False: "false" or 0 read as truthy gave the opposite answer
    (`include_invalid="false"` listed the ended facts)."""
    for name, value in flags.items():
        if not isinstance(value, bool):
            raise InvalidInputError(f"{name} must be True or False, got {value!r}")
