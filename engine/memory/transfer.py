"""Moving one user's graph out of and into a store: `Memory.export` and `Memory.import_`."""

from __future__ import annotations

from engine.cypher import Dialect
from engine.errors import InvalidInputError
from engine.memory.core import MemoryCore
from engine.transfer.document import Source, target_user
from engine.transfer.export import EXPORT_FORMATS, Format, read_snapshot, render
from engine.transfer.import_limits import ImportLimits
from engine.transfer.progress import ImportProgressFn
from engine.transfer.restore import ImportReport, import_snapshot, parse_snapshot


class MemoryTransfer(MemoryCore):
    """Export and import, as `Memory` offers them."""

    def export(
        self,
        user_id: str,
        format: Format = "json",
        *,
        dialect: Dialect = "neo4j",
        embeddings: bool = False,
    ) -> str:
        """One user's whole graph as text: "json" (lossless, for `import_`), "cypher" (a script
        for Neo4j Browser or cypher-shell; `dialect`, and vectors only with `embeddings`) or
        "graphml" (entities and facts, for graph tools).

        Example:
            >>> Path("alice.json").write_text(mem.export("alice"))  # doctest: +SKIP

        Raises:
            InvalidInputError: an unknown format, or a value with no Cypher literal.
        """
        if format not in EXPORT_FORMATS:
            raise InvalidInputError(
                f"format must be one of {', '.join(EXPORT_FORMATS)}; got {format!r}"
            )
        user_id = self._held_user(user_id)
        self._setup()
        snapshot = read_snapshot(self.store, user_id)
        return render(snapshot, format, dialect=dialect, embeddings=embeddings)

    def import_(
        self,
        source: Source,
        user_id: str | None = None,
        *,
        users_from_file: bool = False,
        progress: ImportProgressFn | None = None,
    ) -> ImportReport:
        """Write a JSON export back for `user_id` (required: the file does not choose, unless
        an admin restoring a backup says `users_from_file=True`). Every uid is derived again
        for the target; idempotent; live counters are never lowered. `source` is the document
        (`str`, `bytes`, parsed) or, only as a `pathlib.Path`, a file: a `str` is never a path.
        The limits of `add_facts` and `add` apply before anything is written. `progress` is
        told each step: texts embedded, then records written (`ImportProgress`).

        Raises:
            InvalidInputError: no `user_id` (nor `users_from_file`), unreadable, not a
                graphmem JSON export, an unusable user id, or a record that breaks the
                limits (`LimitExceededError` when over one).
        """
        target = target_user(user_id, users_from_file)
        limits = ImportLimits.from_settings(self.settings, self.embedder.dimension)
        snapshot = parse_snapshot(source, limits)
        self._setup(vectors=True)
        target = target or snapshot.user_id
        report = import_snapshot(
            self.store, snapshot, target, self.embedder, limits, progress=progress
        )
        self.retriever.forget(report.user_id)
        return report
