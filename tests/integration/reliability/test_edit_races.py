"""Edits racing writes: what another `Memory` on the same store acknowledged while an edit by
hand (`merge_entities`) ran is kept, never deleted with what the edit removes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.memory import Memory
from engine.store.base import GraphStore
from tests.integration.reliability.conftest import Tally

USER = "racing-merge"


def test_a_fact_added_while_a_merge_runs_is_moved_not_deleted(
    shared_store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tally: Tally,
) -> None:
    mem = Memory(store=shared_store, embedder=embedder, data_dir=tmp_path / "merging")
    other = Memory(store=shared_store, embedder=embedder, data_dir=tmp_path / "adding")
    mem.add_facts([("Robert", "OWNS", "Car"), ("Bob", "LIKES", "Tea")], USER)
    read = mem.reads.entity_facts
    added: list[int] = []

    def read_then_another_writes(*args: Any, **kwargs: Any) -> Any:
        found = read(*args, **kwargs)
        if not added:  # another process names the merged entity just after the merge read it
            added.append(other.add_facts([("Robert", "OWNS", "Boat")], USER).facts_added)
        return found

    monkeypatch.setattr(mem.reads, "entity_facts", read_then_another_writes)
    kept = mem.merge_entities("Bob", "Robert", USER)
    facts = {(f.subject, f.predicate, f.object) for f in mem.get_all(USER)}
    tally.cases += 1
    tally.faults += 1
    tally.lost += int(("Bob", "OWNS", "Boat") not in facts)
    assert added == [1]  # acknowledged
    assert facts == {("Bob", "OWNS", "Car"), ("Bob", "OWNS", "Boat"), ("Bob", "LIKES", "Tea")}
    assert "Robert" in kept.aliases
