"""`Adder`: the write side of a `Memory`, from messages or facts to one batch per call."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from engine.add.batch import apply, not_written
from engine.add.facts import CleanFact, distinct_facts, facts_batch
from engine.add.prepare import AddContext, AddRequest, PreparedAdd, prepare
from engine.config import Settings
from engine.embedding import Embedder
from engine.extraction.schema import Extractor
from engine.models import AddResult
from engine.retrieval.retriever import DualRetriever
from engine.store.base import GraphStore
from engine.store.reads import Reads

_CHUNK = 1000  # facts per batch in `add_facts`
# times an add is prepared again after another writer stored some of its messages first (each
# time, at least one more of them is stored): a bound, not a timing
_CLASHES = 8


@dataclass(slots=True)
class Usage:
    """LLM calls and tokens spent by the adds of one `Memory` object, in this process."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def count(self, result: AddResult) -> None:
        with self._lock:
            self.llm_calls += result.llm_calls
            self.prompt_tokens += result.prompt_tokens
            self.completion_tokens += result.completion_tokens

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "llm_calls": self.llm_calls,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
            }


class Adder:
    """Adds to one store: conversations in two phases (`prepare`, then `apply`), and
    pre-extracted facts (`add_facts`). Receives its collaborators; knows no `Memory`.

    Args:
        store: the graph store written to.
        embedder: embeds episodes, names and fact sentences.
        retriever: finds what is known before extraction; told what was written.
        extractor: gives the extractor on first use (it may be costly to build).
        settings: the limits and resolution settings.
    """

    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        retriever: DualRetriever,
        extractor: Callable[[], Extractor],
        settings: Settings,
    ) -> None:
        self.store = store
        self.reads = Reads(store)
        self.embedder = embedder
        self.retriever = retriever
        self.extractor = extractor
        self.settings = settings
        self.usage = Usage()

    def prepare(self, request: AddRequest) -> PreparedAdd:
        """Phase one (see `engine.add.prepare.prepare`); writes nothing."""
        return prepare(self._context(), request)

    def apply(self, prepared: PreparedAdd) -> AddResult:
        """Phase two (see `engine.add.batch.apply`), counting the LLM usage. When another
        writer stored one of the messages after `prepare` looked, nothing was written (its
        facts would count twice): the add is prepared again, so the messages still new are
        written and the others skipped."""
        result = apply(self._context(), prepared)
        self.usage.count(result)
        for _ in range(_CLASHES):
            if not prepared.episodes or result.episode_uids or prepared.request is None:
                break
            spent = result
            prepared = self.prepare(prepared.request)
            result = apply(self._context(), prepared)
            self.usage.count(result)
            result.llm_calls += spent.llm_calls
            result.prompt_tokens += spent.prompt_tokens
            result.completion_tokens += spent.completion_tokens
        return result

    def add_facts(
        self, clean: list[CleanFact], user_id: str, *, show_progress: bool = False
    ) -> AddResult:
        """Write validated facts `_CHUNK` at a time, each fact once however often `clean`
        repeats it (`distinct_facts`; see `Memory.add_facts`)."""
        clean = distinct_facts(clean)
        result = AddResult(user_id=user_id)
        chunks: Iterable[int] = range(0, len(clean), _CHUNK)
        if show_progress:
            from tqdm import tqdm

            chunks = tqdm(chunks, unit="chunk", desc=f"adding {len(clean)} facts")
        ctx, started = self._context(), time.perf_counter()
        for start in chunks:
            chunk = clean[start : start + _CHUNK]
            batch, _ = facts_batch(self.reads, self.embedder, user_id, chunk)
            written = ctx.write(user_id, batch)
            lost = written.vanished
            result.facts_added += len(written.added)
            result.facts_updated += len(batch.facts) - len(written.added) - len(lost)
            result.fact_uids += [f.uid for f in batch.facts if f.uid not in lost]
            result.errors += [not_written(f.uid) for f in batch.facts if f.uid in lost]
            result.entities_added += len(written.added_entities)
            result.entity_uids += [e.uid for e in batch.entities]
        result.entity_uids = list(dict.fromkeys(result.entity_uids))
        result.latency_ms = (time.perf_counter() - started) * 1000.0
        return result

    def _context(self) -> AddContext:
        return AddContext(
            self.store, self.reads, self.embedder, self.retriever, self.extractor, self.settings
        )
