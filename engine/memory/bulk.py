"""Bulk writes: `Memory.load` (a file of triples) and `Memory.ingest` (chat logs)."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from engine.add.ingest_steps import AddSteps
from engine.errors import InvalidInputError
from engine.ingest.pipeline import ProgressFn, ingest
from engine.ingest.report import IngestReport
from engine.ingest.sources import IngestInput
from engine.load.run import LoadReport
from engine.load.run import ProgressFn as LoadProgressFn
from engine.memory.core import MemoryCore
from engine.normalize import check_user_id


class MemoryBulk(MemoryCore):
    """Loading and ingesting, as `Memory` offers them."""

    def load(
        self,
        path: str | PathLike[str],
        user_id: str,
        *,
        format: str = "auto",
        delimiter: str | None = None,
        restart: bool = False,
        chunk_size: int = 2000,
        progress: LoadProgressFn | None = None,
    ) -> LoadReport:
        """Bulk-load a file of triples (TSV, CSV, JSONL or RDF N-Triples, gzipped or not:
        docs/load.md) for `user_id`: bad lines are reported by number and the rest loads;
        facts already stored are skipped, so loading a file again adds nothing, and an
        interrupted load resumes where it stopped (`restart=True` reads it all again).

        Raises:
            InvalidInputError: the file is missing or not text, or an option is invalid.
            StoreError: the database failed (what was written stays; rerun to resume).

        Example:
            >>> mem.load("kb.tsv", user_id="kb").facts_added  # doctest: +SKIP
        """
        from engine.load import Limits, LoadJob, load_file, triple_format

        user_id = check_user_id(user_id)
        if chunk_size < 1:
            raise InvalidInputError(f"chunk_size must be at least 1, got {chunk_size}")
        source = Path(path)
        fmt = triple_format(source, format)
        self._setup(vectors=True)
        limits = Limits(self.settings.max_name_chars, self.settings.max_text_chars)
        data_dir = self.settings.data_dir.expanduser()
        job = LoadJob(self.store, self.embedder, user_id, data_dir, limits, chunk_size, progress)
        report = load_file(job, source, fmt, delimiter, restart)
        self.retriever.forget(user_id)
        return report

    def ingest(
        self,
        paths_or_iterable: IngestInput,
        user_id: str | None = None,
        *,
        users_from_file: bool = False,
        format: str = "auto",
        delimiter: str | None = None,
        concurrency: int = 4,
        dry_run: bool = False,
        retry_failed: bool = False,
        dead_letter_path: str | PathLike[str] | None = None,
        on_error: str = "skip",
        progress: ProgressFn | None = None,
    ) -> IngestReport:
        """Add chat logs in bulk (see docs/ingest.md): files, directories, zips (`format`, and
        `delimiter` for CSV), `ChatRecord`s or dicts; extracted `concurrency` at a time, each
        user's messages applied in timestamp order. `user_id` adds every message for that
        user; `users_from_file=True` takes each one's user from the input: one of the two is
        required (only `retry_failed=True` alone needs neither). Rerunning adds nothing twice
        and retries failed extractions; messages that fail go to `dead_letter_path` (default
        `<data_dir>/dead_letters.jsonl`), which `retry_failed=True` replays (with `user_id`,
        only that user's). `progress` gets an `IngestProgress` while the inputs are read
        (`phase="read"`: as each file starts, every 1000 messages, at the end) and after
        every message (`phase="ingest"`).

        Raises:
            ConfigError: the extractor cannot be built (OpenAI's API without OPENAI_API_KEY),
                before any message is read (not with `dry_run`, which extracts nothing).
            InvalidInputError: a path is missing or its format unknown, an option is invalid,
                no user was chosen; with `on_error="raise"`, also the first unreadable record
                (nothing written).
            ExtractionError: with `on_error="raise"`, the first message that failed.

        Example:
            >>> report = mem.ingest("chats.jsonl", user_id="alice")  # doctest: +SKIP
            >>> report.messages_added, report.messages_skipped, report.errors  # doctest: +SKIP
        """
        steps = AddSteps(self._adder, extracting=not dry_run)
        self._setup(vectors=True)
        return ingest(
            steps,
            paths_or_iterable,
            progress,
            self.settings.data_dir,
            user_id=user_id,
            users_from_file=users_from_file,
            format=format,
            delimiter=delimiter,
            concurrency=concurrency,
            dry_run=dry_run,
            retry_failed=retry_failed,
            dead_letter_path=dead_letter_path,
            on_error=on_error,
        )
