"""A user id holding an invisible format character ("alice\u200b"), stored by a version that
did not refuse it: its owner still reads, exports and deletes what it holds, at the doors
that read or delete; nothing new is stored for it, and no other user is reached through it.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

from engine.add.facts import validate_facts
from engine.cli import main
from engine.cli import verbs as cli_verbs
from engine.embedding import Embedder
from engine.errors import InvalidInputError
from engine.memory import Memory

OLD_ID = "alice\u200b"  # shown as "alice"
TWIN = "alice"


def _store_as_an_old_version(memory: Memory, user_id: str) -> None:
    """Under the door: the add step `add_facts` hands its facts to, as before the refusal."""
    facts = validate_facts([("Alice", "LIVES_IN", "Oslo")], memory.settings)
    memory._setup(vectors=True)
    memory._adder.add_facts(facts, user_id)


def test_an_id_an_older_version_stored_is_read_exported_and_deleted(memory: Memory) -> None:
    _store_as_an_old_version(memory, OLD_ID)
    memory.add_facts([("Alice", "LIVES_IN", "Berlin")], TWIN)

    assert [f.text for f in memory.get_all(OLD_ID)] == ["Alice lives in Oslo"]
    assert memory.stats(OLD_ID).facts == 1
    exported = json.loads(memory.export(OLD_ID))
    assert [f["text"] for f in exported["facts"]] == ["Alice lives in Oslo"]
    assert memory.delete_all(OLD_ID) > 0

    assert [u.user_id for u in memory.users()] == [TWIN]
    assert [f.text for f in memory.get_all(TWIN)] == ["Alice lives in Berlin"]
    with pytest.raises(InvalidInputError, match="invisible format character U\\+200B"):
        memory.get_all(OLD_ID)  # held no more: refused as any such id


def test_an_old_ids_fact_is_forgotten_one_by_one(memory: Memory) -> None:
    _store_as_an_old_version(memory, OLD_ID)
    fact = memory.get_all(OLD_ID)[0]

    gone = memory.forget(fact.uid, OLD_ID)

    assert gone.facts == [fact.uid]
    assert memory.users() == []  # its entities went with the fact that named them


def test_nothing_new_is_stored_for_an_old_id(memory: Memory) -> None:
    _store_as_an_old_version(memory, OLD_ID)
    with pytest.raises(InvalidInputError, match="invisible format character"):
        memory.add_facts([("Alice", "LIVES_IN", "Rome")], OLD_ID)
    with pytest.raises(InvalidInputError, match="invisible format character"):
        memory.add("I live in Rome", OLD_ID)
    assert [f.text for f in memory.get_all(OLD_ID)] == ["Alice lives in Oslo"]


def test_an_id_the_store_does_not_hold_is_refused_by_reads_and_deletes(memory: Memory) -> None:
    memory.add_facts([("Alice", "LIVES_IN", "Berlin")], TWIN)
    for call in (memory.get_all, memory.export, memory.delete_all, memory.stats):
        with pytest.raises(InvalidInputError, match="invisible format character"):
            call(OLD_ID)
    assert memory.stats(TWIN).facts == 1


def test_users_shows_an_old_id_escaped_and_export_takes_it(
    cli_home: Path,
    embedder: Embedder,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Memory(data_dir=cli_home, embedder=embedder) as memory:
        _store_as_an_old_version(memory, OLD_ID)
        memory.add_facts([("Alice", "LIVES_IN", "Berlin")], TWIN)
    monkeypatch.setattr(cli_verbs, "Memory", functools.partial(Memory, embedder=embedder))
    capsys.readouterr()

    assert main(["users", "--data-dir", str(cli_home)]) == 0
    listed = capsys.readouterr().out
    assert main(["export", "--user", OLD_ID, "--data-dir", str(cli_home)]) == 0
    exported = json.loads(capsys.readouterr().out)

    assert "alice\\u200b *" in listed and "\u200b" not in listed
    assert [f["text"] for f in exported["facts"]] == ["Alice lives in Oslo"]
