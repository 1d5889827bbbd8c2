"""One user's message index load never blocks another user's search (issue 48, M6).

The episode leg loads a user's messages into an in-process index on the user's first search.
Against a store whose reads of one user are held back (a 150k-message user, in slow
motion), another user's index still loads, two searches of the held user share one load, and
a message written during the load is indexed. The cursor paging is checked on the real store.
"""

from __future__ import annotations

import pytest

from engine.memory import Memory
from engine.retrieval import episodes
from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.lexical import TERMS_VERSION
from engine.retrieval.tuning import EpisodeParams
from engine.store.base import EpisodeRow, EpisodeText, WriteBatch
from engine.store.uids import ALL_UIDS, LAST_UID, uid_ranges


def test_a_large_users_index_is_read_by_uid_range_on_the_store(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add_facts([("Alice", "LIKES", "tea")], user_id="other")
    for i in range(5):
        memory.add(f"I went kayaking on lake number {i}", user_id="u", ts=1000.0 + i)
    memory.add("kayaking is for the other user", user_id="other")
    for name in ("LOAD_ONCE", "LOAD_READ", "LOAD_BLOCK"):
        monkeypatch.setattr(episodes, name, 2)
    ranges: list[tuple[str, str]] = []
    read = memory.reads.episode_texts

    def recording(
        user_id: str, terms_v: int, uids: tuple[str, str] = ALL_UIDS, limit: int = 2**31
    ) -> tuple[list[EpisodeText], list[str | None]]:
        ranges.append(uids)
        return read(user_id, terms_v, uids, limit)

    monkeypatch.setattr(memory.reads, "episode_texts", recording)
    index = EpisodeLeg(memory.reads, EpisodeParams()).index("u")
    uids = index.uids
    assert len(uids) == 5 and all("kayaking on lake" in text for text in index.contents)
    assert uids == sorted(uids)  # in uid order, as one read of all of them gives
    # the first 3 in one read: more than LOAD_ONCE, so all, one leading hex digit at a time
    assert ranges == [ALL_UIDS, *uid_ranges(5, 2)] and len(ranges) == 17
    assert read("u", TERMS_VERSION, ("", "0"))[0] == []
    assert read("u", TERMS_VERSION, ("", LAST_UID))[0] == read("u", TERMS_VERSION)[0]


def test_uid_ranges_cover_every_hex_uid_once_on_the_store(memory: Memory) -> None:
    uids = ["00ab", "00f1", "0100", "0fff", "f0", "ff00"]
    rows = [EpisodeRow(u, "s", "user", "hi", 0.0, None, u) for u in uids]
    memory.store.write("u", WriteBatch(episodes=rows))
    for count, parts in ((0, 1), (5000, 1), (5001, 16), (80_001, 256)):
        assert len(uid_ranges(count, 5000)) == parts
    read = [u for r in uid_ranges(80_001, 5000) for u in uids_in(memory, r)]
    assert sorted(read) == uids  # each once (next-prefix bounds read "f0" and "ff00" twice)


def test_uids_that_are_no_hex_digests_are_read_too(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [EpisodeRow(u, "s", "user", "hi", 0.0, None, u) for u in ("0a", "Zed", "-x", "zz")]
    memory.store.write("u", WriteBatch(episodes=rows))
    for name in ("LOAD_ONCE", "LOAD_READ"):
        monkeypatch.setattr(episodes, name, 1)
    index = EpisodeLeg(memory.reads, EpisodeParams()).index("u")
    assert sorted(index.uids) == ["-x", "0a", "Zed", "zz"]


def uids_in(memory: Memory, uids: tuple[str, str]) -> list[str]:
    return [t.uid for t in memory.reads.episode_texts("u", TERMS_VERSION, uids)[0]]
