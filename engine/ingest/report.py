"""What a batch ingest returns (`IngestReport`) and shows while it runs (`IngestProgress`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from engine.ingest.chat_records import located

Stage = Literal["read", "extract", "apply"]
# what an export read is called in the summary, by format; any other input is a file
_EXPORTS = {"chatgpt": "ChatGPT export", "claude": "Claude export", "slack": "Slack export"}
Phase = Literal["read", "ingest"]


class IngestError(BaseModel):
    """One message (or file) that did not make it into memory, and why."""

    path: str = Field(description="the file, or `<iterable>` for records passed in memory")
    location: str = Field(description="`line N`, `record N`, a LoCoMo dia_id, a source or `file`")
    reason: str
    stage: Stage = Field(
        description="`read`: unreadable record; `extract`: the extractor "
        "failed after its retries; `apply`: resolution or the graph write failed"
    )
    checksum: str | None = None

    def __str__(self) -> str:
        return f"{located(self.path, self.location)}: {self.reason}"


class IngestWarning(BaseModel):
    """A message kept (or a duplicate left out) despite a fault, and what was done about it."""

    path: str
    location: str
    reason: str

    def __str__(self) -> str:
        return f"{located(self.path, self.location)}: {self.reason}"


class IngestProgress(BaseModel):
    """A snapshot of a running ingest, handed to the `progress` callback: first while the
    inputs are read (`phase` "read": `path` the file being read, None once all are), then
    after every message (`phase` "ingest")."""

    phase: Phase = "ingest"
    path: str | None = Field(default=None, description="read: the file being read")
    records_read: int = Field(default=0, description="messages read so far")
    total: int = Field(description="messages to process (after skipping stored ones)")
    done: int = 0
    messages_added: int = 0
    messages_failed: int = 0
    facts: int = Field(default=0, description="facts added + updated + invalidated")
    llm_calls: int = 0
    tokens: int = 0
    errors: int = 0
    elapsed_s: float = 0.0

    @property
    def rate(self) -> float:
        """Messages processed per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        """Seconds left at the current rate; None before the first message."""
        return (self.total - self.done) / self.rate if self.rate > 0 else None


class IngestReport(BaseModel):
    """The outcome of `Memory.ingest`: counts, accounting, timings and every error.

    `write_s` is the time spent applying messages (entity resolution plus the one graph write
    batch per message), summed over threads; `write_share` is `write_s / elapsed_s`. Applies of
    one user run one at a time, so a share near 1 for a single user means the graph writes, not
    the LLM, bound the rate.
    """

    files: list[str] = Field(default_factory=list)
    formats: dict[str, str] = Field(default_factory=dict, description="file -> format read")
    day_files: dict[str, int] = Field(
        default_factory=dict, description="Slack export (its folder) -> the day files it holds"
    )
    users: int = 0
    user_ids: list[str] = Field(default_factory=list, description="the users written for")
    user_id: str | None = Field(
        default=None, description="the user the run was given (None: the file names them)"
    )
    records_read: int = 0
    messages_added: int = 0
    messages_skipped: int = Field(default=0, description="already stored (same checksum)")
    messages_failed: int = Field(default=0, description="extract or apply failed (dead letters)")
    messages_retried: int = Field(
        default=0, description="stored as failed by an earlier run: extracted again in this one"
    )
    messages_pending: int = Field(
        default=0,
        description="messages to add when the run began (new, or stored as failed): what a "
        "dry run would add; a real run tried each (messages_added + messages_failed, and any "
        "another writer stored meanwhile, in messages_skipped)",
    )
    messages_changed: int = Field(
        default=0,
        description="stored under the id their export gives them, now read with another text "
        "(edited, or a name they mention renamed): kept as stored",
    )
    dead_letters_retried: int = 0
    dead_letters_resolved: int = 0
    facts_added: int = 0
    facts_updated: int = 0
    facts_invalidated: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_modes: dict[str, int] = Field(
        default_factory=dict,
        description="messages extracted per structured-output mode (tools, json_schema, ...)",
    )
    errors: list[IngestError] = Field(default_factory=list)
    warnings: list[IngestWarning] = Field(
        default_factory=list,
        description="kept despite a fault (an unreadable time, an unknown speaker), or a "
        "duplicate left out",
    )
    dead_letter_path: str | None = None
    dry_run: bool = False
    concurrency: int = 1
    elapsed_s: float = 0.0
    extract_s: float = Field(default=0.0, description="time in extraction, summed over threads")
    write_s: float = Field(default=0.0, description="time applying (resolve + graph write)")

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def messages_per_s(self) -> float:
        """Messages added or failed per second of wall time (skipped ones are not work)."""
        done = self.messages_added + self.messages_failed
        return done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def facts_per_message(self) -> float:
        """Facts added or updated per message added: how much the extractor finds."""
        facts = self.facts_added + self.facts_updated
        return facts / self.messages_added if self.messages_added else 0.0

    @property
    def write_share(self) -> float:
        return self.write_s / self.elapsed_s if self.elapsed_s > 0 else 0.0

    def summary(self) -> dict[str, object]:
        """The report as JSON-ready data, derived rates included."""
        data = self.model_dump(mode="json")
        data |= {
            "tokens": self.tokens,
            "messages_per_s": round(self.messages_per_s, 2),
            "write_share": round(self.write_share, 3),
            "facts_per_message": round(self.facts_per_message, 3),
        }
        return data


def summary_text(report: IngestReport, max_errors: int = 20) -> str:
    """A few human lines: what was added, skipped and failed, the rates, the first errors."""
    verb = "would add" if report.dry_run else "added"
    count = report.messages_pending if report.dry_run else report.messages_added
    lines = [
        f"{_counted(report.records_read, 'message')} read from {_inputs(report)} for "
        f"{_users(report.user_ids, report.user_id)} in {report.elapsed_s:.1f} s",
        f"  {verb} {count}, already stored {report.messages_skipped}, "
        f"failed {report.messages_failed}",
    ]
    if not report.dry_run:
        lines += [
            f"  facts: {report.facts_added} added, {report.facts_updated} updated, "
            f"{report.facts_invalidated} invalidated; "
            f"{report.facts_per_message:.2f} per message added",
            f"  LLM: {report.llm_calls} calls, {report.tokens} tokens; "
            f"{report.messages_per_s:.1f} msg/s, graph writes {report.write_share:.0%} of the time",
        ]
        if report.llm_modes:
            modes = ", ".join(f"{mode} ({n})" for mode, n in sorted(report.llm_modes.items()))
            lines.append(f"  structured output: {modes}")
    if report.messages_retried:
        lines.append(
            f"  {report.messages_retried} had failed in an earlier run: "
            f"{'would be' if report.dry_run else 'were'} extracted again"
        )
    if report.messages_changed:
        lines.append(f"  {_changed(report.messages_changed)}: kept as stored")
    if report.dead_letters_retried:
        lines.append(
            f"  dead letters retried {report.dead_letters_retried}, "
            f"resolved {report.dead_letters_resolved}"
        )
    if report.messages_failed:
        lines.append(
            f"  failed messages are in {report.dead_letter_path}; "
            "rerun with --retry-failed to replay them"
        )
    lines += _listed("errors", report.errors, max_errors)
    lines += _listed("warnings (kept or skipped as said)", report.warnings, max_errors)
    return "\n".join(lines)


def _inputs(report: IngestReport) -> str:
    """What was read, as the user knows it: files, and exports by kind.

    >>> _inputs(IngestReport(formats={"a.csv": "csv", "e": "slack"}, day_files={"e": 180}))
    '1 file and 1 Slack export (180 day files)'
    """
    kinds = Counter(_EXPORTS.get(fmt, "file") for fmt in report.formats.values())
    said = [_counted(n, kind) for kind, n in kinds.items()] or ["0 files"]
    if report.day_files:
        slack = list(kinds).index(_EXPORTS["slack"])
        said[slack] += f" ({_counted(sum(report.day_files.values()), 'day file')})"
    return " and ".join([", ".join(said[:-1]), said[-1]] if len(said) > 1 else said)


def _counted(count: int, thing: str) -> str:
    return f"{count} {thing}" if count == 1 else f"{count} {thing}s"


def _changed(count: int) -> str:
    """The warning for messages an export keys by their own id read with another text than
    they were stored with.

    >>> _changed(3)
    '3 messages changed since they were stored (edited, or a name they mention renamed)'
    """
    if count == 1:
        return "1 message changed since it was stored (edited, or a name it mentions renamed)"
    return (
        f"{count} messages changed since they were stored (edited, or a name they mention renamed)"
    )


def _users(users: list[str], given: str | None, shown: int = 5) -> str:
    """Whom a run wrote for: `users`, else the user it was `given` (it read no message)."""
    if not users:
        return "no user" if given is None else f"user {given!r}"
    if len(users) == 1:
        return f"user {users[0]!r}"
    names = ", ".join(repr(u) for u in users[:shown])
    more = f" and {len(users) - shown} more" if len(users) > shown else ""
    return f"{len(users)} users: {names}{more}"


def _listed(title: str, items: Sequence[object], limit: int) -> list[str]:
    if not items:
        return []
    lines = [f"{title} ({len(items)}):", *(f"  {item}" for item in items[:limit])]
    if len(items) > limit:
        lines.append(f"  ... and {len(items) - limit} more (--json lists all)")
    return lines
