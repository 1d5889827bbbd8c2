"""The reads in domain terms, over any adapter: `Reads(store)` runs one named statement of
`cypher/` per call (up to three for `entities_by_keys`; a vector read is the adapter's
`nearest`) and maps its rows to models. The statements differ by dialect only
where `cypher/<dialect>/` says so, and the fulltext syntax where `engine.store.fulltext` does.
`set_episode_terms` is the one that writes.
"""

from __future__ import annotations

from typing import Literal

from engine.errors import QueryError
from engine.models import Entity, Episode, Fact, HistoryEvent
from engine.normalize import entity_key
from engine.store.base import EpisodeText, GraphStore, Neighbour, RankBy, VectorRead
from engine.store.fulltext import fulltext_query
from engine.store.rows import (
    KeptEdge,
    entity_pairs,
    episode_texts,
    fact_from_row,
    history_from_row,
    kept_edges,
    neighbours_from_rows,
    probed_neighbours,
    unit,
)
from engine.store.uids import ALL_UIDS
from engine.uids import self_uid

ENTITY_VECTORS = VectorRead("count_entity_vectors", "search_entity_vectors", "scan_entity_vectors")
FACT_VECTORS = VectorRead("count_fact_vectors", "search_fact_vectors", "scan_fact_vectors")
EPISODE_VECTORS = VectorRead(
    "count_episode_vectors", "search_episode_vectors", "scan_episode_vectors"
)
# FalkorDB reads this many nodes or more by type in one traversal (expand_typed_batched):
# replayed bench-hub reads, old -> batched, mean ms: 1 node 0.34 -> 0.50, 2-3 0.55 -> 0.62,
# 4-7 1.28 -> 1.14, 8-15 1.60 -> 1.02, 16+ 6.5 -> 2.2
BATCHED_TYPED_READ_NODES = 4
# FalkorDB samples relations with fewer current facts than this through the :Fact nodes: 68-416
# facts of sparse bench-hub relations 1.5-5.8 -> 0.8-2.5 ms; more cost ~0.3 ms before by type
SAMPLED_BY_FACTS = 500
Met = tuple[str, bool]  # a predicate met at a node, and whether the node is its subject
Window = tuple[float | None, float | None]  # since, until: epoch seconds, None for open


class Reads:
    """Every read the engine makes of a user's graph, through the port `store`.

    Example:
        >>> reads = Reads(store)  # doctest: +SKIP
        >>> reads.entities_by_keys("alice", ["paris"])["paris"].name  # doctest: +SKIP
        'Paris'
    """

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def entities_by_keys(
        self, user_id: str, keys: list[str], aliases: bool = True
    ) -> dict[str, Entity]:
        """The user's entities of these keys, or (`aliases`) alias keys, a scan of the user's
        entities for the keys no entity has, and the user's own for their id's key however
        it is keyed (an older version's: 'user', no alias)."""
        params = {"user_id": user_id, "keys": keys}
        found = dict(entity_pairs(self.store.run("get_entities_by_keys", params)))
        if aliases and (missing := [k for k in keys if k not in found]):
            params["keys"] = missing
            for key, entity in entity_pairs(self.store.run("get_entities_by_alias_keys", params)):
                found.setdefault(key, entity)
            if (own := entity_key(user_id)) in missing and own not in found:
                for entity in self.entities_by_uids(user_id, [self_uid(user_id)]):
                    found[own] = entity
        return found

    def entity_by_loose_key(self, user_id: str, loose: str, dropped: list[str]) -> Entity | None:
        """The user's most mentioned entity whose key or an alias key equals `loose` once
        every string of `dropped` is taken out of it; None when none does."""
        params = {"user_id": user_id, "loose": loose, "dropped": dropped}
        rows = self.store.run("get_entities_by_loose_key", params)
        return Entity.from_props(rows[0][0]) if rows else None

    def entities_by_uids(self, user_id: str, uids: list[str]) -> list[Entity]:
        rows = self.store.run("get_entities_by_uids", {"user_id": user_id, "uids": uids})
        return [Entity.from_props(row[0]) for row in rows]

    def facts_by_uids(self, user_id: str, uids: list[str]) -> list[Fact]:
        rows = self.store.run("get_facts_by_uids", {"user_id": user_id, "uids": uids})
        return [fact_from_row(row) for row in rows]

    def list_facts(
        self,
        user_id: str,
        *,
        include_invalid: bool,
        skip: int,
        limit: int,
        window: tuple[float | None, float | None] = (None, None),
    ) -> list[Fact]:
        """A page of the user's facts, oldest first; those that became true in `window`
        (since, until: epoch seconds or None)."""
        params = {"user_id": user_id, "include_invalid": include_invalid}
        params |= {"skip": skip, "limit": limit, "since": window[0], "until": window[1]}
        return [fact_from_row(row) for row in self.store.run("list_facts", params)]

    def entity_facts(
        self,
        user_id: str,
        uid: str,
        *,
        include_invalid: bool,
        limit: int,
        window: Window = (None, None),
    ) -> list[Fact]:
        """The facts naming the entity, oldest first; those that became true in `window`."""
        params = {"user_id": user_id, "uid": uid, "include_invalid": include_invalid}
        params |= {"limit": limit, "since": window[0], "until": window[1]}
        return [fact_from_row(row) for row in self.store.run("list_entity_facts", params)]

    def fulltext_entities(
        self, user_id: str, terms: list[str], k: int
    ) -> list[tuple[Entity, float]]:
        query = fulltext_query(self.store.dialect, terms, user_id)
        if not query:
            return []
        params = {"user_id": user_id, "query": query, "k": k}
        try:
            rows = self.store.run("search_entity_fulltext", params)
        except QueryError:  # e.g. only stopwords left: no match rather than a failure
            return []
        return [(Entity.from_props(row[0]), float(row[1])) for row in rows]

    def vector_entities(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[Entity, float]]:
        params = {"user_id": user_id, "embedding": embedding}
        rows = self.store.nearest(ENTITY_VECTORS, params, k)
        return [(Entity.from_props(row[0]), unit(row[1])) for row in rows]

    def vector_facts(
        self, user_id: str, embedding: list[float], k: int, *, include_invalid: bool
    ) -> list[tuple[Fact, float]]:
        params = {"user_id": user_id, "embedding": embedding, "include_invalid": include_invalid}
        rows = self.store.nearest(FACT_VECTORS, params, k)
        return [(fact_from_row(row), unit(row[3])) for row in rows]

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
        """One hop from each of `nodes` over the fact relationships of the `predicates` types
        (None: any type), read by relationship type so a hub's other edges are never touched;
        at most `scan` relationships read per node, of which the `limit` with the most
        mentioned neighbours are returned, and at most `total` read in all (the first nodes
        first: a read of many nodes costs what it returns, not what they hold)."""
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
            return neighbours_from_rows(self.store.run("expand_any", params), nodes)
        name = "expand_typed"
        if self.store.dialect == "falkordb" and len(nodes) >= BATCHED_TYPED_READ_NODES:
            name = "expand_typed_batched"
        rows = self.store.run(name, params, rel_types=sorted(set(predicates)))
        return neighbours_from_rows(rows, nodes)

    def shared_neighbours(
        self,
        user_id: str,
        nodes: list[str],
        *,
        scan: int,
        total: int,
        limit: int,
        include_invalid: bool,
    ) -> list[Neighbour]:
        """The edges from each of `nodes` to the neighbours two or more of them share, of any
        type: at most `scan` read per node and `total` in all, the `limit` neighbours shared
        by the most nodes kept (`degree`: the edges returned at a node)."""
        if len(nodes) < 2:
            return []
        params = {
            "user_id": user_id,
            "nodes": nodes,
            "scan": scan,
            "total": total,
            "limit": limit,
            "include_invalid": include_invalid,
        }
        return neighbours_from_rows(self.store.run("expand_shared", params), nodes)

    def probe(
        self,
        user_id: str,
        nodes: list[str],
        groups: list[list[str]],
        *,
        size: int,
        include_invalid: bool,
    ) -> list[list[Neighbour]]:
        """What `neighbours` returns for each group of `groups` (types of one relation; the
        groups share no type) with `scan` and `limit` both `size`, in one read."""
        if not nodes or not groups:
            return [[] for _ in groups]
        params = {"user_id": user_id, "nodes": nodes, "limit": size}
        params["include_invalid"] = include_invalid
        groups = [sorted(set(g)) for g in groups]
        rows = self.store.run("probe_typed", params, rel_type_groups=groups)
        return probed_neighbours(rows, nodes, groups)

    def node_edges(self, user_id: str, nodes: list[str], most: int) -> dict[str, list[KeptEdge]]:
        """Every fact edge of each of `nodes`, current or not; of more than `most`, `most` + 1."""
        params = {"user_id": user_id, "nodes": nodes, "most": most + 1}
        return kept_edges(self.store.run("list_node_edges", params))

    def count_facts(self, user_id: str, cap: int) -> int:
        """The user's facts, counted up to `cap`."""
        return int(self.store.run(FACT_VECTORS.count, {"user_id": user_id, "cap": cap})[0][0])

    def relation_types(
        self, user_id: str, nodes: list[str], *, include_invalid: bool
    ) -> dict[str, dict[str, int]]:
        """How many fact relationships of each type each of `nodes` has (not for hubs)."""
        if not nodes:
            return {}
        params = {"user_id": user_id, "nodes": nodes, "include_invalid": include_invalid}
        found: dict[str, dict[str, int]] = {}
        for node, rel_type, edges in self.store.run("list_relation_types", params):
            found.setdefault(node, {})[rel_type] = int(edges)
        return found

    def relation_types_by_end(
        self, user_id: str, nodes: list[str], max_mentions: int
    ) -> dict[str, set[Met]]:
        """The current facts' predicates each of `nodes` has, each with whether the node is
        their subject; a node with more than `max_mentions` mentions is not read (a hub: it
        has no entry), a node with no current fact has an empty one."""
        if not nodes:
            return {}
        found: dict[str, set[Met]] = {}
        params = {"user_id": user_id, "nodes": nodes, "max_mentions": max_mentions}
        rows = self.store.run("list_relation_types_by_end", params)
        for node, predicate, subject in rows:
            met = found.setdefault(node, set())
            if predicate is not None:
                met.add((predicate, bool(subject)))
        return found

    def relation_ends(
        self, user_id: str, predicates: list[str], k: int
    ) -> dict[str, list[tuple[str, str]]]:
        """For each of `predicates`, the (subject, object) of up to `k` of its current facts,
        in one read; on FalkorDB through the facts first, by type when they are too many."""
        if not predicates:
            return {}
        wanted = list(dict.fromkeys(predicates))
        params = {"user_id": user_id, "k": k}
        rows = []
        if self.store.dialect == "falkordb":
            by_facts = params | {"predicates": wanted, "most": SAMPLED_BY_FACTS}
            rows = self.store.run("sample_relation_ends_by_facts", by_facts)
        groups = [[p] for p in wanted]
        rows = rows or self.store.run("sample_relation_ends", params, rel_type_groups=groups)
        found: dict[str, list[tuple[str, str]]] = {p: [] for p in predicates}
        for predicate, subject, obj in rows:
            found[predicate].append((subject, obj))
        return found

    def reversed_facts(
        self, user_id: str, pairs: list[tuple[str, str, str]]
    ) -> dict[str, dict[str, int]]:
        """For the (relation, subject, object) `pairs`, per relation: how many of its pairs
        each predicate stores the other way round, as a current fact from object to subject."""
        if not pairs:
            return {}
        params = {"user_id": user_id, "pairs": [list(p) for p in pairs]}
        found: dict[str, dict[str, int]] = {}
        for relation, predicate, facts in self.store.run("find_reversed_facts", params):
            found.setdefault(relation, {})[predicate] = int(facts)
        return found

    def at_relation_end(
        self, user_id: str, uids: list[str], predicate: str, *, subjects: bool
    ) -> set[str]:
        """Those of `uids` that are the subject (`subjects`) or else the object of a
        relationship of type `predicate`."""
        if not uids:
            return set()
        params = {"user_id": user_id, "uids": uids, "subjects": subjects}
        rows = self.store.run("filter_relation_ends", params, rel_types=[predicate])
        return {row[0] for row in rows}

    def predicates(self, user_id: str) -> dict[str, tuple[int, int]]:
        """The user's predicates, each with how many facts it holds and how many were said."""
        rows = self.store.run("list_predicates", {"user_id": user_id})
        return {p: (int(n), int(said)) for p, n, said in rows}

    def top_entities(
        self,
        user_id: str,
        k: int,
        by: RankBy,
        now: float,
        half_life_s: float,
        window: tuple[float | None, float | None] = (None, None),
    ) -> list[tuple[Entity, float]]:
        params = {"user_id": user_id, "k": k, "by": by, "now": now, "half_life": half_life_s}
        params |= {"since": window[0], "until": window[1]}
        rows = self.store.run("top_entities", params)
        return [(Entity.from_props(r[0]), float(r[1])) for r in rows]

    def history(self, user_id: str, target_uid: str) -> list[HistoryEvent]:
        params = {"user_id": user_id, "target_uid": target_uid}
        return [history_from_row(row[0]) for row in self.store.run("list_history", params)]

    def episodes_by_uids(self, user_id: str, uids: list[str]) -> list[Episode]:
        rows = self.store.run("get_episodes_by_uids", {"user_id": user_id, "uids": uids})
        return [Episode.from_props(row[0]) for row in rows]

    def entity_episodes(
        self, user_id: str, uid: str, limit: int, window: Window = (None, None)
    ) -> list[Episode]:
        """The messages that mention the entity, newest first; those said in `window`."""
        params = {"user_id": user_id, "uid": uid, "limit": limit}
        params |= {"since": window[0], "until": window[1]}
        rows = self.store.run("list_entity_episodes", params)
        return [Episode.from_props(row[0]) for row in rows]

    def vector_episodes(
        self, user_id: str, embedding: list[float], k: int
    ) -> list[tuple[str, float]]:
        """Uids and similarities of the user's k episodes nearest to `embedding`."""
        params = {"user_id": user_id, "embedding": embedding}
        return [(row[0], unit(row[1])) for row in self.store.nearest(EPISODE_VECTORS, params, k)]

    def similarities(
        self,
        kind: Literal["fact", "episode"],
        user_id: str,
        uids: list[str],
        embedding: list[float],
    ) -> dict[str, float]:
        """The cosine similarity of `embedding` to each of the user's facts (or messages) of
        `uids` that has an embedding."""
        params = {"user_id": user_id, "uids": uids, "embedding": embedding}
        rows = self.store.run(f"score_{kind}_vectors", params)
        return {row[0]: 2.0 * unit(row[1]) - 1.0 for row in rows}

    def episode_texts(
        self, user_id: str, terms_v: int, uids: tuple[str, str] = ALL_UIDS, limit: int = 2**31
    ) -> tuple[list[EpisodeText], list[str | None]]:
        """The user's first `limit` messages by uid in `[uids[0], uids[1])` (by default all),
        and the index terms stored with each under version `terms_v` (None where not)."""
        params = {"user_id": user_id, "lo": uids[0], "hi": uids[1], "terms_v": terms_v}
        params["limit"] = limit
        return episode_texts(self.store.run("list_episode_texts", params))

    def set_episode_terms(self, user_id: str, terms: dict[str, str], terms_v: int) -> None:
        """Store the index terms of the user's messages of these uids (computed for messages
        stored without them), under version `terms_v`."""
        rows = [{"uid": uid, "terms": text} for uid, text in terms.items()]
        params = {"user_id": user_id, "rows": rows, "terms_v": terms_v}
        self.store.run("set_episode_terms", params, read_only=False)

    def episodes_stamp(self, user_id: str) -> tuple[int, int]:  # messages, their times' sum
        rows = self.store.run("stamp_user_episodes", {"user_id": user_id})
        return (int(rows[0][0]), int(rows[0][1] or 0)) if rows else (0, 0)

    def stored_texts(
        self, user_id: str, checksums: list[str], texts: list[str]
    ) -> dict[str, str | None]:
        """Which of `checksums` the user holds, with the text stored under those of `texts`."""
        params = {"user_id": user_id, "checksums": checksums, "texts": texts}
        return {row[0]: row[1] for row in self.store.run("get_episode_texts_by_checksums", params)}

    def failed_checksums(self, user_id: str, checksums: list[str]) -> set[str]:
        """Which of these checksums the user holds as failed episodes (extraction failed)."""
        params = {"user_id": user_id, "checksums": checksums}
        return {row[0] for row in self.store.run("find_failed_episode_checksums", params)}

    def counts(self, user_id: str | None) -> dict[str, int]:
        """Users, entities, facts, valid facts and episodes: of `user_id`, or of the store."""
        statement = "count_nodes" if user_id is None else "count_user_nodes"
        row = self.store.run(statement, {"user_id": user_id})[0]
        keys = ("users", "entities", "facts", "valid_facts", "episodes")
        return {k: int(v or 0) for k, v in zip(keys, row, strict=True)}
