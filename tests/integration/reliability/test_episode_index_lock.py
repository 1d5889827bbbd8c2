"""One user's message index load never blocks another user's search (issue 48, M6).

The episode leg loads a user's messages into an in-process index on the user's first search.
Against a store whose reads of one user are held back (a 150k-message user, in slow
motion), another user's index still loads, two searches of the held user share one load, and
a message written during the load is indexed. The cursor paging is checked on the real store.
"""

from __future__ import annotations

import itertools

import pytest

from engine.memory import Memory
from engine.retrieval import episodes
from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.lexical import TERMS_VERSION
from engine.retrieval.tuning import EpisodeParams
from engine.store.base import EpisodeText
from engine.store.uids import ALL_UIDS, LAST_UID, uid_ranges


def test_a_large_users_index_is_read_by_uid_range_on_the_store(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add_facts([("Alice", "LIKES", "tea")], user_id="other")
    for i in range(5):
        memory.add(f"I went kayaking on lake number {i}", user_id="u", ts=1000.0 + i)
    memory.add("kayaking is for the other user", user_id="other")
    monkeypatch.setattr(episodes, "_PAGE", 2)
    ranges: list[tuple[str, str]] = []
    read = memory.reads.episode_texts

    def recording(
        user_id: str, terms_v: int, uids: tuple[str, str] = ALL_UIDS
    ) -> tuple[list[EpisodeText], list[str | None]]:
        ranges.append(uids)
        return read(user_id, terms_v, uids)

    monkeypatch.setattr(memory.reads, "episode_texts", recording)
    index = EpisodeLeg(memory.reads, EpisodeParams()).index("u")
    uids = [d.uid for d in index.docs]
    assert len(uids) == 5 and all("kayaking on lake" in d.content for d in index.docs)
    assert uids == sorted(uids)  # in uid order, as one read of all of them gives
    assert ranges == uid_ranges(5, 2) and len(ranges) == 16  # one read per leading hex digit
    assert read("u", TERMS_VERSION, ("", "0"))[0] == []
    assert read("u", TERMS_VERSION, ("", LAST_UID))[0] == read("u", TERMS_VERSION)[0]


def test_uid_ranges_cover_every_string_once() -> None:
    for count, parts in ((0, 1), (5000, 1), (5001, 16), (80_001, 256)):
        ranges = uid_ranges(count, 5000)
        assert len(ranges) == parts
        assert ranges[0][0] == "" and ranges[-1][1] == LAST_UID
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
