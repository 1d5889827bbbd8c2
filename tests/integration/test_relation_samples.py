"""A relation's sample on FalkorDB: read through the user's facts while fewer than
`SAMPLED_BY_FACTS` have the relations asked, by type otherwise."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest

from engine.add.facts import facts_batch, validate_facts
from engine.config import Settings
from engine.embedding import Embedder
from engine.store import reads as reads_module
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads

_graphs = itertools.count()
LIVES_IN = [("Ann", "LIVES_IN", "Paris"), ("Bob", "LIVES_IN", "Rome"), ("Cid", "LIVES_IN", "Oslo")]
KNOWS = [("Ann", "KNOWS", "Bob"), ("Bob", "KNOWS", "Cid"), ("Cid", "KNOWS", "Ann")]


@pytest.fixture
def store(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[FalkorDBStore]:
    store = FalkorDBStore.embedded(falkordb_server, f"relation_samples{next(_graphs)}")
    store.setup(embedder.dimension)
    for user, facts in (("u", LIVES_IN + KNOWS), ("other", LIVES_IN)):
        batch, _ = facts_batch(Reads(store), embedder, user, validate_facts(facts, Settings()))
        store.write(user, batch)
    yield store
    store.close()


def _statements(store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    names: list[str] = []
    run = store.run

    def spy(name: str, params: dict[str, Any], **kwargs: Any) -> Any:
        names.append(name)
        return run(name, params, **kwargs)

    monkeypatch.setattr(store, "run", spy)
    return names


def _by_type(store: FalkorDBStore, predicates: list[str], k: int) -> dict[str, list[Any]]:
    rows = store.run(
        "sample_relation_ends", {"user_id": "u", "k": k}, rel_type_groups=[[p] for p in predicates]
    )
    return {p: [(s, o) for q, s, o in rows if q == p] for p in predicates}


@pytest.mark.parametrize("k", [2, 10])
def test_few_facts_are_sampled_through_the_facts(
    store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch, k: int
) -> None:
    every = _by_type(store, ["LIVES_IN", "KNOWS"], 10)
    names = _statements(store, monkeypatch)

    found = Reads(store).relation_ends("u", ["LIVES_IN", "KNOWS"], k)

    assert names == ["sample_relation_ends_by_facts"]
    for predicate, pairs in found.items():
        assert len(pairs) == min(k, 3) and set(pairs) <= set(every[predicate])


def test_relations_with_many_facts_are_sampled_by_type(
    store: FalkorDBStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(reads_module, "SAMPLED_BY_FACTS", 6)  # the two relations hold 6 facts
    expected = _by_type(store, ["LIVES_IN", "KNOWS"], 2)
    names = _statements(store, monkeypatch)

    found = Reads(store).relation_ends("u", ["LIVES_IN", "KNOWS"], 2)
    few = Reads(store).relation_ends("u", ["LIVES_IN"], 2)

    assert names == [
        "sample_relation_ends_by_facts",
        "sample_relation_ends",
        "sample_relation_ends_by_facts",
    ]
    assert found == expected
    assert len(few["LIVES_IN"]) == 2


def test_a_sample_keeps_its_facts_when_their_entities_are_written_again(
    store: FalkorDBStore, embedder: Embedder
) -> None:
    """A sample cut at `k` keeps the same facts: later writes to their entities reorder the
    entity index a typed read follows, not the nodes."""
    reads = Reads(store)
    before = reads.relation_ends("u", ["LIVES_IN"], 2)
    again = [("Paris", "PART_OF", "France"), ("Ann", "LIKES", "Tea"), ("Bob", "LIKES", "Tea")]
    batch, _ = facts_batch(reads, embedder, "u", validate_facts(again, Settings()))
    store.write("u", batch)

    assert reads.relation_ends("u", ["LIVES_IN"], 2) == before
