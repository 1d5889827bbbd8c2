"""The reads every adapter shares: each runs one named statement from `cypher/` and maps its
rows to models. An adapter supplies `_run` (its driver) and `_fulltext_query` (its fulltext
syntax); the statements themselves differ by dialect only where `cypher/<dialect>/` says so."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, TypeVar

from pydantic import BaseModel

from engine.errors import QueryError
from engine.models import Entity, Episode, Fact, HistoryEvent
from engine.store.base import EpisodeText, Neighbour, RankBy
from engine.store.records import (
    ENTITY_VECTORS,
    EPISODE_VECTORS,
    FACT_VECTORS,
    Rows,
    VectorRead,
    entity_pairs,
    fact_from_row,
    history_from_row,
    nearest,
    neighbours_from_rows,
)
from engine.transfer.snapshot import EntityRecord, EpisodeRecord, FactRecord, HistoryRecord

R = TypeVar("R", bound=BaseModel)


class NamedQueryReads(ABC):
    """The read half of `GraphStore`, over an adapter's `_run`."""

    @abstractmethod
    def _run(
        self,
        name: str,
        params: dict[str, Any],
        read_only: bool = False,
        rel_types: list[str] | None = None,
    ) -> Rows:
        """Rows of the named statement, its `__REL_TYPE__` filled with `rel_types` if given."""

    @abstractmethod
    def _fulltext_query(self, terms: list[str]) -> str:
        """`terms` in the database's fulltext syntax, escaped; empty when nothing is left."""

    def _nearest(self, read: VectorRead, params: dict[str, Any], k: int) -> Rows:
        """The asking user's k nearest nodes of one vector-indexed label (see `nearest`)."""
        user = {"user_id": params["user_id"]}
        return nearest(
            lambda cap: int(self._run(read.count, {**user, "cap": cap}, True)[0][0]),
            lambda n, keep: self._run(read.index, {**params, "k": n, "limit": keep}, True),
            lambda keep: self._run(read.scan, {**params, "limit": keep}, True),
            k,
        )

    def read_named(self, name: str, params: dict[str, Any]) -> Rows:
        """The rows of a named read-only statement from `cypher/` (importers use it)."""
        return self._run(name, params, True)

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
        query = self._fulltext_query(terms)
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
        rows = self._nearest(ENTITY_VECTORS, {"user_id": user_id, "embedding": embedding}, k)
        return [(Entity.from_props(row[0]), _unit(row[1])) for row in rows]

    def vector_facts(
        self, user_id: str, embedding: list[float], k: int, *, include_invalid: bool
    ) -> list[tuple[Fact, float]]:
        params = {"user_id": user_id, "embedding": embedding, "include_invalid": include_invalid}
        rows = self._nearest(FACT_VECTORS, params, k)
        return [(fact_from_row(row), _unit(row[3])) for row in rows]

    def neighbours(
        self,
        user_id: str,
        nodes: list[str],
        *,
        predicates: list[str] | None,
        scan: int,
        limit: int,
        total: int,
        include_invalid: bool,
    ) -> list[Neighbour]:
        if not nodes or predicates == []:
            return []
        params = {
            "user_id": user_id,
            "nodes": nodes,
            "scan": scan,
            "limit": limit,
            "total": total,
            "include_invalid": include_invalid,
        }
        if predicates is None:
            return neighbours_from_rows(self._run("expand_any", params, True))
        rows = self._run("expand_typed", params, True, rel_types=sorted(set(predicates)))
        return neighbours_from_rows(rows)

    def relation_types(
        self, user_id: str, nodes: list[str], *, include_invalid: bool
    ) -> dict[str, dict[str, int]]:
        if not nodes:
            return {}
        params = {"user_id": user_id, "nodes": nodes, "include_invalid": include_invalid}
        found: dict[str, dict[str, int]] = {}
        for node, rel_type, edges in self._run("list_relation_types", params, True):
            found.setdefault(node, {})[rel_type] = int(edges)
        return found

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

    def vector_episodes(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[str, float]]:
        params = {"user_id": user_id, "embedding": embedding}
        return [(row[0], _unit(row[1])) for row in self._nearest(EPISODE_VECTORS, params, k)]

    def episode_texts(self, user_id: str, skip: int, limit: int) -> list[EpisodeText]:
        rows = self._run(
            "list_episode_texts", {"user_id": user_id, "skip": skip, "limit": limit}, True
        )
        return [
            EpisodeText(r[0], r[1], r[2], r[3] or "user", r[4] or "", float(r[5] or 0.0), r[6])
            for r in rows
        ]

    def count_episodes(self, user_id: str) -> int:
        rows = self._run("count_user_episodes", {"user_id": user_id}, True)
        return int(rows[0][0]) if rows else 0

    def existing_checksums(self, user_id: str, checksums: list[str]) -> set[str]:
        params = {"user_id": user_id, "checksums": checksums}
        return {row[0] for row in self._run("find_episode_checksums", params, True)}

    # -- export ---------------------------------------------------------------------------

    def _page(self, name: str, model: type[R], user_id: str, skip: int, limit: int) -> list[R]:
        rows = self._run(name, {"user_id": user_id, "skip": skip, "limit": limit}, True)
        return [model.model_validate(row[0]) for row in rows]

    def user_entities(self, user_id: str, skip: int, limit: int) -> list[EntityRecord]:
        return self._page("list_user_entities", EntityRecord, user_id, skip, limit)

    def user_facts(self, user_id: str, skip: int, limit: int) -> list[FactRecord]:
        return self._page("list_user_facts", FactRecord, user_id, skip, limit)

    def user_episodes(self, user_id: str, skip: int, limit: int) -> list[EpisodeRecord]:
        return self._page("list_user_episodes", EpisodeRecord, user_id, skip, limit)

    def user_history(self, user_id: str, skip: int, limit: int) -> list[HistoryRecord]:
        return self._page("list_user_history", HistoryRecord, user_id, skip, limit)

    def delete_fact(self, user_id: str, uid: str) -> bool:
        rows = self._run("delete_fact", {"user_id": user_id, "uid": uid})
        return bool(rows and rows[0][0])

    def counts(self, user_id: str | None) -> dict[str, int]:
        row = self._run("count_nodes", {"user_id": user_id}, True)[0]
        keys = ("users", "entities", "facts", "valid_facts", "episodes")
        return {k: int(v or 0) for k, v in zip(keys, row, strict=True)}


def _unit(similarity: float) -> float:
    """A similarity from (1 + cos) / 2, kept in [0, 1] against float32 rounding."""
    return min(1.0, max(0.0, float(similarity)))
