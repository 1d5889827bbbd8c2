"""GraphStore adapter for Neo4j 5, through the official `neo4j` driver.

Every call runs in a managed transaction (`execute_read` / `execute_write`), which the driver
retries on transient errors (deadlocks, leader switches) for up to its retry time. A batch is
written in one transaction, so it is applied whole or not at all.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import neo4j
from neo4j import exceptions as neo4j_errors

from engine import cypher
from engine.errors import (
    ConfigError,
    QueryError,
    QueryTimeoutError,
    StoreError,
    StoreUnavailableError,
)
from engine.models import Entity, Episode, Fact, HistoryEvent
from engine.snapshot import EntityRecord, EpisodeRecord, FactRecord, HistoryRecord
from engine.store.base import Dialect, ExpandedEdge, RankBy, WriteBatch
from engine.store.records import (
    Rows,
    batch_statements,
    edges_from_rows,
    entity_pairs,
    fact_from_row,
    fact_mentions,
    history_from_row,
    overfetch,
    statement_texts,
)

_DATABASE_NOT_FOUND = "Neo.ClientError.Database.DatabaseNotFound"
_LUCENE_QUOTED_SPECIALS = re.compile(r'(["\\])')
_DELETE_BATCH = 10_000


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
        raise StoreUnavailableError(f"Neo4j is unreachable: {exc}") from exc
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


def lucene_query(terms: list[str]) -> str:
    """A Lucene query matching any of `terms`, each as a quoted phrase.

    Inside quotes only `"` and `\\` are special, so escaping those two makes every other
    character (operators, wildcards, `AND`/`OR`/`NOT`) literal. A single alphanumeric word of
    five or more characters also matches with one typo (as the FalkorDB adapter does). Terms
    without a letter or digit cannot match anything and are dropped; the result is empty when
    nothing is left.
    """
    parts: list[str] = []
    for term in (t.strip() for t in terms):
        if not any(ch.isalnum() for ch in term):
            continue
        parts.append('"' + _LUCENE_QUOTED_SPECIALS.sub(r"\\\1", term) + '"')
        if len(term) >= 4 and term.isalnum():
            parts.append(f"{term.lower()}~1")
    return " OR ".join(parts)


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

    @classmethod
    def from_settings(
        cls,
        uri: str,
        user: str,
        password: str | None,
        database: str = "neo4j",
        *,
        timeout_s: float | None = None,
    ) -> Neo4jStore:
        """Create a driver for `uri` and a store that owns it. Connects lazily, on first use.

        Raises:
            ConfigError: the URI cannot work (unknown scheme, malformed address).
        """
        auth = (user, password) if password is not None else None
        with map_neo4j_errors():
            driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        return cls(driver, database, timeout_s=timeout_s, owns_driver=True)

    # -- plumbing -------------------------------------------------------------------------

    def _execute(self, statements: list[tuple[str, dict[str, Any]]], read_only: bool) -> list[Rows]:
        """Run `statements` in one managed transaction; return each one's rows."""

        @neo4j.unit_of_work(timeout=self._timeout_s)
        def work(tx: neo4j.ManagedTransaction) -> list[Rows]:
            # The driver asks for LiteralString: every text is a packaged file from cypher/.
            return [[r.values() for r in tx.run(text, params)] for text, params in statements]

        with map_neo4j_errors(), self._driver.session(database=self._database) as session:
            if read_only:
                return session.execute_read(work)
            return session.execute_write(work)

    def _run(self, name: str, params: dict[str, Any], read_only: bool = False) -> Rows:
        return self._execute([(cypher.load(name, self.dialect), params)], read_only)[0]

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: int) -> None:
        """Create constraints and indexes (`IF NOT EXISTS`), then wait until all are ONLINE.

        An existing vector index keeps the dimension it was created with.
        """
        for statement in cypher.schema_statements(self.dialect):
            self._execute([(statement, {"dimension": dimension})], read_only=False)
        self._run("await_indexes", {"timeout_s": self._index_wait_s}, read_only=True)

    def write(self, user_id: str, batch: WriteBatch) -> dict[str, int]:
        if batch.is_empty():
            return {}
        named = batch_statements(user_id, batch)
        results = self._execute(statement_texts(named, self.dialect), read_only=False)
        # Each batch statement returns one row with one `result` column.
        return fact_mentions([name for name, _, _ in named], [rows[0][0] for rows in results])

    # -- reads ----------------------------------------------------------------------------

    def entities_by_keys(self, user_id: str, keys: list[str]) -> dict[str, Entity]:
        params: dict[str, Any] = {"user_id": user_id, "keys": keys}
        found = dict(entity_pairs(self._run("get_entities_by_keys", params, True)))
        missing = [k for k in keys if k not in found]
        if missing:
            params["keys"] = missing
            for key, entity in entity_pairs(self._run("get_entities_by_alias_keys", params, True)):
                found.setdefault(key, entity)
        return found

    def entities_by_uids(self, user_id: str, uids: list[str]) -> list[Entity]:
        rows = self._run("get_entities_by_uids", {"user_id": user_id, "uids": uids}, True)
        return [Entity.from_props(row[0]) for row in rows]

    def facts_by_uids(self, user_id: str, uids: list[str]) -> list[Fact]:
        rows = self._run("get_facts_by_uids", {"user_id": user_id, "uids": uids}, True)
        return [fact_from_row(row) for row in rows]

    def list_facts(
        self, user_id: str, *, include_invalid: bool, skip: int, limit: int
    ) -> list[Fact]:
        params = {
            "user_id": user_id,
            "include_invalid": include_invalid,
            "skip": skip,
            "limit": limit,
        }
        return [fact_from_row(row) for row in self._run("list_facts", params, True)]

    def entity_facts(
        self, user_id: str, uid: str, *, include_invalid: bool, limit: int
    ) -> list[Fact]:
        params = {
            "user_id": user_id,
            "uid": uid,
            "include_invalid": include_invalid,
            "limit": limit,
        }
        return [fact_from_row(row) for row in self._run("list_entity_facts", params, True)]

    def fulltext_entities(
        self, user_id: str, terms: list[str], k: int
    ) -> list[tuple[Entity, float]]:
        query = lucene_query(terms)
        if not query:
            return []
        params = {"user_id": user_id, "query": query, "k": k}
        rows = self._run("search_entity_fulltext", params, True)
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def vector_entities(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[Entity, float]]:
        params = {"user_id": user_id, "embedding": embedding}
        rows = self._nearest("search_entity_vectors", params, k)
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def vector_facts(
        self, user_id: str, embedding: list[float], k: int, *, include_invalid: bool
    ) -> list[tuple[Fact, float]]:
        params = {"user_id": user_id, "embedding": embedding, "include_invalid": include_invalid}
        rows = self._nearest("search_fact_vectors", params, k)
        return [(fact_from_row(row), float(row[3])) for row in rows]

    def _nearest(self, name: str, params: dict[str, Any], k: int) -> Rows:
        return overfetch(lambda n: self._run(name, {**params, "k": n}, True), k)

    def expand(
        self,
        user_id: str,
        anchors: list[str],
        *,
        weights: dict[str, float],
        fanout: int,
        depth: int,
        include_invalid: bool,
        expand_via: list[str] | None = None,
    ) -> list[ExpandedEdge]:
        via = self.predicates(user_id) if expand_via is None else expand_via
        params = {
            "user_id": user_id,
            "anchors": anchors,
            "weights": weights,
            "fanout": fanout,
            "depth": depth,
            "include_invalid": include_invalid,
            "expand_via": via,
        }
        return edges_from_rows(self._run("expand_subgraph", params, True))

    def predicates(self, user_id: str) -> list[str]:
        return [row[0] for row in self._run("list_predicates", {"user_id": user_id}, True)]

    def top_entities(
        self, user_id: str, k: int, by: RankBy, now: float, half_life_s: float
    ) -> list[tuple[Entity, float]]:
        params = {"user_id": user_id, "k": k, "by": by, "now": now, "half_life": half_life_s}
        rows = self._run("top_entities", params, True)
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def history(self, user_id: str, target_uid: str) -> list[HistoryEvent]:
        params = {"user_id": user_id, "target_uid": target_uid}
        return [history_from_row(row[0]) for row in self._run("list_history", params, True)]

    def episodes_by_uids(self, user_id: str, uids: list[str]) -> list[Episode]:
        rows = self._run("get_episodes_by_uids", {"user_id": user_id, "uids": uids}, True)
        return [Episode.from_props(row[0]) for row in rows]

    def entity_episodes(self, user_id: str, uid: str, limit: int) -> list[Episode]:
        params = {"user_id": user_id, "uid": uid, "limit": limit}
        rows = self._run("list_entity_episodes", params, True)
        return [Episode.from_props(row[0]) for row in rows]

    def existing_checksums(self, user_id: str, checksums: list[str]) -> set[str]:
        params = {"user_id": user_id, "checksums": checksums}
        return {row[0] for row in self._run("find_episode_checksums", params, True)}

    # -- export ---------------------------------------------------------------------------

    def user_entities(self, user_id: str, skip: int, limit: int) -> list[EntityRecord]:
        params = {"user_id": user_id, "skip": skip, "limit": limit}
        rows = self._run("list_user_entities", params, True)
        return [EntityRecord.model_validate(row[0]) for row in rows]

    def user_facts(self, user_id: str, skip: int, limit: int) -> list[FactRecord]:
        params = {"user_id": user_id, "skip": skip, "limit": limit}
        rows = self._run("list_user_facts", params, True)
        return [FactRecord.model_validate(row[0]) for row in rows]

    def user_episodes(self, user_id: str, skip: int, limit: int) -> list[EpisodeRecord]:
        params = {"user_id": user_id, "skip": skip, "limit": limit}
        rows = self._run("list_user_episodes", params, True)
        return [EpisodeRecord.model_validate(row[0]) for row in rows]

    def user_history(self, user_id: str, skip: int, limit: int) -> list[HistoryRecord]:
        params = {"user_id": user_id, "skip": skip, "limit": limit}
        rows = self._run("list_user_history", params, True)
        return [HistoryRecord.model_validate(row[0]) for row in rows]

    # -- deletes and housekeeping ---------------------------------------------------------

    def delete_fact(self, user_id: str, uid: str) -> bool:
        rows = self._run("delete_fact", {"user_id": user_id, "uid": uid})
        return bool(rows and rows[0][0])

    def delete_user(self, user_id: str) -> int:
        return self._delete_in_batches("delete_user_nodes", {"user_id": user_id})

    def reset(self) -> None:
        self._delete_in_batches("delete_all_nodes", {})

    def _delete_in_batches(self, name: str, params: dict[str, Any]) -> int:
        """Repeat a batched delete until a batch comes back short; return the nodes deleted."""
        total = 0
        while True:
            rows = self._run(name, {**params, "batch": _DELETE_BATCH})
            deleted = int(rows[0][0]) if rows else 0
            total += deleted
            if deleted < _DELETE_BATCH:
                return total

    def counts(self, user_id: str | None) -> dict[str, int]:
        row = self._run("count_nodes", {"user_id": user_id}, True)[0]
        keys = ("users", "entities", "facts", "valid_facts", "episodes")
        return {k: int(v or 0) for k, v in zip(keys, row, strict=True)}

    def close(self) -> None:
        if self._owns_driver:
            with contextlib.suppress(neo4j_errors.DriverError, OSError):
                self._driver.close()
