"""`engine.compat.mem0.Memory` runs Mem0's documented examples (quick start, graph memory,
multiple agents) as written, with `mem0` resolving to graphmem's facade."""

from __future__ import annotations

from typing import Any

import pytest

from engine.compat.mem0_config import settings_from_mem0
from engine.errors import ConfigError


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
        ({"vectorstore": {}}, "unknown Mem0 config keys: vectorstore"),
        ({"llm": "openai"}, "must be a dict"),
    ],
)
def test_mem0_config_that_cannot_work_is_a_config_error(config: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        settings_from_mem0(config)
