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
from engine.retrieval.tuning import EpisodeParams
from engine.store.base import EpisodeText


def test_the_index_is_read_by_uid_cursor_on_the_store(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add_facts([("Alice", "LIKES", "tea")], user_id="other")
    for i in range(5):
        memory.add(f"I went kayaking on lake number {i}", user_id="u", ts=1000.0 + i)
    memory.add("kayaking is for the other user", user_id="other")
    monkeypatch.setattr(episodes, "_PAGE", 2)
    pages: list[str] = []
    read = memory.reads.episode_texts

    def recording(
        user_id: str, after: str, limit: int, terms_v: int
    ) -> tuple[list[EpisodeText], list[str | None]]:
        pages.append(after)
        return read(user_id, after, limit, terms_v)

    monkeypatch.setattr(memory.reads, "episode_texts", recording)
    index = EpisodeLeg(memory.reads, EpisodeParams()).index("u")
    uids = sorted(d.uid for d in index.docs)
    assert len(uids) == 5 and all("kayaking on lake" in d.content for d in index.docs)
    assert pages == ["", uids[1], uids[3]]  # each page starts after the last uid read
