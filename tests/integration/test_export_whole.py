"""An export restored into an empty store gives back everything the store held: every stored
property of every entity, fact (both its forms) and message, read below the engine and
compared one by one, after the verbs that write each of them (add with metadata, a failed
add, an undated record, add_facts, update, invalidate, merge)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.models import FactInput
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.testing.scripted_llm import ScriptedLLM, http_error, tool_call
from tests.integration.test_ingest import llm_memory

USER = "whole"
T = 1_700_000_000.0
_graphs = itertools.count()
# every node of the user by label, and every edge between them, with all they hold
NODES = "MATCH (n:{label} {{user_id: $user_id}}) RETURN n.uid, labels(n), properties(n)"
EDGES = (
    "MATCH (a {user_id: $user_id})-[r]->(b {user_id: $user_id}) "
    "RETURN a.uid, type(r), b.uid, properties(r)"
)
# recomputed on import from the message, not carried by the export
DERIVED: dict[str, set[str]] = {}


@pytest.fixture
def graphs(falkordb_server: EmbeddedServer, embedder: Embedder) -> Iterator[list[FalkorDBStore]]:
    made = []
    for _ in range(2):
        graph = FalkorDBStore.embedded(falkordb_server, f"whole{next(_graphs)}")
        graph.setup(embedder.dimension)
        made.append(graph)
    yield made
    for graph in made:
        graph.reset()
        graph.close()


def _rows(store: FalkorDBStore, query: str) -> list[list[Any]]:
    return list(store._graph.ro_query(query, {"user_id": USER}).result_set)


def stored(store: FalkorDBStore) -> dict[str, Any]:
    """Every node of the user by label (uid -> labels and properties), and every edge."""
    out: dict[str, Any] = {}
    for label in ("Entity", "Fact", "Episode"):
        skip = DERIVED.get(label, set())
        out[label] = {
            uid: (sorted(labels), {k: v for k, v in props.items() if k not in skip})
            for uid, labels, props in _rows(store, NODES.format(label=label))
        }
    edges = _rows(store, EDGES)
    out["edges"] = sorted((a, t, b, sorted(p.items())) for a, t, b, p in edges)
    return out


def _extraction() -> dict[str, Any]:
    return {
        "entities": [
            {"name": "Ann", "type": "person", "aliases": []},
            {"name": "Oslo", "type": "city", "aliases": []},
            {"name": "Annie", "type": "person", "aliases": []},
        ],
        "facts": [
            {"source": "Ann", "predicate": "LIVES_IN", "target": "Oslo",
             "fact": "Ann lives in Oslo"},
            {"source": "Annie", "predicate": "LIKES", "target": "Oslo",
             "fact": "Annie likes Oslo"},
        ],
        "invalidations": [],
    }  # fmt: skip


def build(mem: Memory, llm: ScriptedLLM) -> None:
    """What each verb writes: messages with metadata, session, speaker and source; a failed
    message; an undated one; facts with types, valid_at and confidence; a fact's text and
    ends changed by hand; two entities merged."""
    llm.script(tool_call(_extraction()))
    said = {"role": "user", "content": "My sister Ann lives in Oslo", "name": "Bob"}
    mem.add([said], USER, session_id="s1", ts=T, source="chat:1", metadata={"topic": "family"})
    llm.script(http_error(400, "bad request"))
    mem.add("I am moving soon", USER, ts=T + 60)
    mem.ingest([{"role": "user", "content": "no time on this one", "source": "log:7"}], USER)
    fact = FactInput(subject="Ann", predicate="works at", object="Acme", subject_type="person",
                     object_type="company", valid_at=T - 86_400, confidence=0.75)  # fmt: skip
    mem.add_facts([fact], USER)
    by_text = {f.text: f.uid for f in mem.get_all(USER)}
    mem.update(by_text["Ann works at Acme"], USER, text="Ann works at Acme Corp")
    mem.update(by_text["Ann lives in Oslo"], USER, invalid_at=T + 3_600)
    mem.merge_entities("Ann", "Annie", USER)


def test_an_export_restored_into_an_empty_store_holds_every_property(
    graphs: list[FalkorDBStore], embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    source, empty = graphs
    build(llm_memory(source, embedder, tmp_path / "a", scripted_llm), scripted_llm)
    before = stored(source)
    document = Memory(store=source, embedder=embedder, data_dir=tmp_path / "a").export(USER)

    Memory(store=empty, embedder=embedder, data_dir=tmp_path / "b").import_(document, USER)
    after = stored(empty)

    assert any(fact.get("updated_at") for _, fact in before["Fact"].values())
    assert len(before["Episode"]) == 3 and before["edges"]
    for label in ("Entity", "Fact", "Episode"):
        assert set(after[label]) == set(before[label]), label
        for uid, (labels, props) in before[label].items():
            got_labels, got = after[label][uid]
            lost = {k: v for k, v in props.items() if got.get(k) != v}
            assert (label, uid, lost, got_labels) == (label, uid, {}, labels)
            assert set(got) == set(props), (label, uid)
    assert after["edges"] == before["edges"]
