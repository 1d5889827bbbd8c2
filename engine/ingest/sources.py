"""What `Memory.ingest` accepts, turned into records ready to schedule.

Inputs: a path (a file, or a directory: `engine.ingest.folders`), or an iterable of paths,
`ChatRecord`s and dicts (validated as `ChatRecord`s).
Every path is checked (exists, format known) before anything is read, so a typo fails fast;
records that cannot be used become `IngestError`s and the rest still ingest.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.errors import InvalidInputError
from engine.ingest.archives import Archives
from engine.ingest.chat_records import ChatRecord, ReadError, ReadWarning
from engine.ingest.fields import Item, StrPath
from engine.ingest.folders import chat_logs
from engine.ingest.json_doc import Told
from engine.ingest.pieces import pieces
from engine.ingest.readers import read_told, told_format
from engine.ingest.report import IngestError, IngestWarning
from engine.ingest.slack_export import day_files
from engine.normalize import check_user_id

IngestInput = StrPath | Iterable[StrPath | ChatRecord | Mapping[str, Any]]
#: The checksums a record's episode may be stored under for a user, the current one first
#: (`engine.add.messages.record_checksums`); raises `InvalidInputError` for a record that
#: cannot be added.
KeyFn = Callable[[ChatRecord, str], tuple[str, ...]]
#: Told how reading goes: the file being read and the messages read so far (None once every
#: input is read).
ReadFn = Callable[[str | None, int], None]
IN_MEMORY = "<iterable>"
READ_EVERY = 1000  # messages read between two `ReadFn` calls within a file


@dataclass(frozen=True, slots=True)
class Job:
    """One message to add: the record, its user, where it came from; `retry` for a dead
    letter replayed (its episode may be stored with status "failed").

    `checksum` is what its episode is stored under; `aliases` are the other checksums it may
    be stored under already (a timed record's older checksum, which held its file position;
    the one a dead letter was filed under): a job found stored under one takes it.
    """

    record: ChatRecord
    user_id: str
    path: str
    checksum: str
    retry: bool = False
    aliases: tuple[str, ...] = ()

    @classmethod
    def of(cls, record: ChatRecord, user: str, path: str, keys: tuple[str, ...]) -> Job:
        """The job of `record` under `keys` (`KeyFn`): the first its checksum, the rest
        aliases."""
        return cls(record, user, path, keys[0], aliases=tuple(dict.fromkeys(keys[1:])))

    @property
    def keys(self) -> tuple[str, ...]:
        """Every checksum this message may be stored under, `checksum` first."""
        return (self.checksum, *(key for key in self.aliases if key != self.checksum))

    def as_stored(self, stored: Collection[str]) -> Job:
        """This job under the first of its keys found in `stored` (itself when none is)."""
        found = next((key for key in self.keys if key in stored), self.checksum)
        if found == self.checksum:
            return self
        return replace(self, checksum=found, aliases=self.keys)


@dataclass(slots=True)
class Collected:
    jobs: list[Job] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    warnings: list[IngestWarning] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    formats: dict[str, str] = field(default_factory=dict)
    day_files: dict[str, int] = field(default_factory=dict)  # a Slack export's
    split_at: int | None = None  # a longer message is split (`engine.ingest.pieces`)


def check_user_choice(user_id: str | None, users_from_file: bool, has_inputs: bool) -> None:
    """The input never picks the user it is written for unless the caller says so.

    Raises:
        InvalidInputError: there is something to read, and neither a user nor the opt-in to
            the input's own user column was given (or both were).
    """
    if user_id is not None and users_from_file:
        raise InvalidInputError(
            "give either user_id= (--user) or users_from_file=True (--users-from-file), not both"
        )
    if user_id is None and not users_from_file and has_inputs:
        raise InvalidInputError(
            "say whose memory the messages go to: user_id= (--user NAME) adds every message "
            "for that user; users_from_file=True (--users-from-file) takes each message's user "
            "from the input (a JSONL user_id or user field, a CSV user column, a LoCoMo sample_id)"
        )


def collect(
    inputs: IngestInput,
    format: str,
    user_id: str | None,
    key: KeyFn,
    *,
    users_from_file: bool = False,
    delimiter: str | None = None,
    split_at: int | None = None,
    on_read: ReadFn | None = None,
) -> Collected:
    """Read every input into jobs and errors, in input order; `on_read` is told as each file
    starts, every `READ_EVERY` messages within it, and once when all are read.

    Raises:
        InvalidInputError: a path is missing or not a file, `format` is unknown, the format
            of a path cannot be told, or no user was chosen (`check_user_choice`).
    """
    items: list[Any] = [inputs] if isinstance(inputs, str | os.PathLike) else list(inputs)
    check_user_choice(user_id, users_from_file, bool(items))
    out = Collected(split_at=split_at)
    with Archives() as archives:
        logs = {  # every path checked before any is read
            index: _logs(archives.opened(os.fspath(item)), format, out)
            for index, item in enumerate(items)
            if isinstance(item, str | os.PathLike)
        }
        for index, item in enumerate(items, start=1):
            if index - 1 in logs:
                named = logs.pop(index - 1)  # a document detection parsed goes once read
                for path in list(named):
                    read = read_told(path, named.pop(path), user_id, delimiter)
                    _read(archives.shown(path), _shown(read, archives), key, out, on_read)
            else:
                _take(_record(item, index, user_id), IN_MEMORY, key, out)
        out.formats = {archives.shown(path): fmt for path, fmt in out.formats.items()}
        out.day_files = {archives.shown(path): n for path, n in out.day_files.items()}
        out.warnings = [w.model_copy(update={"path": archives.shown(w.path)}) for w in out.warnings]
    out.files = list(out.formats)
    if on_read is not None:
        on_read(None, len(out.jobs))
    return out


def _read(
    path: str, items: Iterable[Item], key: KeyFn, out: Collected, on_read: ReadFn | None
) -> None:
    """Take every item of one file, telling `on_read` as it starts and as it goes."""
    tell = on_read or _untold
    told = len(out.jobs)
    tell(path, told)
    for item in items:
        _take(item, path, key, out)
        if len(out.jobs) - told >= READ_EVERY:
            told = len(out.jobs)
            tell(path, told)


def _shown(items: Iterable[Item], archives: Archives) -> Iterator[Item]:
    """`items` with the paths they name as the caller knows them (an archive's, not the
    folder it was unpacked to)."""
    for item in items:
        if isinstance(item, ChatRecord) or archives.shown(item.path) == item.path:
            yield item
        else:
            yield item.model_copy(update={"path": archives.shown(item.path)})


def _untold(path: str | None, read: int) -> None:
    pass


def _logs(path: str, format: str, out: Collected) -> dict[str, Told]:
    """The chat logs `path` names (itself, or those under a directory), with their formats;
    a file named itself with the document its detection parsed (a directory's files are
    parsed again when read, so that their documents are not all held at once)."""
    if os.path.isdir(path):
        found, skipped = chat_logs(path, format)
        logs = {log: Told(fmt) for log, fmt in found.items()}
        out.warnings += skipped
    else:
        logs = {path: told_format(path, format)}
    out.formats |= {log: told.format for log, told in logs.items()}
    out.day_files |= {log: day_files(Path(log)) for log in logs if logs[log].format == "slack"}
    return logs


def _record(item: object, index: int, user_id: str | None) -> ChatRecord | ReadError:
    where = f"record {index}"
    if isinstance(item, ChatRecord):
        record = item
    elif isinstance(item, Mapping):
        data = dict(item)
        if "source" not in data:  # its place in the iterable, which is no id of its own
            data |= {"source": f"{IN_MEMORY}:{index}", "positional": True}
        if "ts" not in data and "timestamp" in data:  # the name the file formats use
            data["ts"] = data.pop("timestamp")
        try:
            record = ChatRecord.model_validate(data)
        except ValidationError as exc:
            return ReadError(path=IN_MEMORY, location=where, reason=_brief(exc))
    else:
        reason = f"expected a path, a ChatRecord or a dict, got {type(item).__name__}"
        return ReadError(path=IN_MEMORY, location=where, reason=reason)
    return record.model_copy(update={"user_id": user_id}) if user_id else record


def _take(item: Item, path: str, key: KeyFn, out: Collected) -> None:
    if isinstance(item, ReadWarning):
        out.warnings.append(
            IngestWarning(path=item.path, location=item.location, reason=item.reason)
        )
        return
    if isinstance(item, ReadError):
        out.errors.append(
            IngestError(path=item.path, location=item.location, reason=item.reason, stage="read")
        )
        return
    split = pieces(item, out.split_at)
    if len(split) > 1:
        reason = (
            f"{len(item.content)} characters, over the {out.split_at} a message may have: "
            f"split into {len(split)} messages"
        )
        out.warnings.append(IngestWarning(path=path, location=item.source, reason=reason))
    for piece in split:
        try:
            if piece.user_id is None:
                raise InvalidInputError("the record names no user; pass user_id= (--user)")
            user = check_user_id(piece.user_id)
            keys = key(piece, user)
        except InvalidInputError as exc:
            error = IngestError(path=path, location=piece.source, reason=str(exc), stage="read")
            out.errors.append(error)
            continue
        out.jobs.append(Job.of(piece, user, path, keys))


def _brief(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in e['loc'])}: {e['msg'].removeprefix('Value error, ')}"
        for e in exc.errors(include_url=False)
    )


def plan(jobs: list[Job]) -> tuple[dict[str, list[Job]], list[tuple[Job, Job]]]:
    """Jobs per user in timestamp order (`in_order`), duplicates dropped.

    Returns the lanes and each duplicate dropped (a checksum in common: `Job.keys`) with the
    job it repeats.
    """
    lanes: dict[str, list[Job]] = {}
    first: dict[str, Job] = {}
    duplicates: list[tuple[Job, Job]] = []
    for job in jobs:
        twin = next((first[key] for key in job.keys if key in first), None)
        if twin is not None:
            duplicates.append((job, twin))
            continue
        first |= dict.fromkeys(job.keys, job)
        lanes.setdefault(job.user_id, []).append(job)
    return {user: in_order(lane) for user, lane in lanes.items()}, duplicates


def duplicate(job: Job, twin: Job) -> IngestWarning:
    """The warning for `job`, left out by `plan` as a repeat of `twin`."""
    reason = f"the same message as {twin.path}: {twin.record.source} (same checksum): skipped"
    return IngestWarning(path=job.path, location=job.record.source, reason=reason)


def in_order(lane: list[Job]) -> list[Job]:
    """Timestamp order, ties in input order. An undated job keeps its place in its own file:
    it sorts with the dated job before it there (or, with none, the one after it), so a
    message whose time could not be read stays between its neighbours; the jobs of a file
    with no times at all go last."""
    keys: list[float | None] = [_ts(job) for job in lane]
    for order in (range(len(lane)), reversed(range(len(lane)))):
        near: dict[str, float] = {}
        for i in order:
            ts = _ts(lane[i])
            if ts is not None:
                near[lane[i].path] = ts
            elif keys[i] is None:
                keys[i] = near.get(lane[i].path)
    last = float("inf")
    ranks = [key if key is not None else last for key in keys]
    return [lane[i] for i in sorted(range(len(lane)), key=ranks.__getitem__)]


def _ts(job: Job) -> float | None:
    return job.record.ts.timestamp() if job.record.ts is not None else None


def interleave(lanes: dict[str, list[Job]]) -> list[tuple[int, Job]]:
    """Round-robin over users, each user's jobs in order: `(index in its lane, job)`."""
    order: list[tuple[int, Job]] = []
    longest = max((len(lane) for lane in lanes.values()), default=0)
    for index in range(longest):
        order += [(index, lane[index]) for lane in lanes.values() if index < len(lane)]
    return order
