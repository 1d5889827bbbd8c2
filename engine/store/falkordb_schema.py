"""The index life cycle of one FalkorDB graph: declaring the schema, the vector indexes a
reopen builds again in the background, which labels are still warming, and a migration.

Vector indexes and reopening: FalkorDB keeps no vector index on disk; a snapshot that
declares one is rebuilt before the server answers anything (measured: 95% of a 66-second
reopen at 19k facts, ~3 minutes at 128k). So the last process to close drops this graph's
vector indexes (`drop_for_reopen`) and the adapter compacts the append-only file before
the server stops; the next `setup` declares them again and FalkorDB builds them in the
background while every other index answers. Until a label's vector index is built its vector
reads scan the user's nodes (exact, slower for a large user) and `warming()` names it; search
and stats say so. The indexes no search reads go the same way (`BUILT_AFTER_REOPEN`), as
FalkorDB builds every other index of a snapshot before it answers. After a crash the old
way applies: the snapshot still declares them and the reopen waits for the rebuild. A bulk
load or import that at least doubles the graph goes the same way (`built_after`): its writes
go without the vector indexes, declared again after it.

FalkorDB builds an index over existing nodes in batches of 10,000, each under the graph's read
lock (a few seconds each for vectors). A write takes redis's global lock, then waits for the
graph's: for the batch to end, sometimes for the rest of the build (the lock does not prefer
writers, benchmarks/results/reopen_writes.md), and every read that comes meanwhile waits too.
Declaring the next vector index is such a write (measured at 128k facts: reads waited 2.8 s,
then 5.7 s, while the Fact and Episode indexes were declared during the Entity and Fact
builds). So the indexes are declared one at a time, each once the previous one is built; a
write of the user's own during a build still waits (a minute at 60k facts on two busy cores).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol

import redis
from falkordb import Graph

from engine import cypher
from engine.cypher import Dialect
from engine.errors import ConfigError, QueryError
from engine.store.base import Dimension, Rows, dimension_of
from engine.store.falkordb_server import EmbeddedServer, single_try_client
from engine.store.fulltext import user_key

log = logging.getLogger("graphmem")
# vector statement -> label whose vector index it reads
VECTOR_LABELS = {
    "search_entity_vectors": "Entity",
    "search_fact_vectors": "Fact",
    "search_episode_vectors": "Episode",
}
_WARMING_RECHECK_S = 1.0
_POLL_S = 0.05  # between two looks: at a drop that may be lost, at a close
# A schema statement takes milliseconds, or waits its turn behind an index build. FalkorDB
# deadlocked once, every thread waiting, while declaring an index on a fresh graph: after this
# long without an answer the embedded server is asked whether it still answers at all.
SCHEMA_PATIENCE_S = 10.0
# Nodes (of every label) below which a reopen builds the vector indexes before `setup` returns
# (a few hundred milliseconds here) instead of in the background: a small graph never shows as
# warming.
BUILD_NOW = 2_000
# Candidates an insert into a vector index weighs (HNSW's efConstruction), FalkorDB's default
# said out loud: 64 loaded the 128k MetaQA KB in 208 s instead of 259 s, but its indexes found
# less (a fact read's top 30: 0.911 of the exact ones against 0.967; MetaQA 1-hop semantic
# hits@10 -0.03), benchmarks/results/load_metaqa.md.
VECTOR_EF_CONSTRUCTION = 200
DECLARE_TRIES = 3
# After a bulk write (`built_after`), the vector indexes are declared again this much later: a
# close right after it (`graphmem load`, `graphmem import`) then builds nothing it would drop,
# and is not kept waiting for a build's batch to end (3.6 s at 30k facts, 9-12 s at 128k).
AFTER_BULK_S = 2.0
# Indexes no search reads, dropped with the vector indexes before a clean stop: the fulltext
# indexes of facts and messages (for Cypher users; graphmem searches names only) and the
# change history's (its writes and `history()`). A reopen would build them before answering
# (~1 s at 128k facts); `setup` declares them again and FalkorDB builds them in the background
# (their reads scan meanwhile). Each drop statement with the label and field it drops: one
# field per statement (FalkorDB drops one, whatever the statement lists).
BUILT_AFTER_REOPEN = {
    "drop_fact_fulltext_index": ("Fact", "text"),
    "drop_episode_fulltext_index": ("Episode", "content"),
    "drop_history_user_index": ("History", "user_id"),
    "drop_history_target_index": ("History", "target_uid"),
    "drop_history_uid_index": ("History", "uid"),
}
# A drop while its label's index is still being built is lost: the build finishes with the
# field (measured: a process closing within a second of a reopen left every other snapshot
# with them). The close drops again while they are listed, this long at most.
REBUILT_PATIENCE_S = 5.0
DIALECT: Dialect = "falkordb"


def _vector_index_names() -> list[str]:
    return [n for n in cypher.schema_names(DIALECT) if vector_label(n) is not None]


def vector_label(name: str) -> str | None:
    """The label whose vector index schema statement `name` declares ("schema_05_entity_vector":
    Entity); None for any other statement (schema_14_relation_vectors is a range index)."""
    return next(
        (label for label in VECTOR_LABELS.values() if name.endswith(f"_{label.lower()}_vector")),
        None,
    )


class Runner(Protocol):
    """The adapter's `run` (looked up at each call, so a test's wrapper of it sees these)."""

    def __call__(self, name: str, params: dict[str, Any], *, read_only: bool = True) -> Rows: ...


class FalkorDBSchema:
    """Declares a graph's indexes and follows its vector indexes' builds.

    `query` runs a schema statement on the adapter's connection, `errors` translates the
    client's exceptions into graphmem's; `on_restart` is called after the watchdog restarted a
    silent embedded server (the adapter drops its old sockets)."""

    def __init__(
        self,
        run: Runner,
        query: Callable[[str, dict[str, Any]], object],
        errors: Callable[[], AbstractContextManager[None]],
        graph_name: str,
        server: EmbeddedServer | None,
        on_restart: Callable[[], None],
    ) -> None:
        self._run = run
        self._query = query
        self._errors = errors
        self._graph_name = graph_name
        self._server = server
        self._on_restart = on_restart
        self.closed = False
        self.declaring = threading.Lock()  # no vector index declared while they are dropped
        self._warming: set[str] = set(VECTOR_LABELS.values())  # until db.indexes() says
        self._checked = float("-inf")
        self._worker: threading.Thread | None = None  # declaring vector indexes after a reopen
        self.dimension: int | None = None  # of the store's vectors, once set up

    # -- which vector indexes are built ---------------------------------------------------

    def warming(self) -> list[str]:
        """Labels whose vector index is still being built, e.g. `["Entity", "Fact"]`."""
        return sorted(self.warming_now(even_when_built=True))

    def warming_now(self, even_when_built: bool = False) -> set[str]:
        """Looked up again at most once a second; by the vector reads only while some index
        is not built (they learn of a dropped one from the error the index procedure gives)."""
        recent = time.monotonic() - self._checked < _WARMING_RECHECK_S
        if recent or not (self._warming or even_when_built):
            return self._warming
        ready = {
            label
            for label, types, status in self._run("list_indexes", {})
            if status == "OPERATIONAL" and "VECTOR" in types.get("embedding", [])
        }
        self._warming = set(VECTOR_LABELS.values()) - ready
        self._checked = time.monotonic()
        return self._warming

    def dropped(self, label: str) -> None:
        """A vector read found `label`'s index gone (another process closed the store)."""
        self._warming.add(label)
        self._checked = time.monotonic()

    def vector_indexes(self) -> set[str]:
        """Labels with a declared vector index (built or being built); not one just dropped,
        which the index still in use lists while its label's other indexes are built again."""
        return {
            label
            for label, types in self._newest().items()
            if "VECTOR" in types.get("embedding", [])
        }

    def _newest(self) -> dict[str, dict[str, list[str]]]:
        """Each label's newest index, its index types by field: the one being built if any,
        else the one in use."""
        newest: dict[str, dict[str, list[str]]] = {}
        for label, types, status in self._run("list_indexes", {}):
            if label not in newest or status != "OPERATIONAL":
                newest[label] = types
        return newest

    # -- declaring ------------------------------------------------------------------------

    def setup(self, dimension: Dimension, nodes: Callable[[], int]) -> None:
        """Declare every index. A missing vector index gets the dimension recorded when the
        indexes were dropped (`drop_for_reopen`), else `dimension`'s. It is declared (after
        a reopen) in a thread when the graph holds `BUILD_NOW` `nodes()` or more: while
        FalkorDB builds one, each further schema statement waits its turn for the graph (15-30
        s each at 128k facts), and nothing here needs the index built."""
        vectors = _vector_index_names()
        for name in cypher.schema_names(DIALECT):
            if name not in vectors:
                self.declare(name)
        dropped = self._key_old_entities()
        built = self.vector_indexes() - dropped  # FalkorDB lists a dropped index for a while
        missing = [n for n in vectors if vector_label(n) not in built]
        self.dimension = self._stored_dimension()
        if not missing:
            return
        size = self.dimension = self.dimension or dimension_of(dimension)
        if nodes() < BUILD_NOW:
            self._declare_all(missing, size)  # little to build: done at once
        else:
            self._declare_in_background(missing, size)

    @contextlib.contextmanager
    def built_after(self, adding: int, nodes: Callable[[], int]) -> Iterator[None]:
        """Around a bulk write of `adding` nodes into a graph of `nodes()`: when it at least
        doubles a graph of `BUILD_NOW` nodes or more, the vector indexes are dropped for the
        write and declared again `AFTER_BULK_S` after it (built in the background, reads
        scanning meanwhile). Building an index afresh costs what inserting into it costs,
        and a close drops it anyway (benchmarks/results/load_metaqa.md). Nothing is dropped
        while indexes are still being declared (after a reopen or an earlier load)."""
        busy = self._worker is not None and self._worker.is_alive()
        if busy or adding < BUILD_NOW or adding < nodes():
            yield
            return
        with self.declaring:
            self._drop_vector_indexes()
        try:
            yield
        finally:
            recorded = self._recorded_dimension()
            if recorded and not self.closed:
                self._declare_in_background(_vector_index_names(), recorded, AFTER_BULK_S)

    def check_dimension(self, vector: list[float]) -> None:
        """Refuse a vector of another size than the store's (an embedding model changed
        since it was written): FalkorDB would store it, and every vector search after it
        would fail."""
        if self.dimension is not None and len(vector) != self.dimension:
            raise ConfigError(
                f"this store's vectors have {self.dimension} values and the embedding model's "
                f"have {len(vector)}: open it with the model that wrote it (setting "
                "`embedding_model`), or use another data dir for this model"
            )

    def _stored_dimension(self) -> int | None:
        """The size of the store's vectors: its vector indexes', else the one recorded when
        they were dropped (a close); None for a store that never declared them."""
        for _, dimension in self._run("list_vector_dimensions", {})[:1]:
            return int(dimension)
        return self._recorded_dimension()

    def _recorded_dimension(self) -> int | None:
        """The dimension recorded when the vector indexes were last dropped, if any."""
        recorded = self._run("get_vector_dimension", {})
        return int(recorded[0][0]) if recorded else None

    def _declare_in_background(self, names: list[str], dimension: int, after_s: float = 0) -> None:
        self._checked = float("-inf")
        self._worker = threading.Thread(
            target=self._declare_all, args=(names, dimension, after_s), daemon=True
        )
        self._worker.start()

    def close(self, patience_s: float) -> None:
        """Declare nothing more, and wait up to `patience_s` for a declaration in flight: its
        connection kept the embedded server from stopping (a store closed while its indexes
        were declared after a reopen left the server running)."""
        self.closed = True
        if self._worker is not None:
            self._worker.join(patience_s)

    def drop_for_reopen(self) -> None:
        """Drop the graph's vector indexes, recording their dimension for the next `setup`,
        and those `BUILT_AFTER_REOPEN` (before a compaction: see the module docstring)."""
        with self.declaring:
            self._drop_vector_indexes()
            deadline = time.monotonic() + REBUILT_PATIENCE_S
            listed = self._still_listed()
            while listed and time.monotonic() < deadline:
                for name in listed:
                    self._drop(name)
                listed = self._still_listed()
                if listed:  # lost: dropped during a build; again once it is done
                    time.sleep(_POLL_S)

    def _drop_vector_indexes(self) -> None:
        """Drop them, recording their dimension for whoever declares them again."""
        for _, dimension in self._run("list_vector_dimensions", {})[:1]:
            self._run("set_vector_dimension", {"dimension": dimension}, read_only=False)
        for label in VECTOR_LABELS.values():
            self._drop(f"drop_{label.lower()}_vector_index")
        self._warming = set(VECTOR_LABELS.values())

    def _drop(self, name: str) -> None:
        with contextlib.suppress(QueryError):  # not declared (a store never set up)
            self._run(name, {}, read_only=False)

    def _still_listed(self) -> list[str]:
        """The drops of `BUILT_AFTER_REOPEN` whose field its label's newest index lists
        (after a drop it is built without the field, while the one in use still lists it)."""
        listed = {(label, field) for label, types in self._newest().items() for field in types}
        return [name for name, field in BUILT_AFTER_REOPEN.items() if field in listed]

    def _key_old_entities(self) -> set[str]:
        """Entities written before entities carried their user's key get it, once: the name
        search asks the fulltext index for the user's key (`fulltext.py`). Setting a property
        inserts the node into its label's vector index again, beside its old entry (FalkorDB
        PR #2197): 120,000 entities lost 0.09 of their recall@10. So that index is dropped
        first, and `setup` builds it again (in the background, reads scanning meanwhile).
        Returns the labels whose vector index it dropped."""
        users = self._run("list_users_without_user_key", {})
        if users:
            with contextlib.suppress(QueryError):  # not declared
                self._run("drop_entity_vector_index", {}, read_only=False)
        for (user_id,) in users:
            params = {"user_id": user_id, "user_key": user_key(user_id)}
            self._run("set_entity_user_keys", params, read_only=False)
        return {"Entity"} if users else set()

    def declare(self, name: str, dimension: int | None = None) -> None:
        """Run schema statement `name` (`dimension`: a vector index's); "already indexed" is
        the expected answer on every run after the first."""
        statement = cypher.load(name, DIALECT)
        vector = {"dimension": dimension, "ef_construction": VECTOR_EF_CONSTRUCTION}
        params = {} if dimension is None else vector
        with contextlib.suppress(QueryError), self._errors():
            if self._server is None or not self._answered_in_time(statement, params):
                self._query(statement, params)

    def _answered_in_time(self, statement: str, params: dict[str, Any]) -> bool:
        """Run a schema statement on the embedded server with `SCHEMA_PATIENCE_S`; past it,
        a server that no longer answers anything is restarted. False: run it again, waiting."""
        assert self._server is not None
        watched = single_try_client(self._server.socket_path, SCHEMA_PATIENCE_S)
        try:
            Graph(watched, self._graph_name).query(statement, params)
            return True
        except redis.TimeoutError:
            if not self._server.answers():
                self._server.restart()
                self._on_restart()
            return False
        finally:
            watched.close()

    def _declare_all(self, names: list[str], dimension: int, after_s: float = 0) -> None:
        """Declare each vector index once the one before it is built (see the module
        docstring: a declaration during a build makes every read wait for a batch), the
        first after `after_s` seconds unless the store closes first."""
        deadline = time.monotonic() + after_s
        while not self.closed and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        for name in names:
            if not self._declare_built(name, dimension):
                return

    def _declare_built(self, name: str, dimension: int) -> bool:
        """Declare `name` and wait for its build, `DECLARE_TRIES` times at most: a server
        busy past the schema's patience fails a declaration that the next one makes. False:
        closed, or it kept failing (the next setup declares it again; meanwhile its label's
        vector reads scan)."""
        for attempt in range(DECLARE_TRIES):
            if attempt:
                time.sleep(_WARMING_RECHECK_S)
            try:
                with self.declaring:
                    if self.closed:
                        return False
                    self.declare(name, dimension)
                self._wait_built(name)
                return not self.closed
            except Exception as exc:  # best effort, often in a thread
                log.debug("graphmem: vector index %s not declared: %s", name, exc)
        return False

    def _wait_built(self, name: str) -> None:
        label = vector_label(name)
        pause = 0.01  # an index on an empty graph is built at once; a large one takes minutes
        while not self.closed:
            self._checked = float("-inf")
            if label not in self.warming_now(even_when_built=True):
                return
            time.sleep(pause)
            pause = min(2 * pause, _WARMING_RECHECK_S)
