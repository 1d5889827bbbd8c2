"""The batch ingest pipeline: read, skip what is stored, extract in parallel, apply in order.

    inputs -> collect (readers) -> plan: per user, timestamp order, stored checksums skipped
           -> prepare (extraction, up to `concurrency` at once, across and within users)
           -> apply  (resolution + one graph write per message; one user's messages strictly
                      in timestamp order, different users in parallel)

Resume is a consequence of the write contract: `apply` stores a message's episode and its
facts in one batch, so after a crash each user's stored messages are a prefix of its lane and
a rerun skips them by checksum. Failures never stop the batch (`on_error="skip"`): they are
counted, listed in the report and appended to the dead-letter file, from which
`retry_failed=True` replays them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engine.errors import ExtractionError, GraphmemError, InvalidInputError
from engine.ingest.chat_records import IngestFormat
from engine.ingest.deadletters import DeadLetter, DeadLetters
from engine.ingest.lane import Lane
from engine.ingest.report import IngestError, IngestProgress, IngestReport, IngestWarning, Stage
from engine.ingest.sources import (
    IngestInput,
    Job,
    ReadFn,
    collect,
    duplicate,
    interleave,
    plan,
)
from engine.ingest.steps import Extracted, Steps
from engine.ingest.stored import as_stored, ask, resolve
from engine.models import AddResult
from engine.normalize import check_user_id

ProgressFn = Callable[[IngestProgress], None]
DEAD_LETTERS = "dead_letters.jsonl"
MAX_CONCURRENCY = 256  # extractions in flight: each holds a thread and a prepared message
_WAIT_S = 0.2  # how often waiting threads look at the stop flag (keeps Ctrl-C responsive)


class IngestOptions(BaseModel):
    """The knobs of one ingest run, validated at the entry point."""

    model_config = ConfigDict(extra="forbid")

    format: IngestFormat = "auto"
    delimiter: str | None = None
    user_id: str | None = None
    users_from_file: bool = False
    concurrency: int = Field(default=4, ge=1, le=MAX_CONCURRENCY)
    dry_run: bool = False
    retry_failed: bool = False
    on_error: Literal["skip", "raise"] = "skip"
    dead_letter_path: Path


def ingest(
    steps: Steps,
    inputs: IngestInput,
    progress: ProgressFn | None,
    data_dir: Path,
    **options: object,
) -> IngestReport:
    """Validate the options, then run the pipeline with `steps` (see `Memory.ingest`); dead
    letters go to `<data_dir>/dead_letters.jsonl` unless `dead_letter_path` says otherwise.

    Raises:
        InvalidInputError: an option is invalid, a `user_id` among them (`check_user_id`),
            before anything is read (and as `Ingestor.run`).
    """
    if options.get("dead_letter_path") is None:
        options["dead_letter_path"] = data_dir.expanduser() / DEAD_LETTERS
    try:
        valid = IngestOptions.model_validate(options)
    except ValidationError as exc:
        raise InvalidInputError(f"invalid ingest options: {exc}") from exc
    if valid.user_id is not None:
        check_user_id(valid.user_id)
    return Ingestor(steps, valid, progress).run(inputs)


class Ingestor:
    """Runs one batch ingest. See the module docstring for the flow and guarantees.

    Args:
        steps: how to prepare and apply one message (bound to a `Memory`).
        options: the run's options.
        progress: called with a snapshot after every message (from worker threads, serially).
    """

    def __init__(
        self, steps: Steps, options: IngestOptions, progress: ProgressFn | None = None
    ) -> None:
        self.steps = steps
        self.options = options
        self.progress = progress

    def run(self, inputs: IngestInput) -> IngestReport:
        """Ingest `inputs` (paths, records, dicts) and report.

        Raises:
            InvalidInputError: a path is missing or unreadable as the format; with
                `on_error="raise"`, also the first unreadable record (before any write).
            ExtractionError: with `on_error="raise"`, the first message that failed.
            KeyboardInterrupt: the run was interrupted; what was applied stays applied.
        """
        started = time.perf_counter()
        letters = DeadLetters(self.options.dead_letter_path)
        try:
            report, jobs = self._plan(inputs, letters, started)
            if not self.options.dry_run and jobs:
                _Run(self, report, letters, started).execute(jobs)
        finally:
            letters.close()
        report.elapsed_s = time.perf_counter() - started
        return report

    def _plan(
        self, inputs: IngestInput, letters: DeadLetters, started: float
    ) -> tuple[IngestReport, dict[str, list[Job]]]:
        opts = self.options
        collected = collect(
            inputs,
            opts.format,
            opts.user_id,
            self.steps.keys,
            users_from_file=opts.users_from_file,
            delimiter=opts.delimiter,
            split_at=self.steps.max_message_chars,
            on_read=self._reading(started),
        )
        if opts.on_error == "raise" and collected.errors:
            raise InvalidInputError(str(collected.errors[0]))
        jobs = collected.jobs
        retried = [self._retry(letter) for letter in self._letters(letters)]
        report = IngestReport(
            files=collected.files,
            formats=collected.formats,
            day_files=collected.day_files,
            records_read=len(jobs),
            user_id=opts.user_id,
            errors=collected.errors,
            dead_letters_retried=len(retried),
            dry_run=opts.dry_run,
            concurrency=opts.concurrency,
            dead_letter_path=str(opts.dead_letter_path),
        )
        jobs, stored, report.messages_changed = as_stored(self.steps.stored, retried + jobs)
        lanes, duplicates = plan(jobs)  # a replayed dead letter wins over its twin
        report.messages_skipped = len(duplicates)
        report.warnings = [*_skipped(letters), *collected.warnings] + [
            duplicate(job, twin) for job, twin in duplicates if not twin.retry
        ]
        report.users = len(lanes)
        report.user_ids = sorted(lanes)
        for user, lane in lanes.items():
            lanes[user] = self._unstored(user, lane, stored[user], report, letters)
        pending = {user: lane for user, lane in lanes.items() if lane}
        report.messages_pending = sum(len(lane) for lane in pending.values())
        return report, pending

    def _reading(self, started: float) -> ReadFn | None:
        """Tells `progress` how reading goes: the file being read, the messages read so far."""
        progress = self.progress
        if progress is None:
            return None

        def tell(path: str | None, read: int) -> None:
            elapsed = time.perf_counter() - started
            progress(
                IngestProgress(
                    phase="read", path=path, records_read=read, total=0, elapsed_s=elapsed
                )
            )

        return tell

    def _unstored(
        self,
        user: str,
        lane: list[Job],
        found: set[str],
        report: IngestReport,
        letters: DeadLetters,
    ) -> list[Job]:
        """The lane without its messages stored as good episodes (`found`: the user's stored
        checksums); a message stored as failed (its extraction failed in an earlier run)
        stays, to be extracted again."""
        stored = [job for job in lane if job.checksum in found]
        failed = ask(self.steps.failed, user, [(job.checksum,) for job in stored])
        good = {job.checksum: job for job in stored if job.checksum not in failed}
        report.messages_skipped += len(good)
        report.messages_retried += len(stored) - len(good)
        if not self.options.dry_run:
            report.dead_letters_resolved += sum(resolve(letters, job) for job in good.values())
        return [
            replace(job, retry=True) if job.checksum in failed else job
            for job in lane
            if job.checksum not in good
        ]

    def _letters(self, letters: DeadLetters) -> list[DeadLetter]:
        """The dead letters to replay: none, every one, or (with a user) that user's."""
        user = self.options.user_id
        if not self.options.retry_failed:
            return []
        return [d for d in letters.letters() if user is None or d.user_id == user]

    def _retry(self, letter: DeadLetter) -> Job:
        keys = (*self.steps.keys(letter.record, letter.user_id), letter.checksum)
        return replace(Job.of(letter.record, letter.user_id, letter.path, keys), retry=True)


class _Run:
    """The mutable state of one execution: counters, the stop flag, the in-flight window."""

    def __init__(
        self, owner: Ingestor, report: IngestReport, letters: DeadLetters, started: float
    ) -> None:
        self.steps, self.options, self.progress = owner.steps, owner.options, owner.progress
        self.report, self.letters, self.started = report, letters, started
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.failure: BaseException | None = None
        self.done = 0
        self.total = report.messages_pending
        self.all_done = threading.Event()
        # Prepared-but-unapplied work is bounded: a slow head of a lane cannot pile up memory.
        self.window = threading.Semaphore(self.options.concurrency * 4)

    def execute(self, lanes: dict[str, list[Job]]) -> None:
        self._notify()
        by_user = {user: Lane(self._apply) for user in lanes}
        pool = ThreadPoolExecutor(self.options.concurrency, thread_name_prefix="graphmem-ingest")
        try:
            for index, job in interleave(lanes):
                while not self.window.acquire(timeout=_WAIT_S):
                    if self.stop.is_set():
                        break
                if self.stop.is_set():
                    break
                pool.submit(self._prepare, by_user[job.user_id], index, job)
            while not self.stop.is_set() and not self.all_done.wait(_WAIT_S):
                pass
        except BaseException:
            self.stop.set()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if self.failure is not None:
            raise self.failure

    def _prepare(self, lane: Lane[Extracted], index: int, job: Job) -> None:
        if self.stop.is_set():
            return
        began = time.perf_counter()
        try:
            extracted = self.steps.prepare(job)
        except Exception as exc:  # the batch policy: one message never stops the others
            extracted = Extracted(error=_reason(exc))
        try:
            with self.lock:
                self.report.extract_s += time.perf_counter() - began
            lane.hand_in(index, job, extracted)
        except BaseException as exc:  # not a message's failure (a bug, a dead store): stop
            self.failure = self.failure or exc
            self.stop.set()

    def _apply(self, job: Job, extracted: Extracted) -> None:
        if self.stop.is_set():
            return
        if extracted.error is not None:
            # the dead letter first: a kill before the failed episode is written loses nothing
            self._dead_letter(job, "extract", extracted.error)
        if extracted.stored or extracted.prepared is None:
            failed = extracted.error is not None
            self._finish(job, extracted, None, failed=failed)
            return
        began = time.perf_counter()
        try:
            result = self.steps.apply(extracted.prepared)
        except Exception as exc:  # same policy as `_prepare`
            if extracted.error is None:
                self._dead_letter(job, "apply", _reason(exc))
            self._finish(job, extracted, None, failed=True)
            return
        finally:
            with self.lock:
                self.report.write_s += time.perf_counter() - began
        self._finish(job, extracted, result, failed=extracted.error is not None)

    def _finish(
        self, job: Job, extracted: Extracted, result: AddResult | None, *, failed: bool
    ) -> None:
        if not failed and resolve(self.letters, job):
            with self.lock:
                self.report.dead_letters_resolved += 1
        with self.lock:
            self._count(extracted, result, failed)
            self.done += 1
            finished = self.done >= self.total
        self.window.release()
        self._notify()
        if finished:
            self.all_done.set()

    def _count(self, extracted: Extracted, result: AddResult | None, failed: bool) -> None:
        report = self.report
        report.llm_calls += extracted.llm_calls
        report.prompt_tokens += extracted.prompt_tokens
        report.completion_tokens += extracted.completion_tokens
        if extracted.llm_calls and extracted.mode is not None:
            report.llm_modes[extracted.mode] = report.llm_modes.get(extracted.mode, 0) + 1
        if failed:
            report.messages_failed += 1
        elif result is None or not result.episode_uids:  # stored by another writer meanwhile
            report.messages_skipped += 1
        else:
            report.messages_added += 1
            report.facts_added += result.facts_added
            report.facts_updated += result.facts_updated
            report.facts_invalidated += result.facts_invalidated

    def _dead_letter(self, job: Job, stage: Stage, reason: str) -> None:
        location = job.record.source
        error = IngestError(
            path=job.path, location=location, reason=reason, stage=stage, checksum=job.checksum
        )
        self.letters.add(
            DeadLetter(
                record=job.record,
                user_id=job.user_id,
                checksum=job.checksum,
                path=job.path,
                location=location,
                stage=stage,
                reason=reason,
            )
        )
        with self.lock:
            self.report.errors.append(error)
            if self.options.on_error == "raise" and self.failure is None:
                self.failure = ExtractionError(f"{error} (see {self.letters.path})")
                self.stop.set()

    def _notify(self) -> None:
        if self.progress is None:
            return
        with self.lock:
            r = self.report
            snapshot = IngestProgress(
                records_read=r.records_read,
                total=self.total,
                done=self.done,
                messages_added=r.messages_added,
                messages_failed=r.messages_failed,
                facts=r.facts_added + r.facts_updated + r.facts_invalidated,
                llm_calls=r.llm_calls,
                tokens=r.tokens,
                errors=len(r.errors),
                elapsed_s=time.perf_counter() - self.started,
            )
            self.progress(snapshot)


def _skipped(letters: DeadLetters) -> list[IngestWarning]:
    path = str(letters.path)
    return [IngestWarning(path=path, location=f"line {n}", reason=r) for n, r in letters.skipped]


def _reason(exc: Exception) -> str:
    if isinstance(exc, GraphmemError):
        return str(exc)
    return f"internal error: {type(exc).__name__}: {exc}"
