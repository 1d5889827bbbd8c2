"""`load_file`: a file of triples into one user's graph at bulk speed, resumable.

Two phases, each a pipeline: a thread embeds chunk i+1 (texts deduplicated, batched by length)
while the caller's thread writes chunk i, so the model and the database work at once.
1. entities: each written once, new ones with their vector (see `engine.load.plan`);
2. facts: the new ones, both forms, vectors and ADD events, one atomic write per chunk.
A load that at least doubles the graph lets the store build its vector indexes after the
writes instead of during them (`BulkWrites`).
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, Field

from engine.embedding import Embedder, as_param
from engine.load.plan import Plan, make_plan
from engine.load.read import Limits, LineError, Naming, Triple, TripleFormat, read_triples
from engine.load.state import (
    LoadState,
    file_identity,
    one_load_at_a_time,
    read_state,
    save_state,
    state_path,
)
from engine.normalize import stable_uid
from engine.store.base import (
    EntityRow,
    FactRow,
    GraphStore,
    HistoryRow,
    WriteBatch,
    Written,
    bulk_writing,
)
from engine.store.reads import Reads
from engine.store.whole import held_in, write_whole

T = TypeVar("T")
U = TypeVar("U")
MAX_REPORTED_ERRORS = 100
# batches embedded at once: the writes leave a core mostly idle (benchmarks/README.md)
EMBED_WORKERS = 2


class LoadReport(BaseModel):
    """What `Memory.load` did. `errors` lists the first bad lines (`error_count` all).

    Unless `already_loaded`, each line read is counted once: a fact added, a fact already
    stored, a repeat of a fact an earlier line gave (`facts_repeated`: stored once, one more
    mention of a new fact), a bad line, or (N-Triples) a label naming an entity
    (`names_read`)."""

    path: str
    user_id: str
    format: str
    lines_read: int = 0
    facts_added: int = 0
    facts_already_stored: int = 0
    facts_repeated: int = 0
    names_read: int = 0
    entities_added: int = 0
    entities_updated: int = 0
    error_count: int = 0
    errors: list[str] = Field(default_factory=list)
    resumed: bool = False
    already_loaded: bool = False
    seconds: float = 0.0
    facts_per_s: float = 0.0
    embed_s: float = 0.0
    write_s: float = 0.0


@dataclass(frozen=True, slots=True)
class LoadProgress:
    phase: str  # "entities" or "facts"
    done: int
    total: int


ProgressFn = Callable[[LoadProgress], None]


@dataclass(frozen=True, slots=True)
class LoadJob:
    store: GraphStore
    embedder: Embedder
    user_id: str
    data_dir: Path
    limits: Limits
    chunk_size: int = 2000
    progress: ProgressFn | None = None
    embed_workers: int = EMBED_WORKERS


def load_file(
    job: LoadJob, path: Path, fmt: TripleFormat, delimiter: str | None, restart: bool
) -> LoadReport:
    """Load `path` for `job.user_id`; see the module docstring.

    Raises:
        InvalidInputError: the file is missing, unreadable or not text.
        StoreError: the database failed (what was committed stays; a rerun resumes).
    """
    started = time.perf_counter()
    report = LoadReport(path=str(path), user_id=job.user_id, format=fmt)
    triples = _read(path, fmt, delimiter, job.limits, report)
    where = state_path(job.data_dir, path, job.user_id)
    identity = file_identity(path, f"{fmt}\x1f{delimiter or ''}")
    with one_load_at_a_time(where):
        counts = Reads(job.store).counts(job.user_id)
        empty = counts["entities"] == 0 and counts["facts"] == 0
        state = None if restart else read_state(where, identity, job.user_id, job.chunk_size)
        if empty:
            state = None  # what a checkpoint says was loaded is gone (`delete_all`, `reset`)
        if state is not None and state.done:
            report.already_loaded = True
            return _finish(report, started)
        report.resumed = state is not None
        state = state or LoadState(identity, job.user_id, job.chunk_size)
        _load(job, triples, where, state, report, fresh=empty)
    return _finish(report, started)


def _load(
    job: LoadJob,
    triples: list[Triple],
    where: Path,
    state: LoadState,
    report: LoadReport,
    fresh: bool,
) -> None:
    """Write what the checkpoint `state` says is left of the load (all of it when new);
    `fresh`: the user held nothing before it."""
    reads = Reads(job.store)
    plan = make_plan(reads, job.user_id, triples, fresh=fresh, now=time.time())
    report.facts_already_stored, report.facts_repeated = plan.stored, plan.repeated
    timer = _Timer()
    with bulk_writing(job.store, len(plan.new_entities) + len(plan.facts)):
        if not state.entities_complete:
            _write_entities(job, plan, state, where, timer, report)
        _write_facts(job, plan, timer, report)
    state.done = True
    save_state(where, state)
    report.embed_s, report.write_s = round(timer.embed, 2), round(timer.write, 2)


def _read(
    path: Path, fmt: TripleFormat, delimiter: str | None, limits: Limits, report: LoadReport
) -> list[Triple]:
    triples: list[Triple] = []
    for item in read_triples(path, fmt, limits, delimiter):
        report.lines_read += 1
        if isinstance(item, Naming):
            report.names_read += 1
        elif isinstance(item, LineError):
            report.error_count += 1
            if len(report.errors) < MAX_REPORTED_ERRORS:
                report.errors.append(item.located(path))
        else:
            triples.append(item)
    return triples


def _finish(report: LoadReport, started: float) -> LoadReport:
    report.seconds = round(time.perf_counter() - started, 2)
    report.facts_per_s = round(report.facts_added / report.seconds, 1) if report.seconds else 0.0
    return report


class _Timer:
    def __init__(self) -> None:
        self.embed = 0.0
        self.write = 0.0


def _write_entities(
    job: LoadJob, plan: Plan, state: LoadState, where: Path, timer: _Timer, report: LoadReport
) -> None:
    chunks = list(_chunked(plan.entities, job.chunk_size))
    total = len(plan.entities)

    def prepare(rows: list[EntityRow]) -> WriteBatch:
        new = [r for r in rows if r.uid in plan.new_entities]
        t = time.perf_counter()
        vectors = job.embedder.encode_bulk([r.name for r in new], job.embed_workers)
        timer.embed += time.perf_counter() - t
        embeddings = {r.uid: as_param(v) for r, v in zip(new, vectors, strict=True)}
        return WriteBatch(entities=rows, entity_embeddings=embeddings)

    def write(index: int, batch: WriteBatch) -> None:
        t = time.perf_counter()
        added = len(_write(job, batch).added_entities)
        timer.write += time.perf_counter() - t
        state.entities_done = index + 1
        save_state(where, state)
        report.entities_added += added  # not another load's, writing them at the same time
        report.entities_updated += len(batch.entities) - added
        _tell(job, "entities", min(total, (index + 1) * job.chunk_size), total)

    _tell(job, "entities", min(total, state.entities_done * job.chunk_size), total)
    pipelined(enumerate(chunks), state.entities_done, prepare, write)
    state.entities_complete = True
    save_state(where, state)


def _add_event(row: FactRow, now: float) -> HistoryRow:
    return HistoryRow(stable_uid(row.uid, "ADD", repr(now)), row.uid, "ADD", now, None, row.text)


def _write_facts(job: LoadJob, plan: Plan, timer: _Timer, report: LoadReport) -> None:
    total, now = len(plan.facts), time.time()

    def prepare(rows: list[FactRow]) -> WriteBatch:
        t = time.perf_counter()
        vectors = job.embedder.encode_bulk([r.text for r in rows], job.embed_workers)
        timer.embed += time.perf_counter() - t
        # an ADD event for the facts this write creates (not another load's, at the same time)
        rows = [replace(r, on_create=_add_event(r, now)) for r in rows]
        embeddings = {r.uid: as_param(v) for r, v in zip(rows, vectors, strict=True)}
        return WriteBatch(facts=rows, fact_embeddings=embeddings)

    ends = {row.uid: row for row in plan.entities}

    def write(index: int, batch: WriteBatch) -> None:
        t = time.perf_counter()
        written = _write(job, batch, ends)
        timer.write += time.perf_counter() - t
        added, lost = len(written.added), len(written.vanished)
        report.facts_added += added
        report.facts_already_stored += len(batch.facts) - added - lost
        for row in (r for r in batch.facts if r.uid in written.vanished):
            _lost(report, plan.lines[row.uid])
        _tell(job, "facts", min(total, (index + 1) * job.chunk_size), total)

    _tell(job, "facts", 0, total)
    pipelined(enumerate(_chunked(plan.facts, job.chunk_size)), 0, prepare, write)


def _write(job: LoadJob, batch: WriteBatch, ends: Mapping[str, EntityRow] | None = None) -> Written:
    """Write `batch` whole (`write_whole`): an entity read as stored, or named by a fact,
    deleted before the write is written again with its vector, and its facts with it."""
    write = functools.partial(job.store.write, job.user_id)
    held = held_in(Reads(job.store), job.user_id)
    return write_whole(write, job.embedder, batch, held, ends)


def _lost(report: LoadReport, line: int) -> None:
    """A fact the write could not store (`Written.vanished`): an entity it names was
    deleted, and its name taken by another entity, while it was written."""
    report.error_count += 1
    if len(report.errors) < MAX_REPORTED_ERRORS:
        reason = "not written: an entity it names changed meanwhile; load again, restart=True"
        report.errors.append(LineError(line, reason).located(report.path))


def _tell(job: LoadJob, phase: str, done: int, total: int) -> None:
    if job.progress is not None:
        job.progress(LoadProgress(phase, done, total))


def _chunked(items: list[T], size: int) -> Iterator[list[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class _Failed(Generic[T]):
    def __init__(self, error: BaseException) -> None:
        self.error = error


_END = object()


def pipelined(
    items: Iterable[tuple[int, T]],
    skip: int,
    prepare: Callable[[T], U],
    write: Callable[[int, U], None],
) -> None:
    """`write(i, prepare(item))` for each item from index `skip` on, in order, while a thread
    prepares the next one (one ahead). An error on either side stops both and is raised."""
    ready: queue.Queue[Any] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def offer(value: object) -> bool:
        while not stop.is_set():
            try:
                ready.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for index, item in items:
                if index >= skip and not offer((index, prepare(item))):
                    return
            offer(_END)
        except BaseException as exc:  # handed to the writing thread, which raises it
            offer(_Failed(exc))

    producer = threading.Thread(target=produce, name="graphmem-load-prepare", daemon=True)
    producer.start()
    try:
        while (got := ready.get()) is not _END:
            if isinstance(got, _Failed):
                raise got.error
            write(*got)
    finally:
        stop.set()
        producer.join()
