"""No relation match and no walk in a graph of one-off relations said in messages
(`user_relations.of_one_offs`), and the per-user counts it reads (`UserRelations`)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace

from pytest import MonkeyPatch

from engine.models import Fact
from engine.retrieval import user_relations
from engine.retrieval.background import BACKGROUND
from engine.retrieval.fusion import ranked, scored
from engine.retrieval.tuning import ExpansionParams, FusionParams
from engine.retrieval.user_relations import Relations, UserRelations, of_one_offs
from engine.store.base import EpisodeRow, Written

PARAMS = ExpansionParams()
FEW, LARGE = PARAMS.one_off_facts, PARAMS.one_off_graph


def _counted(total: int, relations: int, all_said: bool = True) -> Relations:
    return Relations(0.0, [], total, total / relations, all_said)


def _fact(subject: str, obj: str) -> Fact:
    return Fact(
        uid=f"{subject}-{obj}", user_id="u", subject=subject, predicate="SAID", object=obj,
        subject_uid=subject.lower(), object_uid=obj.lower(), text=f"{subject} said {obj}",
    )  # fmt: skip


def _semantic_order(anchored: set[str]) -> list[str]:
    """The objects of a search's facts, best first: the semantic leg's order, with nothing
    walked."""
    near = [_fact("Bob", "cooking"), _fact("Carol", "skiing"), _fact("Alice", "painting")]
    semantic = [(fact, 0.9 - i / 100) for i, fact in enumerate(near)]
    facts = {fact.uid: fact for fact in near}
    fusion = FusionParams()
    fused = ranked(10, [], semantic, set(), fusion)
    return [s.fact.object for s in scored(10, fused, facts, [], semantic, fusion, anchored)]


def test_an_anchors_facts_come_first_in_a_search_of_anchors_alone() -> None:
    """What the walk's first hop would have put first: "What does Alice like?"."""
    assert _semantic_order(set()) == ["cooking", "skiing", "painting"]
    assert _semantic_order({"alice"}) == ["painting", "cooking", "skiing"]
    assert _semantic_order({"alice", "carol"}) == ["skiing", "painting", "cooking"]


def test_a_chat_graph_of_one_offs_is_not_matched_or_walked() -> None:
    assert of_one_offs(_counted(LARGE * 3, LARGE), PARAMS)
    assert of_one_offs(_counted(LARGE, LARGE // (FEW - 1)), PARAMS)


def test_a_small_graph_is_walked() -> None:
    assert not of_one_offs(_counted(LARGE - 1, LARGE - 1), PARAMS)


def test_a_graph_whose_relations_hold_many_facts_on_average_is_walked() -> None:
    assert not of_one_offs(_counted(LARGE * FEW, LARGE), PARAMS)
    assert of_one_offs(_counted(LARGE * FEW, LARGE + 1), PARAMS)


def test_a_graph_with_facts_no_message_said_is_walked() -> None:
    """A knowledge base loaded or added as facts: no message holds what its facts say."""
    assert not of_one_offs(_counted(LARGE * 3, LARGE, all_said=False), PARAMS)


class _Reads:
    def __init__(self, facts: dict[str, tuple[int, int]]) -> None:
        self.facts, self.calls = facts, 0  # predicate -> facts, of them said in a message
        self.failing = False
        self._open = threading.Event()
        self._open.set()

    def predicates(self, user_id: str) -> dict[str, tuple[int, int]]:
        self.calls += 1
        assert self._open.wait(timeout=5)
        if self.failing:
            raise ConnectionError("the store is away")
        return dict(self.facts)

    def started(self, calls: int) -> bool:
        """Whether `calls` reads have begun, within 5 s."""
        until = time.monotonic() + 5
        while self.calls < calls and time.monotonic() < until:
            time.sleep(0.001)
        return self.calls >= calls

    @contextmanager
    def held(self) -> Iterator[None]:
        """Reads started inside wait until it ends."""
        self._open.clear()
        try:
            yield
        finally:
            self._open.set()


def test_counts_fold_twins_into_their_relation() -> None:
    reads = _Reads({"PARENTS": (3, 3), "PARENTS_INVERSE": (2, 2), "LIKES": (1, 1)})
    relations = UserRelations(reads, refresh_s=3600, most=8).of("u")  # type: ignore[arg-type]
    assert reads.calls == 1 and relations.total == 6 and relations.facts_per_relation == 3.0
    assert relations.all_said and relations.predicates == ["LIKES", "PARENTS", "PARENTS_INVERSE"]


def test_one_fact_no_message_said_makes_the_graph_unsaid() -> None:
    reads = _Reads({"PARENTS": (3, 3), "LIKES": (4, 3)})
    relations = UserRelations(reads, refresh_s=3600, most=8).of("u")  # type: ignore[arg-type]
    assert not relations.all_said


def test_a_write_without_messages_makes_the_graph_unsaid_until_read_again() -> None:
    reads = _Reads({"LIKES": (1, 1)})
    users = UserRelations(reads, refresh_s=3600, most=8)  # type: ignore[arg-type]
    users.of("u")
    message = EpisodeRow("e1", None, "user", "I own a cat", 1.0, None, "c1")
    said = Written(predicates=frozenset({"OWNS"}), episodes=(message,))
    users.written("u", said)
    relations = users.of("u")
    assert reads.calls == 1 and relations.all_said and relations.predicates == ["LIKES", "OWNS"]
    users.written("u", Written(predicates=frozenset({"KNOWS"})))
    relations = users.of("u")
    assert not relations.all_said and reads.calls == 1
    users.forget("u")
    relations = users.of("u")
    assert relations.all_said and reads.calls == 2


def test_a_write_counts_the_facts_it_created() -> None:
    """A graph first read small and grown by writes: its counts were those of the first read
    until `refresh_s` passed, so a chat read at its first message was walked as a small graph
    for that long, where another process saw one-off relations (the golden LoCoMo ranking
    was of that state)."""
    reads = _Reads({"LIKES": (2, 2)})
    users = UserRelations(reads, refresh_s=3600, most=8)  # type: ignore[arg-type]
    users.of("u")
    message = EpisodeRow("e1", None, "user", "I own a cat and love dogs", 1.0, None, "c1")
    created = frozenset({f"f{i}" for i in range(118)})
    users.written(
        "u", Written(added=created, predicates=frozenset({"OWNS", "LOVES"}), episodes=(message,))
    )
    relations = users.of("u")
    assert reads.calls == 1 and relations.total == 120 and relations.facts_per_relation == 40.0
    reads.facts = {"LIKES": (2, 2), "OWNS": (59, 59), "LOVES": (59, 59)}
    users.forget("u")
    read = users.of("u")
    assert (read.total, read.facts_per_relation) == (relations.total, relations.facts_per_relation)


def _stale_counts() -> tuple[_Reads, UserRelations]:
    """A user's counts read once, then stale at every search."""
    reads = _Reads({"LIKES": (1, 1)})
    users = UserRelations(reads, refresh_s=-1.0, most=8)  # type: ignore[arg-type]
    users.of("u")
    return reads, users


def test_counts_are_read_again_aside_after_the_refresh() -> None:
    """A search past `refresh_s` goes on with the counts read before; the next one has the
    new read, which no search waited for."""
    reads, users = _stale_counts()
    reads.facts["LIKES"] = (7, 6)
    with reads.held():
        users.refresh_if_stale("u")  # as a search ends: the read again waits on the store
        stale = users.of("u")  # the next search does not
        users.refresh_if_stale("u")  # one read again at a time
        assert stale.total == 1 and users.of("u") is stale
    BACKGROUND.drain()
    relations = users.of("u")
    assert reads.calls == 2 and relations.total == 7 and not relations.all_said


def test_searches_ending_together_read_the_counts_again_once(monkeypatch: MonkeyPatch) -> None:
    """Two searches that end at once both find the counts stale: one reads them again."""
    reads, users = _stale_counts()
    both = threading.Barrier(2, timeout=0.5)

    def together() -> float:  # each search reads the clock once the other has too, if it can
        with contextlib.suppress(threading.BrokenBarrierError):
            both.wait()
        return time.monotonic()

    monkeypatch.setattr(user_relations, "time", SimpleNamespace(monotonic=together))
    with reads.held():
        searches = [threading.Thread(target=users.refresh_if_stale, args=("u",)) for _ in "ab"]
        for search in searches:
            search.start()
        for search in searches:
            search.join(timeout=5)
        monkeypatch.undo()
    BACKGROUND.drain()
    assert reads.calls == 2  # the first read, and one read again


def test_a_write_during_the_read_again_is_kept() -> None:
    reads, users = _stale_counts()
    with reads.held():
        users.refresh_if_stale("u")
        assert reads.started(2)
        users.written("u", Written(predicates=frozenset({"OWNS"})))  # the read began before
    BACKGROUND.drain()
    relations = users._users.one("u")
    assert relations is not None and relations.predicates == ["LIKES", "OWNS"]
    assert not relations.all_said and reads.calls == 2


def test_a_user_forgotten_during_the_read_again_is_read_afresh() -> None:
    """A load or a delete since: the read that began before it is not kept."""
    reads, users = _stale_counts()
    with reads.held():
        users.refresh_if_stale("u")
        users.forget("u")
    BACKGROUND.drain()
    assert users._users.one("u") is None


def test_a_failed_read_again_keeps_the_counts_and_tries_later() -> None:
    reads, users = _stale_counts()
    first = users.of("u")
    reads.failing = True
    users.refresh_if_stale("u")
    BACKGROUND.drain()
    assert users.of("u") is first and reads.calls == 2
    reads.failing = False
    users.refresh_if_stale("u")  # tried again after the next search
    BACKGROUND.drain()
    assert users.of("u").total == 1 and users.of("u") is not first and reads.calls == 3


def test_the_users_searched_longest_ago_are_dropped() -> None:
    """A host meeting many users keeps the counts of the `most` searched last."""
    reads = _Reads({"LIKES": (1, 1)})
    users = UserRelations(reads, refresh_s=3600, most=2)  # type: ignore[arg-type]
    for user in ("a", "b", "a", "c"):  # "b" is the one searched longest ago when "c" comes
        users.of(user)
    assert reads.calls == 3
    users.of("a")
    users.of("c")
    assert reads.calls == 3
    users.of("b")
    assert reads.calls == 4
