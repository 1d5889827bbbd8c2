"""Entity types as labels (:Entity:Person) and the labels LlamaIndex reads, on every adapter."""

from __future__ import annotations

from typing import Any

from engine.memory import Memory
from engine.models import FactInput
from engine.store.base import GraphStore

# test-only reads straight through each adapter's driver (the engine never asks for labels)
_LABELS = (
    "MATCH (e:Entity {user_id: $user_id}) RETURN e.name, labels(e), e.id, e.uid ORDER BY e.name"
)
_FACT_IDS = "MATCH (f:Fact {user_id: $user_id}) RETURN f.id, f.uid"


def raw(store: GraphStore, text: str, user_id: str) -> list[list[Any]]:
    if store.dialect == "neo4j":
        records, _, _ = store._driver.execute_query(text, {"user_id": user_id})  # type: ignore[attr-defined]
        return [list(r.values()) for r in records]
    return list(store._graph.ro_query(text, {"user_id": user_id}).result_set)  # type: ignore[attr-defined]


def labels_by_name(store: GraphStore, user_id: str) -> dict[str, set[str]]:
    return {row[0]: set(row[1]) for row in raw(store, _LABELS, user_id)}


def _typed(memory: Memory, user_id: str = "alice") -> None:
    memory.add_facts(
        [
            FactInput(
                subject="Alice",
                predicate="OWNS",
                object="Tommy",
                subject_type="person",
                object_type="animal",
            ),
            FactInput(subject="Alice", predicate="LIVES_IN", object="Paris", object_type="city"),
            ("Tommy", "LIKES", "bones"),
        ],
        user_id=user_id,
    )


def test_a_typed_entity_gets_its_type_as_a_label(memory: Memory) -> None:
    _typed(memory)
    labels = labels_by_name(memory.store, "alice")
    assert labels["Alice"] == {"Entity", "Person", "__Entity__", "__Node__"}
    assert labels["Tommy"] == {"Entity", "Animal", "__Entity__", "__Node__"}
    assert labels["Paris"] == {"Entity", "City", "__Entity__", "__Node__"}
    assert labels["bones"] == {"Entity", "__Entity__", "__Node__"}


def test_entities_and_facts_carry_the_id_llama_index_reads(memory: Memory) -> None:
    _typed(memory)
    assert all(row[2] == row[3] for row in raw(memory.store, _LABELS, "alice"))
    facts = raw(memory.store, _FACT_IDS, "alice")
    assert len(facts) == 3
    assert all(fid == uid for fid, uid in facts)


def test_a_stored_type_is_kept_and_no_second_type_label_is_added(memory: Memory) -> None:
    _typed(memory)
    memory.add_facts(
        [FactInput(subject="Alice", predicate="KNOWS", object="Bob", subject_type="robot")],
        user_id="alice",
    )
    assert "Robot" not in labels_by_name(memory.store, "alice")["Alice"]
    assert memory.entity("Alice", "alice").entity.type == "Person"


def test_export_and_import_keep_the_type_labels(memory: Memory) -> None:
    _typed(memory)
    report = memory.import_(memory.export("alice"), user_id="bob")
    assert report.entities == 4
    assert labels_by_name(memory.store, "bob") == labels_by_name(memory.store, "alice")
    script = memory.export("alice", "cypher")
    assert "SET e:`Person`" in script
    assert "SET e:__LABEL__" not in script
