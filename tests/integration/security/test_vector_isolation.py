"""No user is starved by another: a vector read returns the asking user's own nearest facts
and entities however many vectors other users have near the query (issue 15: a 3-fact user
beside a 6,000-fact user got none of its facts)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store import nearest as vector_reads
from engine.store.base import EntityRow, EpisodeRow, FactRow, GraphStore, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads

QUERY = "which pets does the family own"
CROWD = 6_000  # more than the index's widest read (vector_reads.MAX_VECTOR_K)
_rng = np.random.default_rng(15)


def _near(q: np.ndarray, cos: np.ndarray) -> np.ndarray:
    """Unit vectors with the given cosines to the unit vector `q`."""
    noise = _rng.standard_normal((len(cos), len(q)))
    noise -= np.outer(noise @ q, q)
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    out: np.ndarray = cos[:, None] * q + np.sqrt(1 - cos[:, None] ** 2) * noise
    return out.astype(np.float32)


def _write(
    store: GraphStore, user: str, vectors: np.ndarray, away: np.ndarray
) -> dict[str, np.ndarray]:
    """One fact per vector, each with a subject entity and a message of its own carrying the
    same vector; return the vectors by fact, entity and message uid."""
    now, out = time.time(), {}
    pet = EntityRow(f"{user}-pet", "pet", "pet", None, now)
    for start in range(0, len(vectors), 500):
        batch = WriteBatch(entities=[pet], entity_embeddings={pet.uid: away.tolist()})
        for i, vector in enumerate(vectors[start : start + 500], start=start):
            entity, fact = f"{user}-e{i}", f"{user}-f{i}"
            batch.entities.append(EntityRow(entity, f"owner {i}", f"Owner {i}", None, now))
            batch.entity_embeddings[entity] = vector.tolist()
            batch.facts.append(FactRow(fact, entity, pet.uid, "OWNS", f"{user} {i}", now))
            batch.fact_embeddings[fact] = vector.tolist()
            said = f"{user}-p{i}"
            batch.episodes.append(EpisodeRow(said, None, "user", f"{user} {i}", now, None, said))
            batch.episode_embeddings[said] = vector.tolist()
            out[entity] = out[fact] = out[said] = vector
        store.write(user, batch)
    return out


class Crowd:
    """bob: 6,000 facts and entities right next to the query; carol: 3 of each further off;
    dave: 60 at every distance."""

    def __init__(self, store: GraphStore, query: np.ndarray) -> None:
        self.store, self.query = store, query
        away = -query  # the shared "pet" object entity: never among the nearest
        self.bob = _write(store, "bob", _near(query, _rng.uniform(0.85, 0.95, CROWD)), away)
        self.carol = _write(store, "carol", _near(query, np.array([0.2, 0.1, 0.0])), away)
        self.dave = _write(store, "dave", _near(query, _rng.uniform(-0.2, 0.8, 60)), away)

    def truth(self, vectors: dict[str, np.ndarray], kind: str, k: int) -> list[str]:
        """The k nearest of one user's facts ("f"), entities ("e") or messages ("p"), by
        brute force."""
        uids = [u for u in vectors if u.split("-")[-1].startswith(kind)]
        sims = [float(vectors[u] @ self.query) for u in uids]
        return [uids[i] for i in np.argsort(sims)[::-1][:k]]


@pytest.fixture(scope="module", params=["falkordb", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def crowd(
    request: pytest.FixtureRequest, falkordb_server: EmbeddedServer, embedder: Embedder
) -> Iterator[Crowd]:
    if request.param == "neo4j":
        from tests.neo4j_fixture import neo4j_store_or_skip

        store: GraphStore = neo4j_store_or_skip(embedder.dimension)
    else:
        store = FalkorDBStore.embedded(falkordb_server, "crowded")
        store.setup(embedder.dimension)
    yield Crowd(store, embedder.encode_one(QUERY).astype(np.float32))
    store.reset()
    store.close()


def _fact_uids(crowd: Crowd, user: str, k: int) -> list[str]:
    hits = Reads(crowd.store).vector_facts(user, crowd.query.tolist(), k, include_invalid=False)
    assert all(f.user_id == user for f, _ in hits)
    return [f.uid for f, _ in hits]


def _entity_uids(crowd: Crowd, user: str, k: int) -> list[str]:
    hits = Reads(crowd.store).vector_entities(user, crowd.query.tolist(), k)
    assert all(e.user_id == user for e, _ in hits)
    return [e.uid for e, _ in hits if e.uid.split("-")[-1] != "pet"]


def _episode_uids(crowd: Crowd, user: str, k: int) -> list[str]:
    return [uid for uid, _ in Reads(crowd.store).vector_episodes(user, crowd.query.tolist(), k)]


def test_a_small_user_beside_a_big_one_gets_its_messages(crowd: Crowd) -> None:
    assert _episode_uids(crowd, "carol", 10) == ["carol-p0", "carol-p1", "carol-p2"]
    assert _episode_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "p", 10)


def test_a_small_user_beside_a_big_one_gets_its_facts(crowd: Crowd) -> None:
    assert _fact_uids(crowd, "carol", 10) == ["carol-f0", "carol-f1", "carol-f2"]


def test_a_small_user_beside_a_big_one_gets_its_entities(crowd: Crowd) -> None:
    assert _entity_uids(crowd, "carol", 10) == ["carol-e0", "carol-e1", "carol-e2"]


def test_semantic_search_of_a_small_user_is_not_empty(
    crowd: Crowd, embedder: Embedder, tmp_path: Path
) -> None:
    memory = Memory(store=crowd.store, embedder=embedder, data_dir=tmp_path)
    result = memory.search(QUERY, user_id="carol", mode="semantic")
    assert [hit.fact.uid for hit in result.facts] == ["carol-f0", "carol-f1", "carol-f2"]
    result = memory.search(QUERY, user_id="dave", limit=10, mode="semantic")
    assert [hit.fact.uid for hit in result.facts] == crowd.truth(crowd.dave, "f", 10)


def test_a_small_user_gets_its_exact_top_k(crowd: Crowd) -> None:
    assert _fact_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "f", 10)
    assert _entity_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "e", 10)


def test_a_big_user_reads_the_index_and_gets_its_top_k(crowd: Crowd) -> None:
    assert len(crowd.bob) // 3 > vector_reads.SCAN_MAX  # so bob is read through the index
    assert set(_fact_uids(crowd, "bob", 10)) == set(crowd.truth(crowd.bob, "f", 10))
    assert set(_entity_uids(crowd, "bob", 10)) == set(crowd.truth(crowd.bob, "e", 10))
    assert set(_episode_uids(crowd, "bob", 10)) == set(crowd.truth(crowd.bob, "p", 10))


def test_when_the_index_runs_dry_the_user_is_scanned(
    crowd: Crowd, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dave is made to count as large: the index, crowded by bob, yields too few of his
    facts, and the scan still finds his exact top 10."""
    monkeypatch.setattr(vector_reads, "SCAN_MAX", 20)
    assert _fact_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "f", 10)
    assert _entity_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "e", 10)
    assert _episode_uids(crowd, "dave", 10) == crowd.truth(crowd.dave, "p", 10)


def test_the_decision_scans_small_users_and_falls_back_when_the_index_runs_dry() -> None:
    asked: list[str] = []

    def count(cap: int) -> int:
        asked.append(f"count<{cap}")
        return size

    def index(n: int, keep: int) -> list[list[object]]:
        asked.append(f"index{n}")
        return [[i] for i in range(n * share // 100)][:keep]

    def scan(keep: int) -> list[list[object]]:
        asked.append("scan")
        return [[0]] * min(keep, size)

    size, share = 3, 0
    assert vector_reads.nearest(count, index, scan, 10) == [[0]] * 3
    assert asked == [f"count<{vector_reads.SCAN_MAX + 1}", "scan"]
    asked.clear()
    size, share = 100_000, 50  # half the index is this user's: one read suffices
    assert len(vector_reads.nearest(count, index, scan, 10)) == 10
    assert asked[1:] == ["index80"]
    asked.clear()
    share = 5  # a small part of the index: a read four times as wide finds it at its head
    assert len(vector_reads.nearest(count, index, scan, 10)) == 10
    assert asked[1:] == ["index80", "index320"]
    asked.clear()
    share = 1  # a smaller part still: scanned, not read from the index's tail
    assert len(vector_reads.nearest(count, index, scan, 10)) == 10
    assert asked[1:] == ["index80", "index320", "scan"]
