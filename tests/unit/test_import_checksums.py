"""An import's messages for another user are keyed as that user's own add and ingest key
them (`engine.transfer.checksums`), whatever way the file's user's checksums were made."""

from __future__ import annotations

from dataclasses import replace

from engine.add.keys import fresh_rows, message_keys
from engine.add.messages import episode_rows, id_checksum, parse_message, timed_checksum
from engine.extraction.schema import ChatMessage
from engine.models import Episode
from engine.store.base import EpisodeRow
from engine.transfer.checksums import for_target
from engine.transfer.snapshot import EpisodeRecord, GraphSnapshot

WHEN = 1714555800.123456  # to the microsecond: FalkorDB gives it back as 1714555800.12346
SAID = [
    ("user", "I moved to Lisbon.", None),
    ("assistant", "Nice!", None),
    ("user", "Yes", None),
    ("user", "Yes", None),
    ("user", "Yes", "Carol"),
]


def _read_back(ts: float) -> float:
    """A time as FalkorDB gives it back: 15 significant digits."""
    return float(f"{ts:.15g}")


def _keyed(
    user: str, said: list[tuple[str, str, str | None]] = SAID, holds: list[EpisodeRow] | None = None
) -> list[EpisodeRow]:
    """The rows a dated add of `said` stores in a store holding `holds`."""
    messages = [ChatMessage(role=r, content=c, name=n) for r, c, n in said]
    rows = episode_rows(user, messages, "s1", WHEN, None, None)
    fresh = fresh_rows(
        message_keys(user, rows, WHEN), {r.uid: _episode(user, r) for r in holds or []}
    )
    return [fresh[i] for i in range(len(rows))]


def _records(rows: list[EpisodeRow]) -> list[EpisodeRecord]:
    return [
        EpisodeRecord(
            uid=r.uid,
            session_id=r.session_id,
            role=r.role,
            speaker=r.speaker,
            content=r.content,
            ts=_read_back(r.ts),
            source=r.source,
            checksum=r.checksum,
        )
        for r in rows
    ]


def _imported(
    user: str, records: list[EpisodeRecord], target: str, holds: list[EpisodeRow] | None = None
) -> list[str]:
    """The checksums of `records` imported for `target`, who holds `holds`."""
    held = {row.uid: _episode(target, row) for row in holds or []}

    def holding(uids: list[str]) -> list[Episode]:
        return [held[uid] for uid in uids if uid in held]

    snapshot = GraphSnapshot(user_id=user, exported_at=0.0, episodes=records)
    return [p.checksum for p in for_target(snapshot, target, holding).episodes]


def _episode(user: str, row: EpisodeRow) -> Episode:
    return Episode(
        uid=row.uid, user_id=user, session_id=row.session_id, role=row.role, speaker=row.speaker,
        content=row.content, ts=None, checksum=row.checksum,
    )  # fmt: skip


def test_a_dated_call_is_keyed_for_the_target_as_its_add_keys_it() -> None:
    alice, bob = _keyed("alice"), _keyed("bob")
    assert len({r.checksum for r in alice}) == len(SAID)  # words, repeat and speaker keys
    assert _imported("alice", _records(alice), "bob") == [r.checksum for r in bob]


def test_an_import_for_the_files_own_user_keeps_every_checksum() -> None:
    records = _records(_keyed("alice"))
    assert _imported("alice", records, "alice") == [p.checksum for p in records]


def test_a_checksum_made_in_no_known_way_is_kept() -> None:
    made = enumerate(_records(_keyed("alice")))
    records = [p.model_copy(update={"checksum": f"by hand {i}"}) for i, p in made]
    assert _imported("alice", records, "bob") == [p.checksum for p in records]


def test_a_call_whose_first_message_is_gone_is_found_by_the_time_before() -> None:
    """The second message's call time is the first's: found among the times before it."""
    records = _records(_keyed("alice"))[1:]
    assert _imported("alice", records, "bob") == [r.checksum for r in _keyed("bob")[1:]]


def test_undated_timed_and_exported_ids_are_keyed_for_the_target() -> None:
    message = parse_message({"role": "user", "content": "I adopted a dog.", "name": "Ann"}, 100)
    [undated] = episode_rows("alice", [message], "s1", None, "log:1", None, keyed=True)
    timed = replace(
        undated,
        ts=WHEN,
        checksum=timed_checksum("alice", "s1", "user", "Ann", message.content, WHEN),
    )
    exported = replace(undated, uid="x", checksum=id_checksum("alice", "s1", "log:1"))
    records = _records([undated, timed, exported])
    [bob_undated] = episode_rows("bob", [message], "s1", None, "log:1", None, keyed=True)
    assert _imported("alice", records, "bob") == [
        bob_undated.checksum,
        timed_checksum("bob", "s1", "user", "Ann", message.content, WHEN),
        id_checksum("bob", "s1", "log:1"),
    ]


def test_a_message_is_keyed_as_the_target_holds_it_or_would_add_it() -> None:
    """alice's Carol said "Yes" first (keyed by its words) where bob holds Dave's "Yes" under
    them: bob's add keys Carol's by her speaker, and so does the import. alice's Dave, keyed by
    his speaker (her Carol had the words), lands where bob holds his."""
    carol, dave = [("user", "Yes", "Carol")], [("user", "Yes", "Dave")]
    bobs_dave = _keyed("bob", dave)
    bobs_carol = _keyed("bob", carol, holds=bobs_dave)
    assert bobs_carol[0].checksum != bobs_dave[0].checksum  # by her speaker: words taken
    alices = _keyed("alice", carol)
    alices += _keyed("alice", dave, holds=alices)
    records = _records(alices)
    assert _imported("alice", records, "bob", bobs_dave) == [
        bobs_carol[0].checksum,
        bobs_dave[0].checksum,
    ]
