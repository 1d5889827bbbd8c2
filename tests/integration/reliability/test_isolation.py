"""Isolation: no public call returns another user's data; delete_all removes one user only."""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine.embedding import Embedder
from engine.errors import InvalidInputError, NotFoundError
from engine.memory import Memory
from engine.normalize import entity_key
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, tool_call
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.graph_checks import nodes_of
from tests.integration.reliability.helpers import extraction, llm_memory

EXAMPLES = 12  # each example: 3 users, ~10 writes and ~40 reads on the real database
# shared across users on purpose: the same names must still be separate entities per user
NAMES = [
    "Alice",
    "Bob",
    "\uff42\uff4f\uff42",
    "Zoë",
    "Zoe",
    "café",
    "北京",
    "O'Brien",
    "Tommy",
    "a`b",
]
PREDICATES = ["LIKES", "FRIEND_OF", "OWNS", "VISITED"]
_ids = itertools.count()

name = st.one_of(
    st.sampled_from(NAMES),
    st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=8),
)
triple = st.tuples(name, st.sampled_from(PREDICATES), name).filter(
    lambda t: entity_key(t[0]) != entity_key(t[2])
)
user_facts = st.lists(triple, min_size=1, max_size=4)
raw_user = st.text(
    st.characters(categories=["L", "N"], include_characters="-_.@"), max_size=8
).filter(lambda u: unicodedata.normalize("NFKC", u) == u)  # user ids are taken exactly


def _check_reads(mem: Memory, user: str, names: set[str], query: str) -> None:
    """Every public read for `user` returns only `user`'s data."""
    own = mem.get_all(user, include_invalid=True)
    uids = {f.uid for f in own}
    assert own and all(f.user_id == user for f in own)
    result = mem.search(query, user)
    assert all(sf.fact.user_id == user and sf.fact.uid in uids for sf in result.facts)
    assert all(se.entity.user_id == user for se in result.entities)
    top = mem.top_entities(user, 100)
    assert top and all(se.entity.user_id == user for se in top)
    keys = {se.entity.key for se in top}
    for item in names:
        try:
            view = mem.entity(item, user)
        except NotFoundError:
            assert entity_key(item) not in keys
            continue
        assert view.entity.user_id == user
        assert {f.uid for f in view.facts} <= uids
        assert all(e.user_id == user for e in view.episodes)
    stats = mem.stats(user)
    assert (stats.users, stats.facts, stats.entities) == (1, len(own), len(top))


def _snapshot(mem: Memory, store: GraphStore, user: str) -> tuple[object, ...]:
    facts = sorted((f.uid, f.mentions, f.text) for f in mem.get_all(user, include_invalid=True))
    entities = sorted((se.entity.uid, se.entity.mentions) for se in mem.top_entities(user, 1000))
    return facts, entities, nodes_of(store, user)


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, scripted_llm: ScriptedLLM, tmp_path: Path
) -> Iterator[Memory]:
    with llm_memory(store, embedder, scripted_llm, tmp_path) as memory:
        yield memory


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example costs real writes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    raw_users=st.lists(raw_user, min_size=2, max_size=3),
    facts=st.lists(user_facts, min_size=3, max_size=3),
    query=st.one_of(
        st.sampled_from(NAMES),
        st.text(st.characters(categories=["L", "N", "P"]), min_size=1, max_size=30),
    ),
)
def test_no_public_call_returns_another_users_data(
    mem: Memory,
    store: GraphStore,
    scripted_llm: ScriptedLLM,
    tally: Tally,
    raw_users: list[str],
    facts: list[list[tuple[str, str, str]]],
    query: str,
) -> None:
    example = next(_ids)
    users = [f"iso{example}-{i}-{raw}" for i, raw in enumerate(raw_users)]
    names = {n for user_facts in facts for s, _, o in user_facts for n in (s, o)}
    for user, own in zip(users, facts, strict=False):
        mem.add_facts(own[1:] or own, user)
        scripted_llm.script(tool_call(extraction(own[:1])))
        result = mem.add(f"message {example} for {user}", user)
        assert result.extraction_error is None, result.extraction_error
    for user in users:
        _check_reads(mem, user, names, query)
        others = {f.uid for other in users if other != user for f in mem.get_all(other)}
        assert all(mem.history(uid, user) == [] for uid in others)
    victim, kept = users[0], users[1:]
    before = {u: _snapshot(mem, store, u) for u in kept}
    assert mem.delete_all(victim) > 0
    assert nodes_of(store, victim) == {}  # entities, facts, episodes and history all gone
    assert mem.get_all(victim, include_invalid=True) == [] and mem.top_entities(victim) == []
    assert {u: _snapshot(mem, store, u) for u in kept} == before
    tally.cases += 1


NON_CANONICAL = [
    "alice ",
    " alice",
    "\uff41\uff4c\uff49\uff43\uff45",
    "al\x00ice",
    "al\u200bice\n",
    "ali  ce",
]


def test_a_user_id_that_would_alias_another_is_refused(
    shared_store: GraphStore, embedder: Embedder, tmp_path: Path, tally: Tally
) -> None:
    mem = Memory(store=shared_store, embedder=embedder, data_dir=tmp_path)
    mem.add_facts([("Alice", "OWNS", "a secret")], "alice")
    for twin in NON_CANONICAL:
        with pytest.raises(InvalidInputError) as caught:
            mem.get_all(twin)
        assert "user_id" in str(caught.value) and "canonical" in str(caught.value)
        tally.cases += 1
        tally.faults += 1
    assert [f.object for f in mem.get_all("alice")] == ["a secret"]
