"""`engine.compat.mem0.Memory` runs Mem0's documented examples (quick start, graph memory,
multiple agents) as written, with `mem0` resolving to graphmem's facade."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from engine.compat.mem0_config import settings_from_mem0, settings_of
from engine.compat.mem0_scope import scope_of
from engine.compat.mem0_shapes import history_item
from engine.errors import ConfigError, InvalidInputError
from engine.models import HistoryEvent


def test_mem0_config_keys_map_onto_graphmem_settings() -> None:
    config = {
        "llm": {"provider": "ollama", "config": {"model": "qwen2.5", "temperature": 0.2}},
        "embedder": {"provider": "huggingface", "config": {"model": "all-MiniLM-L6-v2"}},
        "graph_store": {
            "provider": "neo4j",
            "config": {"url": "neo4j+s://xxx", "username": "neo4j", "password": "xxx"},
        },
        "vector_store": {"provider": "qdrant", "config": {"host": "localhost", "port": 6333}},
        "version": "v1.1",
    }
    assert settings_from_mem0(config) == {
        "openai_base_url": "http://localhost:11434/v1",
        "openai_api_key": "ollama",
        "llm_model": "qwen2.5",
        "llm_temperature": 0.2,
        "embedding_model": "all-MiniLM-L6-v2",
        "store": "neo4j",
        "neo4j_uri": "neo4j+s://xxx",
        "neo4j_user": "neo4j",
        "neo4j_password": "xxx",
    }
    openai = {"llm": {"provider": "openai", "config": {"model": "gpt-4o", "api_key": "sk-1"}}}
    assert settings_from_mem0(openai) == {"openai_api_key": "sk-1", "llm_model": "gpt-4o"}


def test_mem0s_deepseek_config_takes_its_key_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Mem0's documented DeepSeek config gives no api_key: Mem0 reads DEEPSEEK_API_KEY (and
    DEEPSEEK_API_BASE), where the provider's name went out as the key."""
    config = {"llm": {"provider": "deepseek", "config": {"model": "deepseek-chat"}}}
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-real")
    monkeypatch.delenv("DEEPSEEK_API_BASE", raising=False)
    assert settings_from_mem0(config) == {
        "openai_base_url": "https://api.deepseek.com",
        "openai_api_key": "sk-real",
        "llm_model": "deepseek-chat",
    }
    monkeypatch.setenv("DEEPSEEK_API_BASE", "https://proxy.example/v1")
    monkeypatch.delenv("DEEPSEEK_API_KEY")
    mapped = settings_from_mem0(config)
    assert mapped["openai_base_url"] == "https://proxy.example/v1"
    assert "openai_api_key" not in mapped  # no made-up key for a hosted service


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({"llm": {"provider": "anthropic", "config": {}}}, "OpenAI-compatible"),
        ({"graph_store": {"provider": "memgraph", "config": {"url": "bolt://x"}}}, "memgraph"),
        ({"graph_store": {"provider": "neo4j", "config": {}}}, "url is required"),
        ({"custom_fact_extraction_prompt": "Extract..."}, "prompt is fixed"),
        ({"custom_instructions": "Only food"}, "custom_instructions: graphmem's extraction prompt"),
        (
            {
                "graph_store": {
                    "provider": "neo4j",
                    "config": {"url": "bolt://x"},
                    "custom_prompt": "Only sports",
                }
            },
            "graph_store.custom_prompt: graphmem's extraction prompt is fixed",
        ),
        ({"vectorstore": {}}, "unknown Mem0 config keys: vectorstore"),
        ({"llm": "openai"}, "must be a dict"),
    ],
)
def test_mem0_config_that_cannot_work_is_a_config_error(config: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        settings_from_mem0(config)


def test_mem0s_wildcard_filter_keeps_memories_whose_message_has_the_key() -> None:
    """Mem0's `{"key": "*"}` (the key is there, whatever its value) matched only messages
    whose value was the text "*": a filtered search or listing came back empty, silently."""
    scope = scope_of(None, None, None, {"user_id": "bob", "category": "*"})
    [wildcard] = scope.where
    assert wildcard.holds({"category": "food"}) and wildcard.holds({"category": 0})
    assert not wildcard.holds({}) and not wildcard.holds({"category": None})
    assert not wildcard.holds({"kind": "food"})


@pytest.mark.parametrize(
    ("ids", "filters"),
    [
        (("*", None, None), None),
        ((None, None, None), {"user_id": "*"}),
        (("bob", "*", None), None),
        ((None, None, None), {"user_id": "bob", "run_id": "*"}),
        ((None, None, None), {"agent_id": "*"}),
    ],
)
def test_a_wildcard_id_is_refused_by_name(
    ids: tuple[str | None, str | None, str | None], filters: dict[str, Any] | None
) -> None:
    """`user_id="*"` read the graph of a user named "*" (and `agent_id="*"` the agent "*"),
    where a Mem0 user asks for every user's (or agent's) memories: an empty answer, silently."""
    with pytest.raises(InvalidInputError, match=r"wildcard '\*'.*one graph per user"):
        scope_of(*ids, filters)


@pytest.mark.parametrize(
    ("ids", "named"),
    [
        (("alice\u200b", None, None), "user_id"),
        (("alice", "bot\u200b", None), "agent_id"),
        ((None, None, "\u202erun"), "run_id"),
    ],
)
def test_an_id_with_an_invisible_character_is_refused_by_name(
    ids: tuple[str | None, str | None, str | None], named: str
) -> None:
    """`agent_id="bot\u200b"` narrowed alice's graph to an agent shown as "bot" that no
    message of "bot" matched; `user_id="alice\u200b"` was another user shown as alice."""
    with pytest.raises(InvalidInputError, match=f"^{named} .* invisible format character U\\+"):
        scope_of(*ids)


def test_history_entries_carry_every_key_of_mem0s() -> None:
    """Mem0's history entries have `actor_id` and `role` (None when unknown): reading them
    raised KeyError."""
    event = HistoryEvent(
        uid="h1", target_uid="f1", user_id="bob", event="ADD", ts=datetime.now(UTC), detail="x"
    )
    entry = history_item("m1", event, None, "x")
    assert set(entry) == {
        "id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at",
        "is_deleted", "actor_id", "role",
    }  # fmt: skip
    assert (entry["actor_id"], entry["role"]) == (None, None)


def test_the_llm_of_mem0s_graph_store_is_the_llm() -> None:
    """Mem0's graph memory extracts its graph with `graph_store.llm` when one is given (its
    docs' three levels); the facade ignored it, so with no top-level `llm` the offline
    extractor ran, silently, and with one the wrong model extracted the graph."""
    graph_llm = {"provider": "openai", "config": {"model": "gpt-4o-mini", "api_key": "sk-g"}}
    store = {"provider": "neo4j", "config": {"url": "bolt://x"}, "llm": graph_llm}
    mapped = settings_from_mem0({"graph_store": store})
    assert (mapped["llm_model"], mapped["openai_api_key"]) == ("gpt-4o-mini", "sk-g")
    main = {"provider": "ollama", "config": {"model": "qwen2.5"}}
    both = settings_from_mem0({"llm": main, "graph_store": store})
    assert (both["llm_model"], both["openai_api_key"]) == ("gpt-4o-mini", "sk-g")
    assert "openai_base_url" not in both  # nothing of the other provider's
    with pytest.raises(ConfigError, match="llm provider 'anthropic'"):
        settings_from_mem0({"graph_store": {**store, "llm": {"provider": "anthropic"}}})


def test_mem0s_and_filter_is_every_condition_it_lists() -> None:
    """Mem0 (and its Platform, which wants `filters={"AND": [{"user_id": ...}]}`) reads an
    `AND` list as conditions that must all hold; the facade refused it."""
    scope = scope_of(
        None, None, None,
        {"AND": [{"user_id": "bob"}, {"category": "food"}, {"n": {"in": [1, 2]}}]},
    )  # fmt: skip
    assert (scope.user, scope.user_id) == ("bob", "bob")
    assert [(c.key, c.op) for c in scope.where] == [("category", "eq"), ("n", "in")]
    nested = scope_of("bob", None, None, {"AND": [{"AND": [{"agent_id": "chef"}]}]})
    assert (nested.user, nested.agent_id) == ("bob", "chef")
    with pytest.raises(InvalidInputError, match="user_id is given twice"):
        scope_of(None, None, None, {"AND": [{"user_id": "bob"}, {"user_id": "eve"}]})
    with pytest.raises(InvalidInputError, match="AND must be a list of dicts"):
        scope_of("bob", None, None, {"AND": {"category": "food"}})
    with pytest.raises(InvalidInputError, match="'OR' is not supported"):
        scope_of("bob", None, None, {"OR": [{"category": "food"}]})


def test_a_config_naming_openai_without_a_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mem0's `{"llm": {"provider": "openai", ...}}` with no API key anywhere built a memory
    whose extraction was graphmem's offline rules, saying only "no LLM configured"; Mem0
    refuses to start without the key."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    openai = {"llm": {"provider": "openai", "config": {"model": "gpt-4o-mini"}}}
    with pytest.raises(ConfigError, match="llm provider 'openai' has no API key"):
        settings_of(openai)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert settings_of(openai).llm_model == "gpt-4o-mini"
    monkeypatch.delenv("OPENAI_API_KEY")
    assert not settings_of({}).llm_configured  # no llm named: offline, as documented
