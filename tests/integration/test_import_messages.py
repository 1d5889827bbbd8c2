"""An import for another user keys each message as that user's own `add` keys it: the same
dated message added after is recognised as held, never stored a second time; an import for
the file's own user, and an import run again, write nothing new."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder, as_param
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer.export import read_snapshot

# the same words twice in one call, and by two speakers: each keyed its own way
SAID: list[dict[str, Any]] = [
    {"role": "user", "content": "I moved to Lisbon in May."},
    {"role": "assistant", "content": "Nice! How do you like it?"},
    {"role": "user", "content": "Yes"},
    {"role": "user", "content": "Yes"},
    {"role": "user", "content": "Yes", "name": "Carol"},
]
# a time to the microsecond, as a datetime gives it
WHEN = "2024-05-01T09:30:00.123456"


@pytest.fixture
def mem(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Memory:
    return Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)


def _messages(mem: Memory, user: str) -> list[tuple[str, str, str]]:
    episodes = read_snapshot(mem.store, user).episodes
    return sorted((p.content, p.speaker or "", p.checksum) for p in episodes)


def test_a_message_imported_for_another_user_is_held_when_that_user_adds_it(mem: Memory) -> None:
    """alice's messages imported for bob kept her checksums: bob adding the same messages (words,
    speaker, session, time) stored each a second time."""
    mem.add(SAID, "u-alice", session_id="s1", ts=WHEN)
    mem.import_(mem.export("u-alice"), "bob")
    imported = _messages(mem, "bob")
    result = mem.add(SAID, "bob", session_id="s1", ts=WHEN)
    assert (result.episode_uids, result.episodes_skipped) == ([], len(SAID))
    assert _messages(mem, "bob") == imported
    assert len(imported) == len(SAID)
    _sources_are_held(mem, "bob")


def _sources_are_held(mem: Memory, user: str) -> None:
    """Every fact's source messages are the user's own episodes, and some fact has one."""
    copy = read_snapshot(mem.store, user)
    sources = {uid for f in copy.facts for uid in f.episodes}
    assert sources and sources <= {p.uid for p in copy.episodes}


def test_an_import_for_another_user_run_again_writes_nothing_new(mem: Memory) -> None:
    mem.add(SAID, "u-alice", session_id="s1", ts=WHEN)
    first = mem.import_(mem.export("u-alice"), "bob")
    imported = read_snapshot(mem.store, "bob")
    again = mem.import_(mem.export("u-alice"), "bob")
    assert (first.episodes_held, again.episodes_held) == (0, len(SAID))
    assert read_snapshot(mem.store, "bob").episodes == imported.episodes
    _sources_are_held(mem, "bob")


def test_an_ingested_log_imported_for_another_user_is_held_when_it_ingests_it(
    mem: Memory, tmp_path: Path
) -> None:
    """A chat log's messages are keyed by their time (`timed_checksum`), or, without one, by
    their line: both with the user id."""
    lines = [
        {"session_id": "s1", "role": "user", "content": "I adopted a dog.", "ts": WHEN},
        {"session_id": "s1", "role": "assistant", "content": "What is its name?"},
    ]
    log = tmp_path / "chat.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    mem.ingest(log, user_id="u-alice")
    mem.import_(mem.export("u-alice"), "bob")
    imported = _messages(mem, "bob")
    report = mem.ingest(log, user_id="bob")
    assert (report.messages_added, report.messages_skipped) == (0, len(lines))
    assert _messages(mem, "bob") == imported


def test_an_import_for_another_user_keys_messages_as_its_own_add_does(mem: Memory) -> None:
    mem.add(SAID, "u-alice", session_id="s1", ts=WHEN)
    mem.add(SAID, "bob", session_id="s1", ts=WHEN)
    own = {(p.uid, p.checksum) for p in read_snapshot(mem.store, "bob").episodes}
    report = mem.import_(mem.export("u-alice"), "bob")
    again = mem.import_(mem.export("u-alice"), "bob")
    assert {(p.uid, p.checksum) for p in read_snapshot(mem.store, "bob").episodes} == own
    assert report.episodes_held == again.episodes_held == len(SAID)


def _similarity(mem: Memory, user: str, text: str) -> float:
    """How near `text` is the vector of the user's one message."""
    [uid] = [p.uid for p in read_snapshot(mem.store, user).episodes]
    params = {"user_id": user, "uids": [uid], "embedding": as_param(mem.embedder.encode([text])[0])}
    return float(mem.store.run("score_episode_vectors", params)[0][1])


def test_a_file_naming_a_held_message_does_not_rewrite_it(mem: Memory) -> None:
    """A message the user holds is matched by its checksum alone: a file giving that checksum
    other words (the user's own file edited, or one another user handed them, its checksum
    kept) replaced the stored message's words, speaker, time and metadata, and its vector."""
    said = "My PIN is 4321 and I live in Paris"
    mem.add(said, "bob", session_id="s1", ts=WHEN)
    held = read_snapshot(mem.store, "bob").episodes
    near = _similarity(mem, "bob", said)
    for owner in ("bob", "u-alice"):
        doc = json.loads(mem.export("bob"))
        doc["user_id"] = owner
        for p in doc["episodes"]:
            p.update(content="I never said a PIN", speaker="Mallory", ts=p["ts"] + 60,
                     metadata=json.dumps({"forged": True}))  # fmt: skip
        report = mem.import_(json.dumps(doc), "bob")
        assert report.episodes_held == len(held)
        assert read_snapshot(mem.store, "bob").episodes == held
        assert _similarity(mem, "bob", said) == pytest.approx(near, abs=1e-4)
