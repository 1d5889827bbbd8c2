"""The `GraphStore` port on FalkorDB (the embedded default), through the official client.

A batch is written as ONE composed query (`cypher.compose`): FalkorDB runs a query atomically
and its append-only file records it as one command, so a crash never leaves half a batch.
(Redis MULTI/EXEC is not an option: FalkorDB 4.x asserts on GRAPH.QUERY inside EXEC.)

Index life cycle (the schema, the vector indexes a reopen builds again in the background,
which labels are still warming): `falkordb_schema.py`. The last process to close drops the
vector indexes and compacts the append-only file before the server stops (`close`), so the
next start loads a snapshot without them.

Each user's write generation (`generation`), changed after every write: `generation.py`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import redis
from falkordb import FalkorDB
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from engine import cypher
from engine.cypher import Dialect
from engine.errors import QueryError, QueryTimeoutError, StoreError, StoreUnavailableError
from engine.store.base import (
    AnyBatch,
    Dimension,
    MergeBatch,
    Rows,
    VectorRead,
    Written,
)
from engine.store.falkordb_schema import VECTOR_LABELS, FalkorDBSchema
from engine.store.falkordb_server import EmbeddedServer
from engine.store.generation import DERIVED, Generations, written_user
from engine.store.in_flight import InFlight
from engine.store.nearest import UserSizes, nearest_rows
from engine.store.statements import composed_batch, pack_vector, written

_NO_VECTOR_INDEX = "Invalid arguments for procedure 'db.idx.vector.queryNodes'"
# How long the embedded server may take to answer beyond a read's own timeout. Past it, a
# server that answers nothing else either (a deadlock inside FalkorDB) is restarted.
REPLY_PATIENCE_S = 300.0
# How long a close waits for the append-only file's rewrite before stopping the server
# anyway: the stop kills the rewrite and the old file stays whole (only the next start is
# slower). A bound against a hung rewrite, not a timing.
REWRITE_PATIENCE_S = 300.0
# How long a close waits for the calls still running (a search's background reads, a write)
# before it disconnects them anyway. A bound against a hung call, not a timing.
CLOSE_PATIENCE_S = 30.0


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
        self._sizes = UserSizes()
        self._calls = InFlight(f"the store of graph {graph_name!r}")
        self._generations = Generations(client.connection, graph_name)
        self.schema = FalkorDBSchema(
            self._schema_run,
            self._schema_query,
            map_falkordb_errors,
            graph_name,
            server,
            self._db.connection.connection_pool.disconnect,  # its sockets reach the old server
        )

    @classmethod
    def embedded(
        cls, server: EmbeddedServer, graph_name: str = "graphmem", timeout_ms: int | None = None
    ) -> FalkorDBStore:
        """Start (or reuse) the embedded server and connect to it. `timeout_ms` bounds each
        read query (FalkorDB runs write queries to completion, so a batch is never cut)."""
        patience = REPLY_PATIENCE_S + (timeout_ms or 0) / 1000
        # a command that timed out is not sent again: a write may have been applied
        retry = Retry(ExponentialWithJitterBackoff(1, 0.01), 10, (redis.ConnectionError,))
        # connected under the server lock, so a process closing meanwhile sees this client
        with server.connecting() as socket, map_falkordb_errors():
            client = FalkorDB(
                unix_socket_path=str(socket),
                client_name=f"graphmem-{os.getpid()}",
                socket_timeout=patience,
                retry=retry,
            )
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
        return self._rows(text, params, read_only, changes=name not in DERIVED)

    def _schema_run(self, name: str, params: dict[str, Any], *, read_only: bool = True) -> Rows:
        """`run` for the schema, whose writes change the tokens only of a user they name: an
        index dropped, or the store's own node, changes no user's graph (`generation.py`)."""
        changes = written_user(params) is not None
        return self._rows(cypher.load(name, self.dialect), params, read_only, changes)

    def _rows(self, text: str, params: dict[str, Any], read_only: bool, changes: bool) -> Rows:
        with self._calls.call(), self._answering(self._timeout_ms):
            if read_only:
                result = self._graph.ro_query(text, params, timeout=self._timeout_ms)
            else:
                changing = (
                    self._generations.changing(written_user(params))
                    if changes
                    else contextlib.nullcontext()
                )
                with changing:
                    result = self._graph.query(text, params, timeout=self._timeout_ms)
                if self._server is not None:
                    self._server.wait_appended(self._db.connection)
        return list(result.result_set)

    def _schema_query(self, text: str, params: dict[str, Any]) -> None:
        with self._calls.call():
            self._graph.query(text, params)

    @contextlib.contextmanager
    def _answering(self, timeout_ms: int | None = None) -> Iterator[None]:
        with map_falkordb_errors(timeout_ms), self._restarting_if_hung():
            yield

    @contextlib.contextmanager
    def _restarting_if_hung(self) -> Iterator[None]:
        """A reply that did not come in time: if the embedded server answers nothing at all,
        it is hung; restart it (it replays its append-only file) and say so. A server that is
        gone (it crashed or was killed) is started again alike, while its data dir is there:
        otherwise every later call failed until the process was restarted."""
        try:
            yield
        except redis.TimeoutError as exc:
            server = self._server
            if server is None or server.answers():
                raise
            server.restart()
            self._cut_off(server, "stopped answering and was restarted", exc)
        except redis.ConnectionError as exc:
            server = self._server
            if server is None or not server.data_dir.is_dir() or server.running():
                raise
            server.ensure_running()  # under the server lock: one caller starts it
            gone = "had stopped (it crashed or was killed) and was started again"
            self._cut_off(server, gone, exc)

    def _cut_off(self, server: EmbeddedServer, what: str, exc: Exception) -> None:
        self._db.connection.connection_pool.disconnect()
        with contextlib.suppress(redis.RedisError):  # what it replayed may differ
            self._generations.change(None)
        raise StoreUnavailableError(
            f"the embedded FalkorDB of {server.data_dir} {what}; this call was cut off (a "
            "write in it may or may not be stored): run it again"
        ) from exc

    def nearest(self, read: VectorRead, params: dict[str, Any], k: int) -> Rows:
        """As `records.nearest`, but while the label's index is being built the user's nodes
        are scanned (exact; slower for a large user: FalkorDB would refuse the index
        procedure)."""
        label = VECTOR_LABELS[read.index]
        self.schema.check_dimension(params["embedding"])
        if label not in self.schema.warming_now():
            try:
                return nearest_rows(self.run, read, params, k, self._sizes)
            except QueryError as exc:
                if _NO_VECTOR_INDEX not in str(exc):
                    raise
                self.schema.dropped(label)  # since it was seen built (another store closed)
        return self.run(read.scan, {**params, "limit": k})

    def warming(self) -> list[str]:
        """Labels whose vector index is still being built (their vector reads scan the
        user's nodes meanwhile), e.g. `["Entity", "Fact"]` for a while after a reopen."""
        return self.schema.warming()

    def generation(self, user_id: str) -> str:
        """The user's write generation: changes after every write to the user's graph or
        to every user's, by any process sharing the server (`generation.py`). One round
        trip."""
        with self._calls.call(), self._answering():
            return self._generations.read(user_id)

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: Dimension) -> None:
        """Declare every index (`FalkorDBSchema.setup`)."""
        self.schema.setup(dimension, self._nodes)

    def bulk_writing(self, adding: int) -> AbstractContextManager[None]:
        """Around writes of `adding` nodes: the vector indexes built after them when that at
        least doubles the graph (`FalkorDBSchema.built_after`)."""
        return self.schema.built_after(adding, self._nodes)

    def _nodes(self) -> int:
        """Every node of the graph, any user's (what an index build covers)."""
        return int(self.run("count_all_nodes", {})[0][0])

    def write(self, user_id: str, batch: AnyBatch) -> Written:
        if batch.is_empty():
            return Written()
        for vector in _first_vectors(batch):
            self.schema.check_dimension(vector)
        query, params, names = composed_batch(user_id, batch, self.dialect, pack_vector)
        across = self._server.writing() if self._server else contextlib.nullcontext()
        try:
            with self._calls.call(), self._write_lock, across, self._answering():
                with self._generations.changing(user_id):
                    rows = self._graph.query(query, params, timeout=self._timeout_ms).result_set
                if self._server is not None:
                    self._server.wait_appended(self._db.connection)
        finally:
            self._sizes.forget(user_id)
        return written(batch, names, rows[0] if rows else None)

    # -- deletes and housekeeping ---------------------------------------------------------

    def delete_user(self, user_id: str) -> int:
        rows = self.run("delete_user_nodes", {"user_id": user_id}, read_only=False)
        self._sizes.forget(user_id)
        return sum(int(row[0]) for row in rows)

    def reset(self) -> None:
        self.run("delete_all_nodes", {}, read_only=False)  # names no user: every token changes
        self._sizes.forget()

    def close(self) -> None:
        """Disconnect, once the calls still running have ended (later ones raise
        `ClosedError`); the last process to close stops the embedded server, after
        `compact_for_reopen` (see the module docstring)."""
        self.schema.close(CLOSE_PATIENCE_S)
        with self._calls.closing(CLOSE_PATIENCE_S):
            with contextlib.suppress(redis.RedisError):
                self._db.connection.close()
            if self._server is not None:
                with contextlib.suppress(redis.RedisError, OSError, StoreError):
                    self._server.stop_if_unused(before_stop=self.compact_for_reopen)
                self._server = None
        with contextlib.suppress(redis.RedisError):
            self._db.connection.close()  # what the compaction connected again

    def compact_for_reopen(self) -> None:
        """Drop this graph's vector indexes (and those no search reads) and rewrite the
        append-only file, so the next start loads a snapshot without them (fast) and `setup`
        builds them in the background.
        Nothing to do for a graph never written (a store opened and closed)."""
        connection = self._db.connection
        if not connection.exists(self._graph.name):
            return
        self.schema.drop_for_reopen()
        with map_falkordb_errors():
            _rewrite_append_only_file(connection)
            connection.close()


def _first_vectors(batch: AnyBatch) -> list[list[float]]:
    """The first vector of each kind the batch writes (a merge writes none: it moves those
    the store holds)."""
    if isinstance(batch, MergeBatch):
        return []
    kinds = (batch.entity_embeddings, batch.fact_embeddings, batch.episode_embeddings)
    return [vector for vectors in kinds for vector in itertools.islice(vectors.values(), 1)]


def _rewrite_append_only_file(
    connection: redis.Redis, patience_s: float = REWRITE_PATIENCE_S
) -> None:
    """Rewrite the append-only file now (after any rewrite already running) and wait, at most
    `patience_s` in all.

    Raises:
        StoreError: the rewrite did not end in time, or the server says it failed.
    """
    deadline = time.monotonic() + patience_s

    def wait() -> dict[str, Any]:
        while True:
            info: dict[str, Any] = connection.info("persistence")
            if not (info.get("aof_rewrite_in_progress") or info.get("aof_rewrite_scheduled")):
                return info
            if time.monotonic() > deadline:
                raise StoreError(f"the append-only file's rewrite took over {patience_s:.0f} s")
            time.sleep(0.05)

    wait()
    connection.bgrewriteaof()
    time.sleep(0.05)
    status = wait().get("aof_last_bgrewrite_status", "ok")
    if status != "ok":
        raise StoreError(f"the append-only file's rewrite failed (the server says {status!r})")
