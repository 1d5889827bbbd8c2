"""Writes are keyed by (user_id, uid): a node one user writes can never capture another
user's later write of the same uid. uids are unsalted hashes anyone can compute from a user
id and names, so a crafted write below the public API (or a crafted import) could otherwise
pre-empt them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from engine.add.messages import episode_rows, parse_message
from engine.add.resolve import self_uid
from engine.embedding import Embedder, as_param
from engine.extraction.offline import OfflineExtractor
from engine.memory import Memory
from engine.normalize import stable_uid
from engine.store.base import EntityRow, EpisodeRow, FactRow, GraphStore, HistoryRow, WriteBatch
from engine.store.reads import Reads
from engine.transfer.export import read_snapshot
from engine.transfer.restore import rekey
from engine.transfer.snapshot import EntityRecord, FactRecord, GraphSnapshot

MALLORY, BOB = "mallory", "bob"


def _bob_fact_uid() -> str:
    """The uid bob's ("Alice", "FRIEND_OF", "John") will have: computable by anyone."""
    return stable_uid(BOB, stable_uid(BOB, "alice"), "FRIEND_OF", stable_uid(BOB, "john"))


def _mallory_batch(embedder: Embedder, fact_uid: str, episode_uid: str) -> WriteBatch:
    now = time.time()
    vector = as_param(embedder.encode_one("trap"))
    trap = EntityRow("m-trap", "trap", "Trap", None, now)
    bait = EntityRow("m-bait", "bait", "Bait", None, now)
    return WriteBatch(
        entities=[trap, bait],
        entity_embeddings={"m-trap": vector, "m-bait": vector},
        facts=[FactRow(fact_uid, "m-trap", "m-bait", "FRIEND_OF", "Trap friend of Bait", now)],
        fact_embeddings={fact_uid: vector},
        episodes=[EpisodeRow(episode_uid, None, "user", "trap", now, None, "c", "ok", ("m-trap",))],
        history=[HistoryRow("h-shared", fact_uid, "ADD", now)],
    )


def _graph_of(store: GraphStore, user: str) -> tuple[object, ...]:
    listed = Reads(store).list_facts(user, include_invalid=True, skip=0, limit=100)
    facts = sorted((f.uid, f.triple, f.mentions) for f in listed)
    snapshot = read_snapshot(store, user)
    episodes = sorted((e.uid, e.content) for e in snapshot.episodes)
    entities = sorted((e.uid, e.name) for e in snapshot.entities)
    return facts, episodes, entities


def test_a_pre_empted_uid_does_not_capture_another_users_writes(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    ts = 1_700_000_000.0
    message = parse_message({"role": "user", "content": "I like green tea"}, 32_000)
    (episode,) = episode_rows(BOB, [message], None, ts, None, None)
    store.write(MALLORY, _mallory_batch(embedder, _bob_fact_uid(), episode.uid))
    before = _graph_of(store, MALLORY)

    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    added = mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id=BOB)
    kept = mem.add("I like green tea", user_id=BOB, timestamp=ts)
    store.write(BOB, WriteBatch(history=[HistoryRow("h-shared", "x", "ADD", ts)]))

    assert added.fact_uids == [_bob_fact_uid()] and added.facts_added == 1
    (fact,) = [f for f in mem.get_all(BOB) if f.uid == _bob_fact_uid()]
    assert (fact.user_id, fact.triple, fact.mentions) == (BOB, ("Alice", "FRIEND_OF", "John"), 1)
    assert kept.episode_uids == [episode.uid]
    assert [e.content for e in Reads(store).episodes_by_uids(BOB, [episode.uid])] == [
        "I like green tea"
    ]
    history = read_snapshot(store, BOB).history
    assert [h.target_uid for h in history if h.uid == "h-shared"] == ["x"]
    assert _graph_of(store, MALLORY) == before  # nothing of bob's reached mallory's graph
    names = {name for _, name in _graph_of(store, BOB)[2]}
    assert not names & {"Trap", "Bait"}


def test_an_imported_file_cannot_choose_its_uids(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """An import is re-keyed even for the file's own user: a uid in the file is never
    written as given, so a crafted export cannot place one; an honest one comes back as it
    was."""
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    mem.add_facts([("Trap", "FRIEND_OF", "Bait"), ("Bait", "LIKES", "Trap")], user_id=MALLORY)
    document = json.loads(mem.export(MALLORY))
    honest = sorted(f["uid"] for f in document["facts"])
    document["facts"][0]["uid"] = _bob_fact_uid()
    mem.delete_all(MALLORY)

    report = mem.import_(json.dumps(document), users_from_file=True)
    added = mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id=BOB)

    assert report.user_id == MALLORY
    imported = sorted(f.uid for f in mem.get_all(MALLORY))
    assert _bob_fact_uid() not in imported
    assert len(set(imported) & set(honest)) == 1  # the untouched record kept its uid
    assert added.facts_added == 1
    assert [f.triple for f in mem.get_all(BOB)] == [("Alice", "FRIEND_OF", "John")]


def test_rekeying_rederives_the_engine_s_uids_for_the_same_and_another_user() -> None:
    """The user's own name is a fact from the self entity to itself whose uid carries the
    name (engine.add.changes.fact_row): an import finds the name again instead of inventing a
    uid, so re-importing an export into its own store lands on the same node."""
    me = self_uid(MALLORY)
    own_name = stable_uid(MALLORY, me, "HAS_NAME", me, "mal")
    snapshot = GraphSnapshot(
        user_id=MALLORY,
        exported_at=0.0,
        entities=[
            EntityRecord(uid=me, key="user", name="Mal", aliases=["USER"], alias_keys=["mal"])
        ],
        facts=[
            FactRecord(
                uid=own_name,
                subject_uid=me,
                object_uid=me,
                predicate="HAS_NAME",
                text="The user's name is Mal",
            )
        ],
    )
    assert rekey(snapshot, MALLORY) == snapshot
    (fact,) = rekey(snapshot, BOB).facts
    assert fact.uid == stable_uid(BOB, self_uid(BOB), "HAS_NAME", self_uid(BOB), "mal")
