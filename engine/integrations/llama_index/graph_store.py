"""`GraphmemPropertyGraphStore`: LlamaIndex's `Neo4jPropertyGraphStore` reading graphmem's
own Neo4j graph in place, for one user, read-only.

graphmem's entities carry what that store matches on: the labels `__Entity__` and `__Node__`,
`id` (the entity's uid, unique across users), `name`, and a 384-dimensional `embedding`
(all-MiniLM-L6-v2); facts carry `id` too, for `get_rel_map`. LlamaIndex's own queries have no
notion of a user, and some delete by name across the whole database (`delete(entity_names=...)`
is `MATCH (n) WHERE n.name IN $names DETACH DELETE n`). This subclass therefore:

- adds the user to every read (`get`, `get_triplets`, `get_rel_map`, `vector_query`), and
  checks every name LlamaIndex splices into its Cypher text (property and filter keys,
  relation names, the depth, filter operators) against a strict pattern first, so no key can
  rewrite the statement (`name` = 1 OR true) and drop the user's filter;
- refuses `structured_query`: Cypher written by a caller or an LLM cannot be held to one user
  (text-to-Cypher and Cypher-template retrievers are not available on this store);
- refuses every write method (`upsert_*`, `delete*`): graphmem owns the graph, write through
  `Memory`;
- runs LlamaIndex's own statements, and the two of graphmem's it adds (`get(ids=...)` by uid or
  name in one read, the facts of the relations it returns), in a READ transaction, so the server
  itself rejects a write;
- never refreshes the schema (no APOC needed) and creates no index or constraint;
- gives every relation it returns the rest of its fact, which lives on the `:Fact` node (the
  sentence `text`, `first_seen`, `updated_at`, `confidence`, `episodes`): the typed
  relationship holds only the times and mentions, and a graph copied to another property
  graph store would lose the sentences.
"""

from __future__ import annotations

import asyncio
import dataclasses
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import neo4j
from llama_index.core.graph_stores.types import EntityNode, LabelledNode, Relation, Triplet
from llama_index.core.graph_stores.utils import value_sanitize
from llama_index.core.vector_stores.types import (
    FilterCondition,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore
from llama_index.graph_stores.neo4j.neo4j_property_graph import remove_empty_values

from engine import cypher
from engine.errors import ClosedError, InvalidInputError, StoreError
from engine.integrations.llama_index.arguments import (
    check_key,
    check_nodes,
    check_properties,
    check_relation,
    check_strings,
)
from engine.normalize import check_count, check_user_id, entity_key
from engine.store.neo4j import check_reachable, map_neo4j_errors

STRUCTURAL_RELS = ["SUBJECT", "OBJECT", "MENTIONS"]
MAX_DEPTH = 4
MAX_REL_MAP = 1000  # triplets one get_rel_map reads at most (LlamaIndex asks for 30)
# what a relation gets from its :Fact node (its own properties win where both hold one)
FACT_PROPERTIES = (
    "text", "valid_at", "invalid_at", "mentions", "first_seen", "last_seen", "updated_at",
    "episodes", "confidence",
)  # fmt: skip
_OPERATORS = frozenset({"==", "!=", ">", "<", ">=", "<=", "in", "nin"})
_NO_STRUCTURED_QUERY = (
    "structured_query is refused: Cypher written by a caller or an LLM cannot be held to user "
    "{user!r}; read with get, get_triplets, get_rel_map or vector_query (LLMSynonymRetriever "
    "and VectorContextRetriever use only those), or search with engine.Memory"
)


class _Statements:
    """What LlamaIndex's own read methods see as `self`: their `structured_query` reaches the
    read transaction, which the public `structured_query` never does. Everything else is the
    store's."""

    def __init__(self, store: GraphmemPropertyGraphStore) -> None:
        self._store = store

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        rows = self._store._read(query, param_map or {})
        return [value_sanitize(r) for r in rows] if self._store.sanitize_query_output else rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class GraphmemPropertyGraphStore(Neo4jPropertyGraphStore):  # type: ignore[misc]
    """graphmem's Neo4j graph as a LlamaIndex property graph store, scoped to `user_id`.

    Args:
        username, password, url, database: where graphmem's Neo4j is.
        user_id: the one user whose nodes every read returns.
        **kwargs: passed to `Neo4jPropertyGraphStore` (not `refresh_schema` or
            `create_indexes`: both stay off).

    Raises:
        StoreUnavailableError: nothing answers at `url` within 5 s
            (`engine.store.neo4j.check_reachable`) or the server refuses the credentials; the
            URL is named, never the password.
        InvalidInputError: `refresh_schema` or `create_indexes` asked for, or an unusable
            `user_id`.

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
        self._run = _Statements(self)
        self._reach(url, (username, password))
        super().__init__(
            username, password, url, database, refresh_schema=False, create_indexes=False, **kwargs
        )
        # LlamaIndex also opens an async driver that no method uses and close() leaves open
        with ThreadPoolExecutor(max_workers=1) as pool:
            pool.submit(asyncio.run, self._async_driver.close()).result()

    def _reach(self, url: str, auth: tuple[str, str]) -> None:
        """Fail now when no server answers at `url` (`check_reachable`): LlamaIndex's driver
        would retry the first read for 30 s and raise the driver's own error."""
        check_reachable(url, auth)

    # -- every statement runs here, in a read transaction --------------------------------

    def _read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """
        Raises:
            ClosedError: the store was closed (LlamaIndex's `close()` drops its driver).
        """
        driver = getattr(self, "_driver", None)
        if driver is None:
            raise ClosedError(f"this {type(self).__name__} is closed: open a new one")
        with map_neo4j_errors():
            records, _, _ = driver.execute_query(
                neo4j.Query(text=query, timeout=self._timeout),
                database_=self._database,
                parameters_=params,
                routing_=neo4j.RoutingControl.READ,
            )
        return [record.data() for record in records]

    def structured_query(self, query: str, param_map: dict[str, Any] | None = None) -> Any:
        """Refused (see the module docstring).

        Raises:
            InvalidInputError: always.
        """
        raise InvalidInputError(_NO_STRUCTURED_QUERY.format(user=self.user_id))

    def refresh_schema(self) -> None:
        raise InvalidInputError("refresh_schema would need structured_query, which is refused")

    def verify_version(self) -> None:
        """Asks nothing: LlamaIndex's constructor asks Neo4j's version (through the refused
        `structured_query`) to choose between its `entity` vector index and a filtered scan,
        and this store's vector queries are always the filtered scan (by user)."""
        self._supports_vector_index = False

    # -- reads, scoped to the user --------------------------------------------------------

    def _scope(self, properties: dict[str, Any] | None) -> dict[str, Any]:
        properties = check_properties(properties)
        if properties and properties.get("user_id", self.user_id) != self.user_id:
            raise InvalidInputError(f"this store reads user {self.user_id!r} only")
        return {**(properties or {}), "user_id": self.user_id}

    def get(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """The user's nodes, entities named by `name` (their uid in `uid`); `ids` may be
        uids or names (LlamaIndex's own graphs use names as ids, and `LLMSynonymRetriever`
        asks by name)."""
        return [_named(node) for node in self._nodes(properties, ids)]

    def _nodes(
        self, properties: dict[str, Any] | None = None, ids: list[str] | None = None
    ) -> list[LabelledNode]:
        """The user's nodes as LlamaIndex's queries know them (id = graphmem's uid); an id
        that is none of the user's uids is looked up as an entity name (by its key), all ids
        in one read (`cypher/get_nodes_by_ids_or_keys.cypher`).

        Raises:
            StoreError: the read returned a node of another user (it never should).
        """
        scoped = self._scope(properties)
        ids = check_strings(ids, "ids")
        if not ids:
            nodes: list[LabelledNode] = Neo4jPropertyGraphStore.get(self._run, scoped)
            return nodes
        lookups = [{"id": i, "key": entity_key(i)} for i in ids]
        where = {key: value for key, value in scoped.items() if key != "user_id"}
        rows = self._run.structured_query(
            cypher.load("get_nodes_by_ids_or_keys", "neo4j"),
            {"user_id": self.user_id, "lookups": lookups, "where": where},
        )
        return [self._own_node(row) for row in rows]

    def _own_node(self, row: dict[str, Any]) -> EntityNode:
        """A row of a node read as LlamaIndex builds an entity, checked to be the user's.

        Raises:
            StoreError: the node is another user's.
        """
        properties = row["properties"]
        if properties.get("user_id") != self.user_id:
            raise StoreError(f"a read for user {self.user_id!r} returned another user's node")
        return EntityNode(
            name=row["name"], label=row["type"], properties=remove_empty_values(properties)
        )

    def _own_ids(self, names: list[str] | None, ids: list[str] | None) -> list[str]:
        """The ids of the user's entities among `ids` and `names` (a name found by its key, as
        graphmem tells entities apart: "john" is John), in one read."""
        wanted = [*(ids or []), *(names or [])]
        return [n.id for n in self._nodes(ids=wanted)] if wanted else []

    def get_triplets(
        self,
        entity_names: list[str] | None = None,
        relation_names: list[str] | None = None,
        properties: dict[str, Any] | None = None,
        ids: list[str] | None = None,
    ) -> list[Triplet]:
        relation_names = check_strings(relation_names, "relation_names")
        relations = [check_relation(r) for r in relation_names] if relation_names else None
        entity_names = check_strings(entity_names, "entity_names")
        ids = check_strings(ids, "ids")
        if entity_names or ids:  # LlamaIndex cannot combine names or ids with properties
            if properties:
                raise InvalidInputError("give entity_names or ids, or properties, not both")
            own = self._own_ids(entity_names, ids)
            if not own:
                return []
            found: list[Triplet] = Neo4jPropertyGraphStore.get_triplets(
                self._run, relation_names=relations, ids=own
            )
            return self._with_facts(found)
        scoped: list[Triplet] = Neo4jPropertyGraphStore.get_triplets(
            self._run, relation_names=relations, properties=self._scope(properties)
        )
        return self._with_facts(scoped)

    def get_rel_map(
        self,
        graph_nodes: list[LabelledNode],
        depth: int = 2,
        limit: int = 30,
        ignore_rels: list[str] | None = None,
    ) -> list[Triplet]:
        """As LlamaIndex's, from the user's own nodes only, entities named by `name`;
        graphmem's structural edges (a fact's SUBJECT and OBJECT, which repeat the typed
        edge) are always left out, and `limit` counts the triplets returned."""
        depth = check_count(depth, "depth", 1, MAX_DEPTH)
        limit = check_count(limit, "limit", 1, MAX_REL_MAP)
        graph_nodes = check_nodes(graph_nodes)
        ignore_rels = check_strings(ignore_rels, "ignore_rels")
        mine = self._nodes(ids=[node.id for node in graph_nodes]) if graph_nodes else []
        if not mine:
            return []
        ignored = {*STRUCTURAL_RELS, *(ignore_rels or [])}
        asked = limit
        while True:  # LlamaIndex cuts at its limit first, then drops the ignored relations
            found = Neo4jPropertyGraphStore.get_rel_map(self._run, mine, depth, asked, [])
            kept = [t for t in found if t[1].label not in ignored]
            if len(kept) >= limit or len(found) < asked or asked >= MAX_REL_MAP:
                return self._with_facts([_named_triplet(t) for t in kept[:limit]])
            asked = min(asked * 3, MAX_REL_MAP)

    def _with_facts(self, triplets: list[Triplet]) -> list[Triplet]:
        """The triplets, each relation once (LlamaIndex's read meets a relation from both of
        its ends when both are asked for) with the rest of its fact (`FACT_PROPERTIES`), read
        in one statement within the user's graph.

        Raises:
            StoreError: the read returned a fact of another user (it never should).
        """
        once = {(s.id, r.label, r.properties.get("uid"), t.id): (s, r, t) for s, r, t in triplets}
        triplets = list(once.values())
        uids = {r.properties.get("uid") for _, r, _ in triplets} - {None}
        if not uids:
            return triplets
        statement = cypher.load("get_facts_by_uids", "neo4j")
        rows = self._read(statement, {"user_id": self.user_id, "uids": sorted(uids)})
        facts: dict[str, dict[str, Any]] = {}
        for row in rows:
            fact = row["fact"]
            if fact.get("user_id") != self.user_id:
                raise StoreError(f"a read for user {self.user_id!r} returned another user's fact")
            facts[fact["uid"]] = {k: fact[k] for k in FACT_PROPERTIES if fact.get(k) is not None}
        return [(s, _with_fact(r, facts), t) for s, r, t in triplets]

    def vector_query(
        self, query: VectorStoreQuery, **kwargs: Any
    ) -> tuple[list[LabelledNode], list[float]]:
        """Nearest entities of the user (graphmem's entity embeddings: embed the query with
        all-MiniLM-L6-v2)."""
        if not isinstance(query, VectorStoreQuery):
            raise InvalidInputError(f"query must be a VectorStoreQuery, got {type(query).__name__}")
        mine = MetadataFilter(key="user_id", value=self.user_id)
        given = query.filters
        if given is not None and given.condition != FilterCondition.AND and len(given.filters) > 1:
            raise InvalidInputError("only AND filters can be combined with the user's scope")
        others = [f for f in (given.filters if given else []) if isinstance(f, MetadataFilter)]
        if given is not None and len(others) != len(given.filters):
            raise InvalidInputError("nested filters are not supported by Neo4jPropertyGraphStore")
        for f in others:
            check_key(f.key, "filter key")
            if f.operator.value not in _OPERATORS:
                raise InvalidInputError(
                    f"filter operator {f.operator.value!r} is not supported on Neo4j here; "
                    f"use one of {', '.join(sorted(_OPERATORS))}"
                )
        scoped = dataclasses.replace(query, filters=MetadataFilters(filters=[*others, mine]))
        nodes, scores = Neo4jPropertyGraphStore.vector_query(self._run, scoped, **kwargs)
        uids = [n.id for n in nodes]
        named = {n.properties.get("uid"): n for n in self.get(ids=uids)} if uids else {}
        return [named.get(n.id, n) for n in nodes], list(scores)

    # -- writes: graphmem owns this graph -------------------------------------------------

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise InvalidInputError(
            "GraphmemPropertyGraphStore is read-only: graphmem owns this graph, so write "
            "through engine.Memory (add, add_facts, delete) instead"
        )

    upsert_nodes = upsert_relations = upsert_llama_nodes = _refuse
    delete = delete_llama_nodes = _refuse


def _named(node: LabelledNode) -> LabelledNode:
    """An entity as LlamaIndex names its own, by `name` (its uid stays in `uid`); LlamaIndex's
    retrievers show a node's id to the LLM ("<id> -> OWNS -> <id>")."""
    name = node.properties.get("name") if isinstance(node, EntityNode) else None
    if not isinstance(name, str):
        return node
    return EntityNode(name=name, label=node.label, properties=node.properties)


def _named_triplet(triplet: Triplet) -> Triplet:
    source, relation, target = (_named(triplet[0]), triplet[1], _named(triplet[2]))
    ends = {"source_id": source.id, "target_id": target.id}
    return (source, relation.model_copy(update=ends), target)


def _with_fact(relation: Relation, facts: dict[str, dict[str, Any]]) -> Relation:
    """`relation` with its fact's properties added (its own kept where both hold one)."""
    uid = relation.properties.get("uid")
    fact = facts.get(uid, {}) if isinstance(uid, str) else {}
    return relation.model_copy(update={"properties": {**fact, **relation.properties}})
