"""What an import accepts: a JSON export is input like any other, so it meets the limits and
the checks `add_facts` and `add` apply, before anything is written.

- the document: at most `max_import_bytes`, at most `max_import_records` records in all;
  unset, both are sized to the memory this machine has available (`machine_limits`), within
  2 GiB and 2,000,000 records;
- names (entities, aliases) and keys: `clean_text` within `max_name_chars`, as `add_facts`;
  fact sentences within `max_text_chars`, messages within `max_message_chars`; every other
  text (uids, checksums, metadata, details) has a bound too;
- vectors: the embedding model's dimension (or one dimension for the whole file).

A value `add_facts` would clean (spacing, control characters, NFKC) is cleaned the same way;
one it would refuse is refused with `InvalidInputError` naming the record and the field.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel

from engine.config import Settings
from engine.errors import InvalidInputError, LimitExceededError
from engine.normalize import check_length, clean_text, entity_key, is_type_label
from engine.transfer.snapshot import (
    EntityRecord,
    EpisodeRecord,
    FactRecord,
    GraphSnapshot,
    HistoryRecord,
)

MAX_UID_CHARS = 256
MAX_DIMENSION = 4096
EVENTS = frozenset({"ADD", "UPDATE", "INVALIDATE", "DELETE", "MERGE"})
R = TypeVar("R", bound=BaseModel)

CEILING_BYTES = 2 * 1024**3
CEILING_RECORDS = 2_000_000
FLOOR_BYTES = 1024**2
FLOOR_RECORDS = 1_000
# Measured: parsing, checking and re-keying an export hold ~23 bytes of memory per byte of a
# document without vectors (~5 with them); a record the import embeds holds ~8 KiB with its
# copies. Twice that leaves room for the process itself.
MEMORY_PER_DOCUMENT_BYTE = 48
MEMORY_PER_RECORD = 16 * 1024


def available_memory() -> int | None:
    """Bytes of memory still available here (MemAvailable, within a cgroup's limit), or None
    when the system does not say."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) * 1024)
    except (OSError, ValueError, IndexError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = Path("/sys/fs/cgroup/memory.current").read_text().strip()
        if limit != "max":
            found.append(max(0, int(limit) - int(used)))
    except (OSError, ValueError):
        pass
    if not found:
        try:
            found.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (OSError, ValueError, AttributeError):
            return None
    return min(found)


def machine_limits(available: int | None = None) -> tuple[int, int]:
    """(max bytes, max records) of an import this machine can hold in memory."""
    available = available_memory() if available is None else available
    if available is None:
        return CEILING_BYTES, CEILING_RECORDS
    size = min(CEILING_BYTES, max(FLOOR_BYTES, available // MEMORY_PER_DOCUMENT_BYTE))
    records = min(CEILING_RECORDS, max(FLOOR_RECORDS, available // MEMORY_PER_RECORD))
    return size, records


@dataclass(frozen=True, slots=True)
class ImportLimits:
    max_bytes: int
    max_records: int
    max_name_chars: int
    max_text_chars: int
    max_message_chars: int
    dimension: int | None = None  # the embedding model's; None: whatever the file holds

    @classmethod
    def from_settings(cls, settings: Settings, dimension: int | None = None) -> ImportLimits:
        """The settings' limits; an unset size or record count is sized to the machine."""
        size, records = settings.max_import_bytes, settings.max_import_records
        if size is None or records is None:
            fit = machine_limits()
            size, records = size or fit[0], records or fit[1]
        return cls(
            size,
            records,
            settings.max_name_chars,
            settings.max_text_chars,
            settings.max_message_chars,
            dimension,
        )

    def check_size(self, size: int, what: str, *, at_least: bool = False) -> None:
        """Raises LimitExceededError when `size` (a lower bound with `at_least`) is over."""
        if size > self.max_bytes:
            more = "more than " if at_least else ""
            raise LimitExceededError(
                f"{what} has {more}{self.max_bytes if at_least else size} bytes; the limit is "
                f"{self.max_bytes} (max_import_bytes)"
            )


def checked(snapshot: GraphSnapshot, limits: ImportLimits) -> GraphSnapshot:
    """`snapshot` with its texts cleaned as `add_facts` cleans them.

    Raises:
        LimitExceededError: too many records, or a value over its limit.
        InvalidInputError: a blank name or text, an unknown event, a vector of another size.
    """
    parts = (snapshot.entities, snapshot.facts, snapshot.episodes, snapshot.history)
    total = sum(len(part) for part in parts)
    if total > limits.max_records:
        raise LimitExceededError(
            f"the export has {total} records; the limit is {limits.max_records} "
            "(max_import_records)"
        )
    rules = _Rules(limits, _dimension(snapshot, limits))
    entities = _each(snapshot.entities, "entity", rules.entity)
    if len({e.key for e in entities}) != len(entities):
        raise InvalidInputError("two entities of the export have the same name key once cleaned")
    return snapshot.model_copy(
        update={
            "entities": entities,
            "facts": _each(snapshot.facts, "fact", rules.fact),
            "episodes": _each(snapshot.episodes, "episode", rules.episode),
            "history": _each(snapshot.history, "history event", rules.event),
        }
    )


def _each(records: list[R], kind: str, check: Callable[[R], R]) -> list[R]:
    out = []
    for index, record in enumerate(records):
        try:
            out.append(check(record))
        except InvalidInputError as exc:
            uid = str(getattr(record, "uid", ""))[:40]
            raise type(exc)(f"{kind} #{index} ({uid!r}): {exc}") from exc
    return out


def _dimension(snapshot: GraphSnapshot, limits: ImportLimits) -> int | None:
    if limits.dimension is not None:
        return limits.dimension
    records: list[EntityRecord | FactRecord] = [*snapshot.entities, *snapshot.facts]
    vectors = [r.embedding for r in records if r.embedding]
    return len(vectors[0]) if vectors else None


class _Rules:
    def __init__(self, limits: ImportLimits, dimension: int | None) -> None:
        self.limits, self.dimension = limits, dimension

    def _name(self, value: str, what: str) -> str:
        return clean_text(value, what, self.limits.max_name_chars)

    def _bounded(self, value: str | None, what: str, limit: int | None = None) -> None:
        if value is not None:
            check_length(value, what, limit or self.limits.max_message_chars)

    def _uids(self, *values: str | None) -> None:
        for value in values:
            if value is not None and not 0 < len(value) <= MAX_UID_CHARS:
                raise LimitExceededError(f"a uid has {len(value)} characters (1 to 256 allowed)")

    def _vector(self, vector: Sequence[float] | None) -> None:
        if not vector:
            return
        if len(vector) != self.dimension or len(vector) > MAX_DIMENSION:
            raise InvalidInputError(
                f"embedding has {len(vector)} values; this store's vectors have {self.dimension}"
            )

    def entity(self, e: EntityRecord) -> EntityRecord:
        self._uids(e.uid)
        self._vector(e.embedding)
        if e.type is not None and not is_type_label(e.type):
            raise InvalidInputError(f"type {e.type[:80]!r} is not a PascalCase label")
        return e.model_copy(
            update={
                "name": self._name(e.name, "name"),
                "key": entity_key(self._name(e.key, "key")),
                "aliases": [self._name(a, "alias") for a in e.aliases],
                "alias_keys": [entity_key(self._name(k, "alias key")) for k in e.alias_keys],
            }
        )

    def fact(self, f: FactRecord) -> FactRecord:
        self._uids(f.uid, f.subject_uid, f.object_uid, *f.episodes)
        self._vector(f.embedding)
        return f.model_copy(
            update={"text": clean_text(f.text, "fact text", self.limits.max_text_chars)}
        )

    def episode(self, p: EpisodeRecord) -> EpisodeRecord:
        self._uids(p.uid, *p.entity_uids)
        self._bounded(p.checksum, "checksum", MAX_UID_CHARS)
        self._bounded(p.status, "status", 32)
        self._bounded(p.metadata, "metadata")
        self._bounded(p.error, "error")
        return p.model_copy(
            update={
                "content": clean_text(p.content, "message content", self.limits.max_message_chars),
                "role": clean_text(p.role, "message role", 32).casefold(),
                "session_id": _optional(p.session_id, "session_id"),
                "source": _optional(p.source, "source"),
                "speaker": None if p.speaker is None else self._name(p.speaker, "speaker"),
            }
        )

    def event(self, h: HistoryRecord) -> HistoryRecord:
        self._uids(h.uid, h.target_uid, h.episode_uid)
        if h.event not in EVENTS:
            raise InvalidInputError(f"event {h.event[:40]!r} is not one of {sorted(EVENTS)}")
        self._bounded(h.detail, "detail")
        return h


def _optional(value: str | None, what: str) -> str | None:
    return None if value is None else clean_text(value, what, 256)
