"""GraphStore adapter for FalkorDB (the embedded default), through the official client.

A batch is written as ONE composed query (`cypher.compose`): FalkorDB runs a query atomically
and its append-only file records it as one command, so a crash never leaves half a batch.
(Redis MULTI/EXEC is not an option: FalkorDB 4.x asserts on GRAPH.QUERY inside EXEC.)
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import redis
from falkordb import FalkorDB

from engine import cypher
from engine.errors import QueryError, QueryTimeoutError, StoreError, StoreUnavailableError
from engine.models import Entity, Episode, Fact, HistoryEvent
from engine.normalize import has_cjk
from engine.snapshot import EntityRecord, EpisodeRecord, FactRecord, HistoryRecord
from engine.store.base import Dialect, ExpandedEdge, RankBy, WriteBatch
from engine.store.falkordb_server import EmbeddedServer
from engine.store.records import (
    composed_batch,
    edges_from_rows,
    entity_pairs,
    fact_from_row,
    fact_mentions,
    history_from_row,
    overfetch,
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

    def _nearest(self, name: str, params: dict[str, Any], k: int) -> list[list[Any]]:
        return overfetch(lambda n: self._run(name, {**params, "k": n}, True), k)

    # -- schema and writes ----------------------------------------------------------------

    def setup(self, dimension: int) -> None:
        for statement in cypher.schema_statements(self.dialect):
            # "already indexed" is the expected answer on every run after the first
            with contextlib.suppress(QueryError), map_falkordb_errors():
                self._graph.query(statement, {"dimension": dimension})

    def write(self, user_id: str, batch: WriteBatch) -> dict[str, int]:
        if batch.is_empty():
            return {}
        query, params, names = composed_batch(user_id, batch, self.dialect)
        with map_falkordb_errors():
            rows = self._graph.query(query, params, timeout=self._timeout_ms).result_set
        return fact_mentions(names, rows[0])

    # -- reads ----------------------------------------------------------------------------

    def entities_by_keys(self, user_id: str, keys: list[str]) -> dict[str, Entity]:
        params = {"user_id": user_id, "keys": keys}
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
        query = redisearch_query(terms)
        if not query:
            return []
        params = {"user_id": user_id, "query": query, "k": k}
        try:
            rows = self._run("search_entity_fulltext", params, True)
        except QueryError:  # e.g. only stopwords left: no match rather than a failure
            return []
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def vector_entities(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[Entity, float]]:
        rows = self._nearest(
            "search_entity_vectors", {"user_id": user_id, "embedding": embedding}, k
        )
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def vector_facts(
        self, user_id: str, embedding: list[float], k: int, *, include_invalid: bool
    ) -> list[tuple[Fact, float]]:
        params = {"user_id": user_id, "embedding": embedding, "include_invalid": include_invalid}
        rows = self._nearest("search_fact_vectors", params, k)
        return [(fact_from_row(row), float(row[3])) for row in rows]

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
        params = {
            "user_id": user_id,
            "anchors": anchors,
            "weights": weights,
            "fanout": fanout,
            "depth": depth,
            "include_invalid": include_invalid,
            "expand_via": self.predicates(user_id) if expand_via is None else expand_via,
        }
        return edges_from_rows(self._run("expand_subgraph", params, True))

    def predicates(self, user_id: str) -> list[str]:
        return [row[0] for row in self._run("list_predicates", {"user_id": user_id}, True)]

    def top_entities(
        self, user_id: str, k: int, by: RankBy, now: float, half_life_s: float
    ) -> list[tuple[Entity, float]]:
        params = {"user_id": user_id, "k": k, "by": by, "now": now, "half_life": half_life_s}
        return [
            (Entity.from_props(r[0]), float(r[1])) for r in self._run("top_entities", params, True)
        ]

    def history(self, user_id: str, target_uid: str) -> list[HistoryEvent]:
        params = {"user_id": user_id, "target_uid": target_uid}
        return [history_from_row(row[0]) for row in self._run("list_history", params, True)]

    def episodes_by_uids(self, user_id: str, uids: list[str]) -> list[Episode]:
        rows = self._run("get_episodes_by_uids", {"user_id": user_id, "uids": uids}, True)
        return [Episode.from_props(row[0]) for row in rows]

    def entity_episodes(self, user_id: str, uid: str, limit: int) -> list[Episode]:
        params = {"user_id": user_id, "uid": uid, "limit": limit}
        return [
            Episode.from_props(row[0]) for row in self._run("list_entity_episodes", params, True)
        ]

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
        rows = self._run("delete_user_nodes", {"user_id": user_id})
        return int(rows[0][0]) if rows else 0

    def reset(self) -> None:
        self._run("delete_all_nodes", {})

    def counts(self, user_id: str | None) -> dict[str, int]:
        row = self._run("count_nodes", {"user_id": user_id}, True)[0]
        keys = ("users", "entities", "facts", "valid_facts", "episodes")
        return {k: int(v or 0) for k, v in zip(keys, row, strict=True)}

    def close(self) -> None:
        with contextlib.suppress(redis.RedisError):
            self._db.connection.close()
        if self._server is not None:
            with contextlib.suppress(redis.RedisError, OSError):
                self._server.stop_if_unused()
            self._server = None
