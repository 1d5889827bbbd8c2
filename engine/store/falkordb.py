"""GraphStore adapter for FalkorDB (the embedded default), through the official client.

A batch is written as ONE composed query (`cypher.compose`): FalkorDB runs a query atomically
and its append-only file records it as one command, so a crash never leaves half a batch.
(Redis MULTI/EXEC is not an option: FalkorDB 4.x asserts on GRAPH.QUERY inside EXEC.)
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from typing import Any

import redis
from falkordb import FalkorDB

from engine import cypher
from engine.errors import QueryError, QueryTimeoutError, StoreError, StoreUnavailableError
from engine.normalize import has_cjk
from engine.store.base import Dialect, WriteBatch
from engine.store.falkordb_server import EmbeddedServer
from engine.store.named_reads import NamedQueryReads
from engine.store.records import (
    composed_batch,
    fact_mentions,
    pack_vector,
)

_REDISEARCH_SPECIAL = re.compile(r"([^\w])", re.UNICODE)


def redisearch_query(terms: list[str]) -> str:
    """Any of `terms`, escaped for RediSearch; longer words also match with one typo, and
    non-ASCII pieces (CJK) match as prefixes of the index's longer tokens."""
    parts: list[str] = []
    for term in terms:
        escaped = _REDISEARCH_SPECIAL.sub(r"\\\1", term)
        if not escaped:
            continue
        parts.append(escaped)
        if has_cjk(term):
            parts.append(f"{escaped}*")
        elif len(term) >= 4 and term.isalnum():
            parts.append(f"%{escaped}%")
    return " | ".join(parts)


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


class FalkorDBStore(NamedQueryReads):
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
        # the same facts left duplicate edges): one writer at a time per client
        self._write_lock = threading.Lock()

    @classmethod
    def embedded(
        cls, server: EmbeddedServer, graph_name: str = "graphmem", timeout_ms: int | None = None
    ) -> FalkorDBStore:
        """Start (or reuse) the embedded server and connect to it. `timeout_ms` bounds each
        read query (FalkorDB runs write queries to completion, so a batch is never cut)."""
        socket = server.ensure_running()
        with map_falkordb_errors():
            client = FalkorDB(unix_socket_path=str(socket))
        return cls(client, graph_name, server, timeout_ms)

    # -- plumbing -------------------------------------------------------------------------

    def _run(self, name: str, params: dict[str, Any], read_only: bool = False) -> list[list[Any]]:
        text = cypher.load(name, self.dialect)
        with map_falkordb_errors(self._timeout_ms):
            if read_only:
                result = self._graph.ro_query(text, params, timeout=self._timeout_ms)
            else:
                result = self._graph.query(text, params, timeout=self._timeout_ms)
        return list(result.result_set)

    def _fulltext_query(self, terms: list[str]) -> str:
        return redisearch_query(terms)

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: int) -> None:
        for statement in cypher.schema_statements(self.dialect):
            # "already indexed" is the expected answer on every run after the first
            with contextlib.suppress(QueryError), map_falkordb_errors():
                self._graph.query(statement, {"dimension": dimension})

    def write(self, user_id: str, batch: WriteBatch) -> dict[str, int]:
        if batch.is_empty():
            return {}
        query, params, names = composed_batch(user_id, batch, self.dialect, pack_vector)
        with self._write_lock, map_falkordb_errors():
            rows = self._graph.query(query, params, timeout=self._timeout_ms).result_set
        return fact_mentions(names, rows[0])

    # -- deletes and housekeeping ---------------------------------------------------------

    def delete_user(self, user_id: str) -> int:
        rows = self._run("delete_user_nodes", {"user_id": user_id})
        return int(rows[0][0]) if rows else 0

    def reset(self) -> None:
        self._run("delete_all_nodes", {})

    def close(self) -> None:
        with contextlib.suppress(redis.RedisError):
            self._db.connection.close()
        if self._server is not None:
            with contextlib.suppress(redis.RedisError, OSError):
                self._server.stop_if_unused()
            self._server = None
