"""The `GraphStore` port on FalkorDB (the embedded default), through the official client.

A batch is written as ONE composed query (`cypher.compose`): FalkorDB runs a query atomically
and its append-only file records it as one command, so a crash never leaves half a batch.
(Redis MULTI/EXEC is not an option: FalkorDB 4.x asserts on GRAPH.QUERY inside EXEC.)

Vector indexes and reopening: FalkorDB keeps no vector index on disk; a snapshot that
declares one is rebuilt before the server answers anything (measured: 95% of a 66-second
reopen at 19k facts, ~3 minutes at 128k). So the last process to close drops this graph's
vector indexes and compacts the append-only file before the server stops (`close`); the next
`setup` declares them again and FalkorDB builds them in the background while every other
index answers. Until a label's vector index is built its vector reads scan the user's nodes
(exact, slower for a large user) and `warming()` names it; search and stats say so. After a
crash the old way applies: the snapshot still declares them and the reopen waits for the
rebuild.

FalkorDB builds an index over existing nodes in batches of 10,000, each under the graph's read
lock (a few seconds each for vectors), and its lock prefers writers: a write that arrives
during a batch waits for the batch to end, and every read that comes after it waits behind
that write. Declaring the next vector index is such a write (measured at 128k facts: reads
waited 2.8 s, then 5.7 s, while the Fact and Episode indexes were declared during the Entity
and Fact builds). So the indexes are declared one at a time, each once the previous one is
built; a write of the user's own during a build still waits for the batch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from typing import Any

import redis
from falkordb import FalkorDB, Graph

from engine import cypher
from engine.cypher import Dialect
from engine.errors import QueryError, QueryTimeoutError, StoreError, StoreUnavailableError
from engine.store.base import RestoreBatch, Rows, VectorRead, WriteBatch, Written
from engine.store.falkordb_server import EmbeddedServer, single_try_client
from engine.store.fulltext import user_key
from engine.store.nearest import UserSizes, nearest_rows
from engine.store.reads import Reads
from engine.store.statements import composed_batch, pack_vector, written

log = logging.getLogger("graphmem")
# vector statement -> label whose vector index it reads
_VECTOR_LABELS = {
    "search_entity_vectors": "Entity",
    "search_fact_vectors": "Fact",
    "search_episode_vectors": "Episode",
}
_WARMING_RECHECK_S = 1.0
# A schema statement takes milliseconds, or waits its turn behind an index build. FalkorDB
# deadlocked once, every thread waiting, while declaring an index on a fresh graph: after this
# long without an answer the embedded server is asked whether it still answers at all.
_SCHEMA_PATIENCE_S = 10.0
# Nodes below which a reopen builds the vector indexes before `setup` returns (a few hundred
# milliseconds here) instead of in the background: a small graph never shows as warming.
_BUILD_NOW = 2_000
_NO_VECTOR_INDEX = "Invalid arguments for procedure 'db.idx.vector.queryNodes'"


@contextlib.contextmanager
def map_falkordb_errors(timeout_ms: int | None = None) -> Iterator[None]:
    """Translate redis/FalkorDB exceptions into graphmem's error tree."""
    try:
        yield
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise StoreUnavailableError(f"FalkorDB is unreachable: {exc}") from exc
    except redis.ResponseError as exc:
        if "timed out" in str(exc).lower():
            raise QueryTimeoutError(
                f"FalkorDB stopped a query after the query timeout ({timeout_ms} ms, setting "
                "query_timeout_ms / GRAPHMEM_QUERY_TIMEOUT_MS)"
            ) from exc
        raise QueryError(f"FalkorDB rejected a query: {exc}") from exc
    except redis.RedisError as exc:
        raise StoreError(f"FalkorDB failed: {exc}") from exc


class FalkorDBStore:
    """A `GraphStore` on FalkorDB. Pass a `client` to use a server you run yourself."""

    dialect: Dialect = "falkordb"

    def __init__(
        self,
        client: FalkorDB,
        graph_name: str = "graphmem",
        server: EmbeddedServer | None = None,
        timeout_ms: int | None = None,
    ) -> None:
        self._db = client
        self._graph = client.select_graph(graph_name)
        self._server = server
        self._timeout_ms = timeout_ms
        # two batches that MERGE the same edge at once can both create it (8 threads adding
        # the same facts left duplicate edges): one writer at a time per client, and per data
        # directory across processes (`EmbeddedServer.writing`)
        self._write_lock = threading.Lock()
        self._closed = False
        self._declaring = threading.Lock()  # no vector index declared while `close` drops them
        self._sizes = UserSizes()
        self._warming: set[str] = set(_VECTOR_LABELS.values())  # until db.indexes() says
        self._warming_checked = float("-inf")

    @classmethod
    def embedded(
        cls, server: EmbeddedServer, graph_name: str = "graphmem", timeout_ms: int | None = None
    ) -> FalkorDBStore:
        """Start (or reuse) the embedded server and connect to it. `timeout_ms` bounds each
        read query (FalkorDB runs write queries to completion, so a batch is never cut)."""
        socket = server.ensure_running()
        with map_falkordb_errors():
            client = FalkorDB(unix_socket_path=str(socket), client_name=f"graphmem-{os.getpid()}")
        return cls(client, graph_name, server, timeout_ms)

    # -- plumbing -------------------------------------------------------------------------

    def run(
        self,
        name: str,
        params: dict[str, Any],
        *,
        read_only: bool = True,
        rel_types: list[str] | None = None,
        rel_type_groups: list[list[str]] | None = None,
    ) -> Rows:
        text = cypher.load(name, self.dialect)
        if rel_types is not None:
            text = cypher.with_rel_types(text, rel_types)
        if rel_type_groups is not None:
            text = cypher.with_rel_type_groups(text, rel_type_groups)
        with map_falkordb_errors(self._timeout_ms):
            if read_only:
                result = self._graph.ro_query(text, params, timeout=self._timeout_ms)
            else:
                result = self._graph.query(text, params, timeout=self._timeout_ms)
        return list(result.result_set)

    def nearest(self, read: VectorRead, params: dict[str, Any], k: int) -> Rows:
        """As `records.nearest`, but while the label's index is being built the user's nodes
        are scanned (exact; slower for a large user: FalkorDB would refuse the index
        procedure)."""
        label = _VECTOR_LABELS[read.index]
        if label not in self._warming_now():
            try:
                return nearest_rows(self.run, read, params, k, self._sizes)
            except QueryError as exc:
                if _NO_VECTOR_INDEX not in str(exc):
                    raise
                self._warming.add(label)  # dropped since it was seen built (a store closed)
                self._warming_checked = time.monotonic()
        return self.run(read.scan, {**params, "limit": k})

    # -- vector indexes after a reopen ----------------------------------------------------

    def warming(self) -> list[str]:
        """Labels whose vector index is still being built (their vector reads answer
        nothing meanwhile), e.g. `["Entity", "Fact"]` for a while after a reopen."""
        return sorted(self._warming_now(even_when_built=True))

    def _warming_now(self, even_when_built: bool = False) -> set[str]:
        """Looked up again at most once a second; by the vector reads only while some index
        is not built (they learn of a dropped one from the error the index procedure gives)."""
        recent = time.monotonic() - self._warming_checked < _WARMING_RECHECK_S
        if recent or not (self._warming or even_when_built):
            return self._warming
        ready = {
            label
            for label, types, status in self.run("list_indexes", {})
            if status == "OPERATIONAL" and "VECTOR" in types.get("embedding", [])
        }
        self._warming = set(_VECTOR_LABELS.values()) - ready
        self._warming_checked = time.monotonic()
        return self._warming

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: int) -> None:
        """Declare every index. A missing vector index (after a reopen) is declared in a
        thread: while FalkorDB builds one, each further schema statement waits its turn for
        the graph (15-30 s each at 128k facts), and nothing here needs the index built."""
        vectors = []
        for name in cypher.schema_names(self.dialect):
            if "_vector" in name:
                vectors.append(name)
            else:
                self._declare(name, dimension)
        self._key_old_entities()
        built = self._vector_indexes()
        missing = [n for n in vectors if not any(f"_{label.lower()}_" in n for label in built)]
        counts = Reads(self).counts(None) if missing else {}
        if missing and sum(counts[k] for k in ("entities", "facts", "episodes")) < _BUILD_NOW:
            self._declare_all(missing, dimension)  # little to build: done at once
        elif missing:
            self._warming_checked = float("-inf")
            worker = threading.Thread(
                target=self._declare_all, args=(missing, dimension), daemon=True
            )
            worker.start()

    def _key_old_entities(self) -> None:
        """Entities written before entities carried their user's key get it, once: the name
        search asks the fulltext index for the user's key (`fulltext.py`). Setting a property
        inserts the node into its label's vector index again, beside its old entry (FalkorDB
        PR #2197): 120,000 entities lost 0.09 of their recall@10. So that index is dropped
        first, and `setup` builds it again (in the background, reads scanning meanwhile)."""
        users = self.run("list_users_without_user_key", {})
        if users:
            with contextlib.suppress(QueryError):  # not declared
                self.run("drop_entity_vector_index", {}, read_only=False)
        for (user_id,) in users:
            params = {"user_id": user_id, "user_key": user_key(user_id)}
            self.run("set_entity_user_keys", params, read_only=False)

    def _declare(self, name: str, dimension: int) -> None:
        statement, params = cypher.load(name, self.dialect), {"dimension": dimension}
        # "already indexed" is the expected answer on every run after the first
        with contextlib.suppress(QueryError), map_falkordb_errors():
            if self._server is None or not self._answered_in_time(statement, params):
                self._graph.query(statement, params)

    def _answered_in_time(self, statement: str, params: dict[str, Any]) -> bool:
        """Run a schema statement on the embedded server with `_SCHEMA_PATIENCE_S`; past it,
        a server that no longer answers anything is restarted. False: run it again, waiting."""
        assert self._server is not None
        watched = single_try_client(self._server.socket_path, _SCHEMA_PATIENCE_S)
        try:
            Graph(watched, self._graph.name).query(statement, params)
            return True
        except redis.TimeoutError:
            if not self._server.answers():
                self._server.restart()
                self._db.connection.connection_pool.disconnect()  # its sockets reach the old one
            return False
        finally:
            watched.close()

    def _declare_all(self, names: list[str], dimension: int) -> None:
        """Declare each vector index once the one before it is built (see the module
        docstring: a declaration during a build makes every read wait for a batch)."""
        try:
            for name in names:
                with self._declaring:
                    if self._closed:
                        return
                    self._declare(name, dimension)
                self._wait_built(name)
        except Exception as exc:  # best effort in a thread: the next setup declares again
            log.debug("graphmem: vector index not declared: %s", exc)

    def _wait_built(self, name: str) -> None:
        label = next(label for label in _VECTOR_LABELS.values() if f"_{label.lower()}_" in name)
        pause = 0.01  # an index on an empty graph is built at once; a large one takes minutes
        while not self._closed:
            self._warming_checked = float("-inf")
            if label not in self._warming_now(even_when_built=True):
                return
            time.sleep(pause)
            pause = min(2 * pause, _WARMING_RECHECK_S)

    def _vector_indexes(self) -> set[str]:
        """Labels with a declared vector index (built or being built)."""
        return {
            label
            for label, types, _ in self.run("list_indexes", {})
            if "VECTOR" in types.get("embedding", [])
        }

    def write(self, user_id: str, batch: WriteBatch | RestoreBatch) -> Written:
        if batch.is_empty():
            return Written()
        query, params, names = composed_batch(user_id, batch, self.dialect, pack_vector)
        across = self._server.writing() if self._server else contextlib.nullcontext()
        try:
            with self._write_lock, across, map_falkordb_errors():
                rows = self._graph.query(query, params, timeout=self._timeout_ms).result_set
        finally:
            self._sizes.forget(user_id)
        return written(batch, names, rows[0])

    # -- deletes and housekeeping ---------------------------------------------------------

    def delete_user(self, user_id: str) -> int:
        rows = self.run("delete_user_nodes", {"user_id": user_id}, read_only=False)
        self._sizes.forget(user_id)
        return sum(int(row[0]) for row in rows)

    def reset(self) -> None:
        self.run("delete_all_nodes", {}, read_only=False)
        self._sizes.forget()

    def close(self) -> None:
        """Disconnect; the last process to close stops the embedded server, after
        `compact_for_reopen` (see the module docstring)."""
        self._closed = True
        with contextlib.suppress(redis.RedisError):
            self._db.connection.close()
        if self._server is not None:
            with contextlib.suppress(redis.RedisError, OSError, StoreError):
                self._server.stop_if_unused(before_stop=self.compact_for_reopen)
            self._server = None

    def compact_for_reopen(self) -> None:
        """Drop this graph's vector indexes and rewrite the append-only file, so the next
        start loads a snapshot without them (fast) and `setup` builds them in the background."""
        with self._declaring:
            for label in _VECTOR_LABELS.values():
                with contextlib.suppress(QueryError):  # not declared (a store never set up)
                    self.run(f"drop_{label.lower()}_vector_index", {}, read_only=False)
        self._warming = set(_VECTOR_LABELS.values())
        connection = self._db.connection
        with map_falkordb_errors():
            _rewrite_append_only_file(connection)
            connection.close()


def _rewrite_append_only_file(connection: redis.Redis) -> None:
    """Rewrite the append-only file now (after any rewrite already running) and wait."""

    def busy() -> bool:
        info = connection.info("persistence")
        return bool(info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled"))

    while busy():
        time.sleep(0.05)
    connection.bgrewriteaof()
    time.sleep(0.05)
    while busy():
        time.sleep(0.05)
