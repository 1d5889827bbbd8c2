"""`MemoryCore`: what every `Memory` method stands on (its parts, setup, stats, lifecycle)."""

from __future__ import annotations

import threading
import weakref
from types import TracebackType
from typing import Any, Self

from engine.add.adder import Adder
from engine.components import build_embedder, build_extractor, open_store, prepare_store
from engine.config import Settings, build_settings
from engine.embedding import Embedder
from engine.errors import ClosedError, InvalidInputError
from engine.extraction.schema import Extractor
from engine.long_lived import freeze_long_lived
from engine.memory.model_probe import check_model
from engine.models import Stats
from engine.normalize import check_user_id
from engine.retrieval.background import BACKGROUND
from engine.retrieval.retriever import DualRetriever
from engine.retrieval.tuning import Tuning
from engine.store.base import GraphStore
from engine.store.reads import Reads
from engine.uids import self_uid


class MemoryCore:
    """The parts of a `Memory` and their lifecycle; `engine.memory.Memory` adds the verbs.

    A `Memory` owns what it starts: `close()` (or the end of a `with` block) stops the
    model's threads and process and, when no other client uses it, the embedded server. One
    left open is closed the same way when it is garbage or the interpreter exits.

    Args:
        settings: the settings (default: from the environment and `overrides`).
        store: a store to use instead of the one the settings name (then not closed by
            `close`: its owner closes it), or the name of the backend to open ("falkordb",
            "neo4j"), as `GRAPHMEM_STORE` names it.
        embedder: an embedder to use (then not closed by `close`).
        extractor: an extractor to use (then not closed by `close`).

    Raises:
        InvalidInputError: `settings` and keyword settings given together.
        ConfigError: keyword settings graphmem cannot use.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: GraphStore | str | None = None,
        embedder: Embedder | None = None,
        extractor: Extractor | None = None,
        **overrides: Any,
    ) -> None:
        if isinstance(store, str):  # a backend's name is a setting, not a store
            overrides["store"], store = store, None
        if settings is not None and overrides:
            raise InvalidInputError(
                f"settings and {', '.join(sorted(overrides))} given together: the keywords would "
                "be ignored; put them in the settings (build_settings(...)) or give keywords only"
            )
        self.settings = settings or build_settings(**overrides)
        self.embedder = embedder or build_embedder(self.settings)
        self._owns_embedder = embedder is None
        if store is None:
            prepare_store(self.settings)  # a data dir it cannot use fails before the load
        # while the store opens (a reopen: seconds); a passed embedder not loaded yet too, so
        # its first searches do not pay for compiling the model (a no-op once it is loaded)
        if self.settings.embedding_preload:
            self.embedder.load_in_background()
        BACKGROUND.hold()  # the search threads, stopped when the last Memory closes
        try:
            self.store = store or open_store(self.settings)
        except BaseException:
            _release(self.embedder, self._owns_embedder, None)
            raise
        self._closed = False
        # closed or left open, it closes what it opened; a store it was given stays its
        # owner's (a test's or an app's shared store must not be closed under its other users)
        self._finalizer = weakref.finalize(
            self,
            _release_collected,
            self.embedder,
            self._owns_embedder,
            self.store if store is None else None,
        )
        self.reads = Reads(self.store)
        self.retriever = self._retriever()
        self._ready = False
        self._setup_lock = threading.Lock()
        self._model_lock = threading.Lock()  # apart: a read that embeds nothing never waits
        self._model_checked = False
        self._extractor = extractor
        self._owns_extractor = extractor is None
        # its usage is the LLM accounting of this Memory object, this process only (not stored)
        self._adder = Adder(
            self.store, self.embedder, self.retriever, lambda: self.extractor, self.settings
        )

    def _retriever(self) -> DualRetriever:
        tuning, max_words = Tuning.of(self.settings), self.settings.max_query_words
        blas = self.settings.search_blas_threads
        return DualRetriever(self.reads, self.embedder, tuning, max_words, blas)

    @property
    def extractor(self) -> Extractor:
        """The extractor `add` uses: the one passed in, else built on first use from the
        settings (see `build_extractor`)."""
        with self._setup_lock:
            if self._extractor is None:
                self._extractor = build_extractor(self.settings)
            return self._extractor

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Self:
        """Build from a dict of settings (names as in `engine.config.Settings`)."""
        return cls(**config)

    def _setup(self, vectors: bool = False) -> None:
        """Make the store ready; with `vectors`, for a call that embeds (writes vectors or
        compares its own with the store's): the store's model checked first (`check_model`)."""
        if self._closed:
            raise ClosedError("this Memory is closed: open a new one (Memory(...))")
        with self._setup_lock:
            if not self._ready:
                self.store.setup(lambda: self.embedder.dimension)
                self._ready = True
                if self.settings.freeze_gc:
                    freeze_long_lived("setup")
        if vectors and not self._model_checked:
            with self._model_lock:
                if not self._model_checked:
                    check_model(self.store, self.embedder, self._holds_memory)
                    self._model_checked = True

    def _holds_memory(self, user_id: str | None = None) -> bool:
        """The store (or one user) holds an entity, a fact or a message."""
        self._setup()
        counts = self.reads.counts(user_id)
        return any(counts[kind] for kind in ("entities", "facts", "episodes"))

    def _held_user(self, user_id: object) -> str:
        """`check_user_id` for a call that reads or deletes: an id holding an invisible
        format character is taken when the store holds it (an older version stored it),
        so that its owner can still read, export and delete what it holds."""
        return check_user_id(user_id, held=self._holds_memory)

    @staticmethod
    def self_uid(user_id: str) -> str:
        """The uid of the entity standing for the user ("I", "me", "my")."""
        return self_uid(user_id)

    def stats(self, user_id: str | None = None) -> Stats:
        """Counts of the stored graph, plus the LLM calls and tokens this `Memory` object has
        spent in this process (all users; not persisted)."""
        self._setup()
        counts = self.reads.counts(self._held_user(user_id) if user_id is not None else None)
        usage = self._adder.usage.snapshot()
        return Stats(**counts, **usage, warming=self.store.warming())

    def reset(self) -> None:
        """Delete every user's memory."""
        self._setup()
        self.store.reset()
        self.retriever = self._retriever()
        self._adder.retriever = self.retriever

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Release what this `Memory` started: the model's threads and process (when it
        built the embedder), the LLM client, and the store it opened (its connection and,
        when no other client uses it, the embedded server). A store passed in stays open
        for its owner, once this `Memory`'s background reads and writes on it have ended.
        Calling it again does nothing; any other method then raises `ClosedError`."""
        if self._closed:
            return
        self._closed = True
        close = getattr(self._extractor, "close", None)
        if self._owns_extractor and callable(close):
            close()
        left = self._finalizer.detach()
        if left is not None:
            _release(*left[2])

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _release_collected(embedder: Embedder, owned: bool, store: GraphStore | None) -> None:
    """`_release` for a `Memory` left open. A collection runs in whichever thread allocates,
    holding whatever locks it holds (the search pool's while it starts a thread): release in
    a thread of its own, unless the interpreter is exiting (its main thread is done)."""
    if not threading.main_thread().is_alive():
        _release(embedder, owned, store)
        return
    args = (embedder, owned, store)
    threading.Thread(target=_release, args=args, name="graphmem-release").start()


def _release(embedder: Embedder, owned: bool, store: GraphStore | None) -> None:
    """What `close` does to the embedder and the store; also run for a `Memory` left open
    when it is garbage or at interpreter exit (it must not hold the `Memory` itself)."""
    BACKGROUND.drain()  # the reads and writes in flight end before the store closes
    BACKGROUND.release()
    if owned:
        embedder.close()
    else:
        embedder.wait_loaded()  # its background load was started here
    if store is not None:
        store.close()
