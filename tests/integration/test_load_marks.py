"""A load's marks (an entity's `load_marks`: the file's facts whose mentions it counted
already) survive what moves an entity: an export and import, and a merge of two entities. A
rerun of an interrupted load then counts each mention once, as a load that ran through."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.memory import Memory
from tests.integration.test_load import _mentions, _stop_after_first_chunk, _Stopped, tsv

LINES = [
    "Robert\tKNOWS\tCarol",
    "Bob\tLIVES_IN\tParis",
    "Robert\tLIKES\tJazz",
    "Bob\tOWNS\tRex",
    "Carol\tLIKES\tJazz",
]


def _interrupted(memory: Memory, path: Path, user: str) -> None:
    """`path` loaded for `user` up to its first chunk of facts: every entity written, with
    the mentions of every line, and two facts."""
    with pytest.raises(_Stopped):
        memory.load(path, user, chunk_size=2, progress=_stop_after_first_chunk("facts"))


def _facts(memory: Memory, user: str) -> dict[tuple[str, str, str], int]:
    return {f.triple: f.mentions for f in memory.get_all(user)}


def test_a_rerun_after_an_export_and_import_counts_each_mention_once(
    memory: Memory, tmp_path: Path
) -> None:
    path = tsv(tmp_path / "kb.tsv", LINES)
    memory.load(path, "whole")
    _interrupted(memory, path, "before")
    memory.import_(memory.export("before"), "after")  # the export's uids derived again
    rerun = memory.load(path, "after")
    assert (rerun.facts_added, rerun.facts_already_stored) == (3, 2)
    assert _mentions(memory, "after") == _mentions(memory, "whole")
    assert _facts(memory, "after") == _facts(memory, "whole")


def test_an_export_without_load_marks_still_imports(memory: Memory, tmp_path: Path) -> None:
    """An export written before entities carried their load marks."""
    memory.load(tsv(tmp_path / "kb.tsv", LINES), "old")
    document = json.loads(memory.export("old"))
    for entity in document["entities"]:
        entity.pop("load_marks", None)
    report = memory.import_(json.dumps(document), "new")
    assert (report.entities, report.facts) == (6, 5)
    assert _mentions(memory, "new") == _mentions(memory, "old")


def test_a_rerun_after_a_merge_counts_each_mention_once(memory: Memory, tmp_path: Path) -> None:
    path = tsv(tmp_path / "kb.tsv", LINES)
    memory.load(path, "whole")
    memory.merge_entities("Robert", "Bob", "whole")
    _interrupted(memory, path, "u1")
    memory.merge_entities("Robert", "Bob", "u1")
    os.utime(path, ns=(10**9, 10**9))  # touched: the checkpoint no longer holds
    rerun = memory.load(path, "u1")
    assert (rerun.facts_added, rerun.facts_already_stored) == (3, 2)
    assert _mentions(memory, "u1") == _mentions(memory, "whole")
    assert _facts(memory, "u1") == _facts(memory, "whole")
