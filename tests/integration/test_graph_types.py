"""Entity types and relations a user declares (issue 52 M6, Graphiti's custom types): the LLM
is told them, declared entity types become labels, undeclared relations can be refused."""

from __future__ import annotations

from pathlib import Path

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, ToolCall
from tests.integration.test_ingest import llm_memory
from tests.integration.test_type_labels import labels_by_name

TYPES = {
    "entities": {"Company": "a business or employer", "Person": "a human being"},
    "relations": {"WORKS_AT": "is employed by", "FOUNDED": "started a company"},
}
REPLY = ToolCall(
    {
        "entities": [
            {"name": "Maya", "type": "person"},
            {"name": "Acme", "type": "Company"},
            {"name": "Lisbon", "type": "City"},
        ],
        "facts": [
            {
                "source": "Maya",
                "predicate": "WORKS_AT",
                "target": "Acme",
                "fact": "Maya works at Acme.",
            },
            {
                "source": "Maya",
                "predicate": "VISITED",
                "target": "Lisbon",
                "fact": "Maya visited Lisbon.",
            },
        ],
        "invalidations": [],
    }
)


def typed_memory(
    store: GraphStore, embedder: Embedder, tmp_path: Path, llm: ScriptedLLM, **types: object
) -> Memory:
    return llm_memory(store, embedder, tmp_path, llm, graph_types=TYPES | types)


def test_declared_types_reach_the_prompt_and_become_labels(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.script(REPLY)
    mem = typed_memory(store, embedder, tmp_path, scripted_llm)
    mem.add("Maya works at Acme; she visited Lisbon last week.", user_id="u1")
    system = scripted_llm.requests[0]["messages"][0]["content"]
    assert "- Company: a business or employer" in system
    assert "- WORKS_AT: is employed by" in system
    labels = labels_by_name(store, "u1")
    assert "Person" in labels["Maya"] and "Company" in labels["Acme"]  # "person" is Person
    assert "City" not in labels["Lisbon"]  # not declared: no label of its own
    assert {f.predicate for f in mem.get_all("u1")} == {"WORKS_AT", "VISITED"}


def test_only_declared_relations_leaves_the_others_out_and_says_so(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.script(REPLY)
    mem = typed_memory(store, embedder, tmp_path, scripted_llm, only_declared_relations=True)
    result = mem.add("Maya works at Acme; she visited Lisbon last week.", user_id="u1")
    assert "use only these predicates" in scripted_llm.requests[0]["messages"][0]["content"]
    assert [f.predicate for f in mem.get_all("u1")] == ["WORKS_AT"]
    assert any("'VISITED' is not declared" in error for error in result.errors)
