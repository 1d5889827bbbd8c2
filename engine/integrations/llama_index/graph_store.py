"""`GraphmemPropertyGraphStore`: LlamaIndex's `Neo4jPropertyGraphStore` reading graphmem's
own Neo4j graph in place, for one user, read-only.

graphmem's entities carry what that store matches on: the labels `__Entity__` and `__Node__`,
`id` (the entity's uid, unique across users), `name`, and a 384-dimensional `embedding`
(all-MiniLM-L6-v2); facts carry `id` too, for `get_rel_map`. LlamaIndex's own queries have no
notion of a user, and some delete by name across the whole database (`delete(entity_names=...)`
is `MATCH (n) WHERE n.name IN $names DETACH DELETE n`). This subclass therefore:

- adds the user to every read (`get`, `get_triplets`, `get_rel_map`, `vector_query`);
- refuses every write method (`upsert_*`, `delete*`): graphmem owns the graph, write through
  `Memory`;
- runs every statement, `structured_query` included, in a READ transaction, so the server
  itself rejects a write that text-to-Cypher or a caller sends;
- never refreshes the schema (no APOC needed) and creates no index or constraint.
"""

from __future__ import annotations

import asyncio
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
from llama_index.core.graph_stores.types import LabelledNode, Triplet
from llama_index.core.graph_stores.utils import value_sanitize
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore

from engine.errors import InvalidInputError
from engine.normalize import check_user_id

STRUCTURAL_RELS = ["SUBJECT", "OBJECT", "MENTIONS"]


class GraphmemPropertyGraphStore(Neo4jPropertyGraphStore):  # type: ignore[misc]
    """graphmem's Neo4j graph as a LlamaIndex property graph store, scoped to `user_id`.

    Args:
        username, password, url, database: where graphmem's Neo4j is.
        user_id: the one user whose nodes every read returns.
        **kwargs: passed to `Neo4jPropertyGraphStore` (not `refresh_schema` or
            `create_indexes`: both stay off).

    Example:
        >>> pg = GraphmemPropertyGraphStore("neo4j", "pw", "bolt://localhost:7687",
        ...                                 user_id="alice")  # doctest: +SKIP
        >>> pg.get_triplets(entity_names=["John"])                # doctest: +SKIP
    """

    def __init__(
        self,
        username: str,
        password: str,
        url: str,
        user_id: str,
        database: str = "neo4j",
        **kwargs: Any,
    ) -> None:
        for key in ("refresh_schema", "create_indexes"):
            if kwargs.pop(key, False):
                raise InvalidInputError(f"{key}=True would change graphmem's graph; leave it off")
        self.user_id = check_user_id(user_id)
        super().__init__(
            username, password, url, database, refresh_schema=False, create_indexes=False, **kwargs
        )
        # LlamaIndex also opens an async driver that no method uses and close() leaves open
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, self._async_driver.close()).result()

    # -- every statement runs here, in a read transaction --------------------------------

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        records, _, _ = self._driver.execute_query(
            neo4j.Query(text=query, timeout=self._timeout),
            database_=self._database,
            parameters_=params,
            routing_=neo4j.RoutingControl.READ,
        )
        return [record.data() for record in records]

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        rows = self._read(query, param_map or {})
        return [value_sanitize(row) for row in rows] if self.sanitize_query_output else rows

    # -- reads, scoped to the user --------------------------------------------------------

    def _scope(self, properties: dict[str, Any] | None) -> dict[str, Any]:
        if properties and properties.get("user_id", self.user_id) != self.user_id:
            raise InvalidInputError(f"this store reads user {self.user_id!r} only")
        return {**(properties or {}), "user_id": self.user_id}

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        nodes: list[LabelledNode] = super().get(properties=self._scope(properties), ids=ids)
        return nodes

    def _own_ids(self, names: list[str] | None, ids: list[str] | None) -> list[str]:
        """The ids of the user's entities among `ids` and named `names`."""
        own = [n.id for n in self.get(ids=ids)] if ids else []
        for name in names or []:
            own += [n.id for n in self.get({"name": name})]
        return own

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        if entity_names or ids:  # LlamaIndex cannot combine names or ids with properties
            if properties:
                raise InvalidInputError("give entity_names or ids, or properties, not both")
            own = self._own_ids(entity_names, ids)
            if not own:
                return []
            found: list[Triplet] = super().get_triplets(relation_names=relation_names, ids=own)
            return found
        scoped: list[Triplet] = super().get_triplets(
            relation_names=relation_names, properties=self._scope(properties)
        )
        return scoped

    def get_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """As LlamaIndex's, from the user's own nodes only; graphmem's structural edges
        (a fact's SUBJECT and OBJECT, which repeat the typed edge) are left out by default."""
        own = set(self._own_ids(None, [node.id for node in graph_nodes]))
        mine = [node for node in graph_nodes if node.id in own]
        if not mine:
            return []
        ignored = STRUCTURAL_RELS if ignore_rels is None else ignore_rels
        found: list[Triplet] = super().get_rel_map(mine, depth, limit, ignored)
        return found

    def vector_query(
        self, query: VectorStoreQuery, **kwargs: Any
    ) -> tuple[list[LabelledNode], list[float]]:
        """Nearest entities of the user (graphmem's entity embeddings: embed the query with
        all-MiniLM-L6-v2)."""
        mine = MetadataFilter(key="user_id", value=self.user_id)
        given = query.filters
        if given is not None and given.condition != FilterCondition.AND and len(given.filters) > 1:
            raise InvalidInputError("only AND filters can be combined with the user's scope")
        others = [f for f in (given.filters if given else []) if isinstance(f, MetadataFilter)]
        if given is not None and len(others) != len(given.filters):
            raise InvalidInputError("nested filters are not supported by Neo4jPropertyGraphStore")
        scoped = dataclasses.replace(query, filters=MetadataFilters(filters=[*others, mine]))
        found: tuple[list[LabelledNode], list[float]] = super().vector_query(scoped, **kwargs)
        return found

    # -- writes: graphmem owns this graph -------------------------------------------------

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise InvalidInputError(
            "GraphmemPropertyGraphStore is read-only: graphmem owns this graph, so write "
            "through engine.Memory (add, add_facts, delete) instead"
        )

    upsert_nodes = upsert_relations = upsert_llama_nodes = _refuse
    delete = delete_llama_nodes = _refuse
