"""Which key each message of a dated add is stored under (`engine.add.keys`): the same words
by another speaker are another message, in one call or in two, and a call added again, whole
or in part, stores nothing more, over what older versions stored too. No store: the episodes
held under the keys are given."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from engine.add.keys import MessageKeys, fresh_rows, message_keys
from engine.add.messages import checksum, episode_rows, parse_message
from engine.models import Episode
from engine.normalize import stable_uid
from engine.store.base import EpisodeRow

TEXT = "I adopted a dog."
MARCH_1 = 1709287200.0  # 2024-03-01T10:00:00Z
WORDS = checksum("u", "s", "user", TEXT, MARCH_1, None)  # what every version keys them by first


def _keys(*speakers: str | None, user_id: str = "u") -> list[MessageKeys]:
    said = [{"role": "user", "content": TEXT} | ({"name": s} if s else {}) for s in speakers]
    messages = [parse_message(m, 1000) for m in said]
    rows = episode_rows(user_id, messages, "s", MARCH_1, None, None)
    return message_keys(user_id, rows, MARCH_1)


def _held(rows: list[EpisodeRow], status: str = "ok") -> dict[str, Episode]:
    return {row.uid: _episode(row, status) for row in rows}


def _episode(row: EpisodeRow, status: str) -> Episode:
    when = datetime.fromtimestamp(row.ts, UTC)
    return Episode(
        uid=row.uid, user_id="u", session_id=row.session_id, role=row.role,
        speaker=row.speaker, content=row.content, ts=when, checksum=row.checksum, status=status,
    )  # fmt: skip


def _add(held: dict[str, Episode], *speakers: str | None, user_id: str = "u") -> list[EpisodeRow]:
    """The rows a call of these speakers writes over `held`, then held too."""
    keys = _keys(*speakers, user_id=user_id)
    fresh = fresh_rows(keys, {uid: e for uid, e in held.items() if uid in _uids(keys)})
    held.update(_held(list(fresh.values())))
    return list(fresh.values())


def _uids(keys: list[MessageKeys]) -> set[str]:
    return set().union(*(key.uids for key in keys))


def test_the_same_words_by_another_speaker_in_another_call_are_another_message() -> None:
    held: dict[str, Episode] = {}
    [maria] = _add(held, "Maria")
    [ana] = _add(held, "Ana")
    assert maria.checksum == WORDS and ana.checksum != WORDS
    assert ana.uid == stable_uid("u", ana.checksum) and ana.speaker == "Ana"
    for call in [("Maria",), ("Ana",), ("Maria", "Ana"), ("Ana", "Maria")]:
        assert _add(held, *call) == []


def test_a_call_added_again_in_parts_stores_nothing_more() -> None:
    held: dict[str, Episode] = {}
    assert len(_add(held, "Maria", "Ana", None, "Ana")) == 4
    for call in [("Ana",), (None,), ("Ana", "Ana"), ("Maria", "Ana", None, "Ana")]:
        assert _add(held, *call) == []
    assert len(_add(held, "Ana", "Ana", "Ana")) == 1  # she said them a third time


def test_messages_stored_under_the_keys_of_older_versions_are_recognised() -> None:
    """Before speakers were in a key a call stored its messages under its rows' checksums:
    the first under its words', a repeat under its ordinal. The call added again, or its
    first message, is recognised."""
    old = [key.row for key in _keys(None, "Ana", None)]
    assert old[0].checksum == WORDS
    held = _held(old)
    assert _add(held, None, "Ana", None) == [] and _add(held, None) == []
    [maria] = _add(held, "Maria")
    assert maria.checksum not in {row.checksum for row in old}


def test_a_failed_message_is_retried_and_another_speakers_is_left_alone() -> None:
    [maria] = [key.row for key in _keys("Maria")]
    held = _held([maria], status="failed")
    [ana] = fresh_rows(_keys("Ana"), held).values()
    assert ana.uid != maria.uid
    [again] = fresh_rows(_keys("Maria"), held).values()
    assert again.uid == maria.uid


def test_a_key_given_by_an_ingest_is_the_only_key() -> None:
    """An ingest record's row is stored under the key its ingest found, whoever holds it."""
    [row] = [key.row for key in _keys("Ana")]
    keys = [MessageKeys.only(row), MessageKeys.only(row)]
    assert list(fresh_rows(keys, {}).values()) == [row]
    assert fresh_rows(keys, _held([replace(row, speaker="Bo")])) == {}


def test_a_speaker_is_told_apart_by_the_key_of_their_name_as_entities_are() -> None:
    """The same words at the same time by "Bob", "BOB" and " bob " were three messages while
    one entity speaks them all; by "alice" (the user's id), "ALICE", "USER" or no name, four,
    all the user's own. Another speaker's are still another message."""
    held: dict[str, Episode] = {}
    [carol] = _add(held, "Carol")
    assert carol.checksum == WORDS
    assert len(_add(held, "Bob")) == 1
    for call in [("BOB",), (" bob ",), ("Carol", "bob"), ("CAROL",)]:
        assert _add(held, *call) == []
    assert len(_add(held, "Ann")) == 1
    for user_id in ("alice", "Alice"):
        mine: dict[str, Episode] = {}
        assert len(_add(mine, None, user_id=user_id)) == 1
        for call in [("alice",), ("ALICE ",), ("USER",), ("Alice",), (None,)]:
            assert _add(mine, *call, user_id=user_id) == [], (user_id, call)
        assert len(_add(mine, "Bob", user_id=user_id)) == 1


def test_a_speaker_saying_it_again_in_the_call_is_another_message_however_named() -> None:
    held: dict[str, Episode] = {}
    assert len(_add(held, "Bob", "BOB")) == 2
    assert _add(held, "bob", "Bob") == []
