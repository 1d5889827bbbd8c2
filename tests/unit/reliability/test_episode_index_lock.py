"""One user's message index load never blocks another user's search (issue 48, M6).

The episode leg loads a user's messages into an in-process index on the user's first search.
Against a store whose reads of one user are held back (a 150k-message user, in slow
motion), another user's index still loads, two searches of the held user share one load, and
a message written during the load is indexed. The uid ranges are checked on the real store.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.tuning import EpisodeParams
from engine.store.base import EpisodeRow, EpisodeText

WAIT_S = 10.0


def text(uid: str, content: str = "kayaking on the lake") -> EpisodeText:
    return EpisodeText(uid, "s", None, "user", content, 0.0)


class HeldReads:
    """Reads of each user's messages; those of `held` wait until `release` is set."""

    def __init__(self, docs: dict[str, list[EpisodeText]], held: str) -> None:
        self.docs = docs
        self.held = held
        self.started = threading.Event()
        self.release = threading.Event()
        self.pages: Counter[str] = Counter()

    def episode_texts(
        self, user_id: str, terms_v: int, uids: tuple[str, str], limit: int = 2**31
    ) -> tuple[list[EpisodeText], list[str | None]]:
        self.pages[user_id] += 1
        if user_id == self.held:
            self.started.set()
            assert self.release.wait(WAIT_S)
        page = [d for d in self.docs[user_id] if uids[0] <= d.uid < uids[1]][:limit]
        return page, [None] * len(page)  # no stored terms: the leg computes them

    def episodes_stamp(self, user_id: str) -> tuple[int, int]:
        return len(self.docs[user_id]), 0  # the load's count; the check is tested elsewhere


@pytest.fixture
def held() -> HeldReads:
    docs = {"big": [text(f"b{i}") for i in range(3)], "small": [text("s1", "my bike is blue")]}
    return HeldReads(docs, held="big")


def test_another_users_index_loads_while_one_user_is_loading(held: HeldReads) -> None:
    leg = EpisodeLeg(held, EpisodeParams())  # type: ignore[arg-type]
    with ThreadPoolExecutor(2) as pool:
        big = pool.submit(leg.index, "big")
        assert held.started.wait(WAIT_S)
        small = pool.submit(leg.index, "small")
        try:
            loaded = small.result(timeout=2.0)  # with one lock for all users: after WAIT_S
        finally:
            held.release.set()
        assert loaded.uids == ["s1"]
        assert len(big.result(timeout=WAIT_S)) == 3


def test_two_searches_of_one_user_share_one_load(held: HeldReads) -> None:
    leg = EpisodeLeg(held, EpisodeParams())  # type: ignore[arg-type]
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(leg.index, "big")
        assert held.started.wait(WAIT_S)
        second = pool.submit(leg.index, "big")
        held.release.set()
        assert first.result(timeout=WAIT_S) is second.result(timeout=WAIT_S)
    assert held.pages["big"] == 1


def test_a_message_written_during_the_load_is_indexed(held: HeldReads) -> None:
    leg = EpisodeLeg(held, EpisodeParams())  # type: ignore[arg-type]
    row = EpisodeRow("late", "s", "user", "written meanwhile", 1.0, None, "late")
    with ThreadPoolExecutor(1) as pool:
        loading = pool.submit(leg.index, "big")
        assert held.started.wait(WAIT_S)
        leg.note("big", [row])  # the load's page may have passed its uid already
        held.release.set()
        index = loading.result(timeout=WAIT_S)
    assert "late" in index.position and len(index) == 4
