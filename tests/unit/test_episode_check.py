"""A user's message index checked against the store aside once stale
(`EpisodeLeg.index`): the search answers with the index it has, and a failed check is tried
again `refresh_s` later, not at every search."""

from __future__ import annotations

import math
from dataclasses import replace

from engine.retrieval.background import BACKGROUND
from engine.retrieval.episodes import EpisodeLeg
from engine.retrieval.lexical import LexicalIndex
from engine.retrieval.tuning import EpisodeParams


class _Reads:
    def __init__(self) -> None:
        self.counts = 0

    def episodes_stamp(self, user_id: str) -> tuple[int, int]:
        self.counts += 1
        raise ConnectionError("the store is away")


def _leg(refresh_s: float) -> tuple[EpisodeLeg, _Reads, LexicalIndex]:
    reads = _Reads()
    leg = EpisodeLeg(reads, replace(EpisodeParams(), refresh_s=refresh_s))  # type: ignore[arg-type]
    index = LexicalIndex()
    slot = leg._slot("u")
    slot.index, slot.checked = index, -math.inf  # loaded, and stale
    return leg, reads, index


def test_a_failed_check_is_tried_again_after_refresh_s() -> None:
    leg, reads, index = _leg(refresh_s=3600.0)
    assert leg.index("u") is index  # the search goes on with it
    BACKGROUND.drain()
    assert reads.counts == 1
    assert leg.index("u") is index and leg.index("u") is index
    BACKGROUND.drain()
    assert reads.counts == 1  # not again before refresh_s


def test_a_stale_index_is_checked_again_once_refresh_s_has_passed() -> None:
    leg, reads, index = _leg(refresh_s=0.0)
    assert leg.index("u") is index
    BACKGROUND.drain()
    assert leg.index("u") is index
    BACKGROUND.drain()
    assert reads.counts == 2
