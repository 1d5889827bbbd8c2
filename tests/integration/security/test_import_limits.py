"""An import is input like any other: the document and each record meet the limits and checks
of `add_facts` and `add`, or the import is refused, naming the record, before any write."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.errors import InvalidInputError, LimitExceededError
from engine.memory import Memory
from engine.store.base import GraphStore

Doc = dict[str, Any]


@pytest.fixture
def exported(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Doc:
    """mallory's export (2 entities, 1 fact); the store is left empty."""
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    mem.add_facts([("Mal", "LIKES", "tea")], user_id="mallory")
    document: Doc = json.loads(mem.export("mallory"))
    mem.delete_all("mallory")
    return document


def _memory(store: GraphStore, embedder: Embedder, tmp_path: Path, **limits: int) -> Memory:
    return Memory(store=store, embedder=embedder, data_dir=tmp_path, **limits)


def _entity(doc: Doc, field: str, value: Any) -> Doc:
    doc["entities"][0][field] = value
    return doc


BAD: dict[str, tuple[Callable[[Doc], Doc], type[Exception], str]] = {
    "long name": (
        lambda d: _entity(d, "name", "N" * 513),
        LimitExceededError,
        "entity #0 ('",
    ),
    "blank name": (lambda d: _entity(d, "name", " \t "), InvalidInputError, "name is empty"),
    "long alias": (
        lambda d: _entity(d, "aliases", ["A" * 600]),
        LimitExceededError,
        "alias has 600 characters; the limit is 512",
    ),
    "short vector": (
        lambda d: _entity(d, "embedding", [0.5, 0.5, 0.5]),
        InvalidInputError,
        "embedding has 3 values; this store's vectors have 384",
    ),
    "long fact text": (
        lambda d: {**d, "facts": [{**d["facts"][0], "text": "t" * 4001}]},
        LimitExceededError,
        "fact #0 ('",
    ),
    "long uid": (
        lambda d: {**d, "facts": [{**d["facts"][0], "uid": "u" * 300}]},
        LimitExceededError,
        "a uid has 300 characters",
    ),
    "unknown event": (
        lambda d: {**d, "history": [{**d["history"][0], "event": "DROP"}]},
        InvalidInputError,
        "event 'DROP' is not one of",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_record_refuses_the_import_before_any_write(
    store: GraphStore, embedder: Embedder, tmp_path: Path, exported: Doc, case: str
) -> None:
    mutate, error, message = BAD[case]
    mem = _memory(store, embedder, tmp_path)
    with pytest.raises(error) as caught:
        mem.import_(json.dumps(mutate(exported)), user_id="mallory")
    assert message in str(caught.value)
    assert mem.stats("mallory").entities == 0


def test_a_name_is_cleaned_as_add_facts_cleans_it(
    store: GraphStore, embedder: Embedder, tmp_path: Path, exported: Doc
) -> None:
    mem = _memory(store, embedder, tmp_path)
    mem.import_(json.dumps(_entity(exported, "name", "  Mal\x07\u200bcolm\n ")), user_id="mallory")
    names = {se.entity.name for se in mem.top_entities("mallory")}
    assert "Mal \u200bcolm" in names  # control characters become spaces, ends trimmed


def test_a_file_over_the_size_limit_is_not_read(
    store: GraphStore, embedder: Embedder, tmp_path: Path, exported: Doc
) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(exported))
    mem = _memory(store, embedder, tmp_path, max_import_bytes=1000)
    with pytest.raises(LimitExceededError, match="bytes; the limit is 1000 \\(max_import_bytes\\)"):
        mem.import_(path, user_id="mallory")
    with pytest.raises(LimitExceededError, match="max_import_bytes"):
        mem.import_(json.dumps(exported), user_id="mallory")
    assert mem.stats("mallory").entities == 0


def test_too_many_records_are_refused(
    store: GraphStore, embedder: Embedder, tmp_path: Path, exported: Doc
) -> None:
    mem = _memory(store, embedder, tmp_path, max_import_records=3)
    with pytest.raises(LimitExceededError, match="records; the limit is 3"):
        mem.import_(json.dumps(exported), user_id="mallory")
    assert mem.stats("mallory").entities == 0
