"""The `GraphStore` port on Neo4j 5, through the official `neo4j` driver.

Every call runs in a managed transaction (`execute_read` / `execute_write`), which the driver
retries on transient errors (deadlocks, leader switches) for up to its retry time. A batch is
written in one transaction, so it is applied whole or not at all.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import neo4j
from neo4j import exceptions as neo4j_errors

from engine import cypher
from engine.config import NEO4J_CONNECT_TIMEOUT_S  # the driver alone waits 30-120 s
from engine.cypher import Dialect
from engine.errors import (
    ConfigError,
    QueryError,
    QueryTimeoutError,
    StoreError,
    StoreUnavailableError,
)
from engine.store.base import (
    AnyBatch,
    Dimension,
    Rows,
    VectorRead,
    Written,
    dimension_of,
)
from engine.store.nearest import UserSizes, nearest_rows
from engine.store.statements import batch_statements, statement_texts, written

_DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
_DELETE_BATCH = 10_000
_REASON = re.compile(r"\(reason ([^()]*)\)\s*$")


@contextlib.contextmanager
def map_neo4j_errors() -> Iterator[None]:
    """Translate `neo4j` driver exceptions into graphmem's error tree."""
    try:
        yield
    except neo4j_errors.AuthError as exc:
        raise StoreUnavailableError(f"Neo4j refused the credentials: {exc.message}") from exc
    except neo4j_errors.ConfigurationError as exc:
        raise ConfigError(f"Neo4j driver configuration cannot work: {exc}") from exc
    except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired) as exc:
        raise StoreUnavailableError(f"Neo4j is unreachable: {one_line(exc)}") from exc
    except neo4j_errors.DatabaseUnavailable as exc:
        raise StoreUnavailableError(f"the Neo4j database is unavailable: {exc.message}") from exc
    except neo4j_errors.Neo4jError as exc:
        if "TimedOut" in (exc.code or ""):
            raise QueryTimeoutError(
                f"Neo4j stopped a transaction after the query timeout (setting "
                f"query_timeout_ms / GRAPHMEM_QUERY_TIMEOUT_MS): {exc.message}"
            ) from exc
        if not isinstance(exc, neo4j_errors.ClientError):
            raise StoreError(f"Neo4j failed: {exc}") from exc
        if exc.code == _DATABASE_NOT_FOUND:
            raise StoreUnavailableError(f"no such Neo4j database: {exc.message}") from exc
        raise QueryError(f"Neo4j rejected a query: {exc.message}") from exc
    except neo4j_errors.DriverError as exc:
        raise StoreError(f"Neo4j failed: {exc}") from exc


def check_reachable(
    uri: str, auth: tuple[str, str] | None, timeout_s: float = NEO4J_CONNECT_TIMEOUT_S
) -> None:
    """Connect once, now, through a probe driver that waits at most `timeout_s`: a server
    that is not there (or never answers) fails here instead of at the first query, which the
    driver retries for 30 s with a warning on stderr at each attempt. The store's own driver
    keeps the driver's defaults.

    Raises:
        ConfigError: the URI cannot work.
        StoreUnavailableError: nothing answers at `uri` within `timeout_s`, or the server
            refuses the credentials; the message names the URI (without any credentials),
            never the password.
    """
    where = shown_uri(uri)
    with map_neo4j_errors():  # what is neither: the usual mapping
        probe = neo4j.GraphDatabase.driver(
            uri,
            auth=auth,
            connection_timeout=timeout_s,  # the TCP connection
            connection_acquisition_timeout=timeout_s,  # and the Bolt handshake after it
            max_connection_pool_size=1,
        )
        try:
            probe.verify_connectivity()
        except (neo4j_errors.ServiceUnavailable, neo4j_errors.SessionExpired, OSError) as exc:
            raise StoreUnavailableError(
                f"Neo4j is unreachable at {where}: {one_line(exc)}"
            ) from exc
        except neo4j_errors.AuthError as exc:
            raise StoreUnavailableError(
                f"Neo4j at {where} refused the credentials: {exc.message}"
            ) from exc
        finally:
            probe.close()


def shown_uri(uri: str) -> str:
    """`uri` as an error may show it: without a `user:password@` part."""
    parts = urlsplit(uri)
    if "@" not in parts.netloc:
        return uri
    return parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]).geturl()


def one_line(exc: BaseException) -> str:
    """The driver's account of a failed connection, on one line: its reason alone where it
    gives one (`[Errno 111] Connection refused`), else its whole text."""
    text = " ".join(str(exc).split())
    found = _REASON.search(text)
    return found.group(1) if found else text


class Neo4jStore:
    """A `GraphStore` on Neo4j 5 (Community or Enterprise, no plugins).

    Args:
        driver: a driver you manage; `close()` leaves it open unless `owns_driver` is true.
        database: the database every session uses.
        timeout_s: server-side timeout of each transaction, or the server's default.
        owns_driver: close the driver with the store (set by `from_settings`).

    Example:
        >>> store = Neo4jStore.from_settings("bolt://localhost:7687", "neo4j", "secret")
        >>> store.setup(dimension=384)  # doctest: +SKIP
    """

    dialect: Dialect = "neo4j"

    def __init__(
        self,
        driver: neo4j.Driver,
        database: str = "neo4j",
        *,
        timeout_s: float | None = None,
        owns_driver: bool = False,
        index_wait_s: int = 300,
    ) -> None:
        self._driver = driver
        self._database = database
        self._timeout_s = timeout_s
        self._owns_driver = owns_driver
        self._index_wait_s = index_wait_s
        self._sizes = UserSizes()

    @classmethod
    def from_settings(
        cls,
        uri: str,
        user: str,
        password: str | None,
        database: str = "neo4j",
        *,
        timeout_s: float | None = None,
        connect_timeout_s: float = NEO4J_CONNECT_TIMEOUT_S,
    ) -> Neo4jStore:
        """Check that the server at `uri` answers (`check_reachable`), then create a driver
        for it and a store that owns the driver.

        Args:
            connect_timeout_s: how long that check waits for a server that does not answer.

        Raises:
            ConfigError: the URI cannot work (unknown scheme, malformed address).
            StoreUnavailableError: nothing answers at `uri` within `connect_timeout_s`, or the
                server refuses the credentials (the URI named, never the password).
        """
        auth = (user, password) if password is not None else None
        check_reachable(uri, auth, connect_timeout_s)
        with map_neo4j_errors():
            driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        return cls(driver, database, timeout_s=timeout_s, owns_driver=True)

    # -- plumbing -------------------------------------------------------------------------

    def _execute(
        self, statements: list[tuple[str, dict[str, Any]]], read_only: bool, bounded: bool = True
    ) -> list[Rows]:
        """Run `statements` in one managed transaction; return each one's rows. `bounded`:
        under the query timeout; schema work is not (building an index takes its time)."""

        @neo4j.unit_of_work(timeout=self._timeout_s if bounded else None)
        def work(tx: neo4j.ManagedTransaction) -> list[Rows]:
            # The driver asks for LiteralString: every text is a packaged file from cypher/.
            out: list[Rows] = []
            for text, params in statements:
                out.append([r.values() for r in tx.run(text, params)])
                if not out[-1]:
                    break  # a write batch's guard said no (every other statement yields a row)
            return out

        with map_neo4j_errors(), self._driver.session(database=self._database) as session:
            if read_only:
                return session.execute_read(work)
            return session.execute_write(work)

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
        return self._execute([(text, params)], read_only)[0]

    def nearest(self, read: VectorRead, params: dict[str, Any], k: int) -> Rows:
        return nearest_rows(self.run, read, params, k, self._sizes)

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: Dimension) -> None:
        """Create constraints and indexes (`IF NOT EXISTS`), then wait until all are ONLINE
        (at most `index_wait_s`). Neither runs under the query timeout.

        An existing vector index keeps the dimension it was created with.
        """
        params = {"dimension": dimension_of(dimension)}
        for statement in cypher.schema_statements(self.dialect):
            self._execute([(statement, params)], False, bounded=False)
        wait = (cypher.load("await_indexes", self.dialect), {"timeout_s": self._index_wait_s})
        self._execute([wait], read_only=True, bounded=False)

    def write(self, user_id: str, batch: AnyBatch) -> Written:
        if batch.is_empty():
            return Written()
        named = batch_statements(user_id, batch)
        try:
            results = self._execute(statement_texts(named, self.dialect), read_only=False)
        finally:
            self._sizes.forget(user_id)
        # Each batch statement returns one row with one `result` column.
        if len(results) < len(named) or not results[-1]:
            return written(batch, [], None)  # its guard: the messages are stored already
        return written(batch, [name for name, _, _ in named], [rows[0][0] for rows in results])

    def generation(self, user_id: str) -> None:
        """None: Neo4j keeps no cheap counter that every process sees change, short of a
        write to a node on every statement (a lock on one node for every writer); a caller
        keeps nothing read from this store in memory."""
        return None

    # -- deletes and housekeeping ---------------------------------------------------------

    def delete_user(self, user_id: str) -> int:
        deleted = self._delete_in_batches("delete_user_nodes", {"user_id": user_id})
        self._sizes.forget(user_id)
        return deleted

    def reset(self) -> None:
        self._delete_in_batches("delete_all_nodes", {})
        self._sizes.forget()

    def _delete_in_batches(self, name: str, params: dict[str, Any]) -> int:
        """Repeat a batched delete until a batch comes back short; return the nodes deleted."""
        total = 0
        while True:
            rows = self.run(name, {**params, "batch": _DELETE_BATCH}, read_only=False)
            deleted = int(rows[0][0]) if rows else 0
            total += deleted
            if deleted < _DELETE_BATCH:
                return total

    def warming(self) -> list[str]:
        return []  # Neo4j keeps its vector indexes on disk

    def close(self) -> None:
        if self._owns_driver:
            with contextlib.suppress(neo4j_errors.DriverError, OSError):
                self._driver.close()
