"""LLM faults: whatever the tool call carries, `add` does not raise, writes only valid facts
(or none), and keeps the episode, marked failed when the extraction was unusable."""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from engine.embedding import Embedder
from engine.memory import Memory
from engine.normalize import is_relation_type
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, ToolCall
from tests.integration.reliability.conftest import Tally
from tests.integration.reliability.graph_checks import half_written, nodes_of
from tests.integration.reliability.helpers import llm_memory

EXAMPLES = 30
MAX_NAME = 64  # a small max_name_chars, so long generated names hit it
_ids = itertools.count()

nasty_text = st.one_of(
    st.text(max_size=12),  # any code point but surrogates: NUL, controls, RTL marks, CJK
    st.sampled_from(["", " ", "USER", "I", "me", "\x00", "x" * (MAX_NAME + 1), "`) DELETE n"]),
)
scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), nasty_text)
json_value = st.recursive(
    scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nasty_text, inner, max_size=3),
    max_leaves=8,
)
entity = st.fixed_dictionaries(
    {"name": nasty_text},
    optional={"type": st.one_of(nasty_text, scalar), "aliases": st.lists(nasty_text, max_size=2)},
)
fact = st.fixed_dictionaries(
    {"source": nasty_text, "predicate": nasty_text, "target": nasty_text, "fact": nasty_text},
    optional={"valid_at": st.one_of(nasty_text, st.just("2024-01-02T03:04:05Z"))},
)
invalidation = st.fixed_dictionaries({"fact_id": nasty_text}, optional={"reason": nasty_text})
shaped = st.fixed_dictionaries(
    {},
    optional={
        "entities": st.lists(st.one_of(entity, json_value), max_size=4),
        "facts": st.lists(st.one_of(fact, json_value), max_size=4),
        "invalidations": st.lists(invalidation, max_size=2),
    },
)
payload = st.one_of(shaped, shaped, json_value, st.text(max_size=80))  # raw text: bad JSON


def _clean_name(name: str) -> bool:
    controls = any(unicodedata.category(c) in ("Cc", "Cs") for c in name)
    return bool(name.strip()) and not controls and len(name) <= MAX_NAME


def _check_user_graph(mem: Memory, store: GraphStore, user: str) -> int:
    facts = mem.get_all(user, include_invalid=True)
    for f in facts:
        assert is_relation_type(f.predicate), f.predicate
        assert _clean_name(f.subject) and _clean_name(f.object), (f.subject, f.object)
        assert f.text.strip()
    for scored in mem.top_entities(user, 100):
        assert _clean_name(scored.entity.name)
    assert half_written(store, user) == []
    return len(facts)


@pytest.fixture
def store(shared_store: GraphStore) -> GraphStore:
    return shared_store


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, scripted_llm: ScriptedLLM, tmp_path: Path
) -> Iterator[Memory]:
    with llm_memory(store, embedder, scripted_llm, tmp_path, max_name_chars=MAX_NAME) as memory:
        yield memory


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(arguments=payload, name=st.sampled_from(["record_memory", "record_memory", "other"]))
@example(arguments={"\x00": [], "facts": True}, name="record_memory")  # NUL in the fault's text
def test_any_tool_call_payload_is_survived(
    mem: Memory,
    store: GraphStore,
    scripted_llm: ScriptedLLM,
    tally: Tally,
    arguments: Any,
    name: str,
) -> None:
    n = next(_ids)
    user = f"llm{n}"
    mem.add_facts([("Anchor", "KNOWS", "Base")], user)  # something to invalidate or keep
    scripted_llm.script(ToolCall(arguments if isinstance(arguments, dict | str) else "[]", name))
    result = mem.add(f"fault case {n}: I met Bob", user)  # must not raise
    tally.cases += 1
    [episode] = mem.reads.episodes_by_uids(user, result.episode_uids)
    assert episode.content.startswith("fault case")
    stored = _check_user_graph(mem, store, user)
    if result.extraction_error is not None:
        tally.faults += 1
        assert episode.status == "failed" and episode.error == result.extraction_error
        assert (stored, result.facts_added) == (1, 0)
        assert nodes_of(store, user)["Fact"] == 1
    else:
        tally.faults += bool(result.errors)
        assert episode.status == "ok"
        shaped_facts = arguments.get("facts", []) if isinstance(arguments, dict) else []
        assert stored == 1 + result.facts_added and result.facts_added <= len(shaped_facts)


def test_too_many_facts_in_one_extraction_keeps_the_episode_as_failed(
    shared_store: GraphStore,
    embedder: Embedder,
    scripted_llm: ScriptedLLM,
    tmp_path: Path,
    tally: Tally,
) -> None:
    with llm_memory(shared_store, embedder, scripted_llm, tmp_path, max_facts_per_call=5) as mem:
        _flood(mem, shared_store, scripted_llm, tally)


def _flood(mem: Memory, store: GraphStore, scripted_llm: ScriptedLLM, tally: Tally) -> None:
    facts = [
        {"source": "Bob", "predicate": "LIKES", "target": f"thing {i}", "fact": f"Bob likes {i}"}
        for i in range(6)
    ]
    scripted_llm.script(ToolCall({"entities": [], "facts": facts, "invalidations": []}))
    result = mem.add("Bob likes six things", "flood")
    tally.cases += 1
    tally.faults += 1
    assert result.extraction_error is not None
    assert "6 facts" in result.extraction_error and "max_facts_per_call" in result.extraction_error
    [episode] = mem.reads.episodes_by_uids("flood", result.episode_uids)
    assert episode.status == "failed"
    assert mem.get_all("flood") == [] and nodes_of(store, "flood") == {"Episode": 1}
