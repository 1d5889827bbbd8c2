"""How far an import has got, for a progress display: texts embedded, then records written.

Example:
    >>> mem.import_(Path("alice.json"), "alice", progress=print)  # doctest: +SKIP
    ImportProgress(phase='vectors', done=1000, total=4200)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.embedding import Embedder

EMBED_CHUNK = 1000  # texts embedded between two reports


@dataclass(frozen=True, slots=True)
class ImportProgress:
    """`done` of `total` in `phase`: "vectors" (messages, and entities and facts exported
    without a vector, embedded) or "records" (entities, facts, messages and history events
    written)."""

    phase: str
    done: int
    total: int


ImportProgressFn = Callable[[ImportProgress], None]


class Phase:
    """Counts one phase's work and reports each step to `report` (None: to no one), and its
    start (0 done): a display times the phase from there."""

    def __init__(self, report: ImportProgressFn | None, name: str, total: int) -> None:
        self.report, self.name, self.total, self.done = report, name, total, 0
        if report is not None and total:
            report(ImportProgress(name, 0, total))

    def advance(self, count: int) -> None:
        self.done += count
        if self.report is not None and count:
            self.report(ImportProgress(self.name, self.done, self.total))


def encode_counted(embedder: Embedder, texts: list[str], phase: Phase | None) -> list[Any]:
    """The vectors of `texts`, `EMBED_CHUNK` at a time, each part counted in `phase`."""
    vectors: list[Any] = []
    for start in range(0, len(texts), EMBED_CHUNK):
        part = texts[start : start + EMBED_CHUNK]
        vectors.extend(embedder.encode(part))
        if phase is not None:
            phase.advance(len(part))
    return vectors
