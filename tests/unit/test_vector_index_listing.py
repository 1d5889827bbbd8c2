"""Which vector indexes a FalkorDB graph has declared, read from `db.indexes()`: while a
label's indexes are built again FalkorDB lists two, and the one being built is the truth."""

from __future__ import annotations

import contextlib
from typing import Any

from engine.store.falkordb_schema import FalkorDBSchema

IN_USE = "OPERATIONAL"
BUILDING = "[Indexing] 0/20000: UNDER CONSTRUCTION"
EPISODE = {"content": ["FULLTEXT"], "uid": ["RANGE"]}
WITH_VECTOR = {**EPISODE, "embedding": ["VECTOR"]}
ENTITY = {"name": ["RANGE"], "embedding": ["VECTOR"]}


def _schema(rows: list[tuple[str, dict[str, list[str]], str]]) -> FalkorDBSchema:
    def run(name: str, params: dict[str, Any], *, read_only: bool = True) -> list[Any]:
        assert name == "list_indexes"
        return [list(row) for row in rows]

    return FalkorDBSchema(
        run, lambda *_: None, contextlib.nullcontext, "g", server=None, on_restart=lambda: None
    )


def test_a_vector_index_just_dropped_is_not_declared_while_the_rest_is_rebuilt() -> None:
    schema = _schema(
        [
            ("Entity", ENTITY, IN_USE),
            ("Episode", EPISODE, BUILDING),
            ("Episode", WITH_VECTOR, IN_USE),
        ]
    )
    assert schema.vector_indexes() == {"Entity"}


def test_a_vector_index_being_built_is_declared() -> None:
    schema = _schema([("Episode", WITH_VECTOR, BUILDING), ("Episode", EPISODE, IN_USE)])
    assert schema.vector_indexes() == {"Episode"}
