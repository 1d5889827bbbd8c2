"""Mem0's `Memory.from_config({...})` dictionary mapped onto graphmem's `Settings`.

Mapped: `llm` (any provider graphmem reaches through an OpenAI-compatible endpoint;
`graph_store.llm` instead when given, as Mem0 extracts its graph with it), `embedder`
(sentence-transformers models), `graph_store` (Neo4j credentials). Accepted and ignored,
because graphmem has no such part: `vector_store` (vectors live in the graph),
`history_db_path` / `history_db` (history lives in the graph), `version`. Refused, because
ignoring them would change behaviour silently: custom prompts and instructions (the
`graph_store`'s too), providers graphmem cannot reach. A `graphmem` key passes graphmem
settings through (e.g. `{"data_dir": ...}`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from engine.config import Settings
from engine.errors import ConfigError

log = logging.getLogger("graphmem")

# Mem0 LLM providers that speak the OpenAI chat API: the config key of their base URL, and the
# URL when the config has none
_OPENAI_COMPATIBLE: dict[str, tuple[str, str | None]] = {
    "openai": ("openai_base_url", None),
    "openai_structured": ("openai_base_url", None),
    "ollama": ("ollama_base_url", "http://localhost:11434"),
    "vllm": ("vllm_base_url", "http://localhost:8000/v1"),
    "lmstudio": ("lmstudio_base_url", "http://localhost:1234/v1"),
    "deepseek": ("deepseek_base_url", "https://api.deepseek.com"),
}
# a hosted provider's key and endpoint, read from the environment where the config gives
# none, as Mem0 reads them: its documented DeepSeek config has no api_key
_HOSTED_ENV = {"deepseek": ("DEEPSEEK_API_KEY", "DEEPSEEK_API_BASE")}
_IGNORED = frozenset({"vector_store", "history_db_path", "history_db", "version", "reranker"})
_REFUSED = frozenset(
    {"custom_fact_extraction_prompt", "custom_update_memory_prompt", "custom_instructions"}
)
_FIXED_PROMPT = (
    "{keys}: graphmem's extraction prompt is fixed (one tool call that sees the known facts); "
    "see docs/migrate_from_mem0.md"
)
_NO_API_KEY = (
    "llm provider {provider!r} has no API key: give llm.config.api_key or set OPENAI_API_KEY "
    "(Mem0 needs one too); to extract offline (graphmem's spaCy rules), leave llm out of the "
    "config"
)
_KNOWN = frozenset({"llm", "embedder", "graph_store", "graphmem"}) | _IGNORED | _REFUSED


def _section(config: Mapping[str, Any], key: str) -> tuple[str | None, dict[str, Any]]:
    section = config.get(key)
    if section is None:
        return None, {}
    if not isinstance(section, Mapping):
        raise ConfigError(f"{key} must be a dict with 'provider' and 'config', got {section!r}")
    inner = section.get("config") or {}
    if not isinstance(inner, Mapping):
        raise ConfigError(f"{key}.config must be a dict, got {inner!r}")
    provider = section.get("provider")
    return (str(provider).lower() if provider is not None else None), dict(inner)


def _llm_section(config: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    store = config.get("graph_store")
    # Mem0 extracts its graph with graph_store.llm when one is given: graphmem's facts are it
    holder = store if isinstance(store, Mapping) and store.get("llm") is not None else config
    return _section(holder, "llm")


def _llm(config: Mapping[str, Any]) -> dict[str, Any]:
    provider, inner = _llm_section(config)
    if provider is None:
        return {}
    if provider not in _OPENAI_COMPATIBLE:
        raise ConfigError(
            f"llm provider {provider!r}: graphmem talks to OpenAI-compatible endpoints "
            f"({', '.join(sorted(_OPENAI_COMPATIBLE))}); serve the model behind one"
        )
    url_key, default_url = _OPENAI_COMPATIBLE[provider]
    key_env, url_env = _HOSTED_ENV.get(provider, (None, None))
    out: dict[str, Any] = {}
    url = inner.get(url_key) or (url_env and os.environ.get(url_env)) or default_url
    if url is not None:
        out["openai_base_url"] = url.rstrip("/") + ("/v1" if provider == "ollama" else "")
    key = inner.get("api_key") or (key_env and os.environ.get(key_env))
    if key:
        out["openai_api_key"] = key
    elif provider != "openai" and key_env is None and url is not None:
        out["openai_api_key"] = provider  # local servers want some key, and ignore it
    if inner.get("model"):
        out["llm_model"] = inner["model"]
    if inner.get("temperature") is not None:
        out["llm_temperature"] = inner["temperature"]
    return out


def _embedder(config: Mapping[str, Any]) -> dict[str, Any]:
    provider, inner = _section(config, "embedder")
    if provider is None:
        return {}
    if provider != "huggingface":
        log.warning(
            "graphmem: embedder provider %r ignored: graphmem embeds locally with "
            "sentence-transformers (provider 'huggingface' picks the model)",
            provider,
        )
        return {}
    return {"embedding_model": inner["model"]} if inner.get("model") else {}


def _graph_store(config: Mapping[str, Any]) -> dict[str, Any]:
    provider, inner = _section(config, "graph_store")
    if provider is None:
        return {}
    if provider != "neo4j":
        raise ConfigError(
            f"graph_store provider {provider!r}: graphmem stores in Neo4j, or in its embedded "
            "FalkorDB when graph_store is left out"
        )
    if config["graph_store"].get("custom_prompt"):
        raise ConfigError(_FIXED_PROMPT.format(keys="graph_store.custom_prompt"))
    if not inner.get("url"):
        raise ConfigError("graph_store.config.url is required for Neo4j (e.g. bolt://...)")
    out: dict[str, Any] = {"store": "neo4j", "neo4j_uri": inner["url"]}
    if inner.get("username"):
        out["neo4j_user"] = inner["username"]
    if inner.get("password") is not None:
        out["neo4j_password"] = inner["password"]
    if inner.get("database"):
        out["neo4j_database"] = inner["database"]
    return out


def settings_from_mem0(config: Mapping[str, Any]) -> dict[str, Any]:
    """graphmem `Settings` keyword arguments for a Mem0 config dictionary.

    Raises:
        ConfigError: an unknown key, a provider graphmem cannot use, a custom prompt.
    """
    if not isinstance(config, Mapping):
        raise ConfigError(f"the config must be a dict, got {type(config).__name__}")
    unknown = sorted(set(config) - _KNOWN)
    if unknown:
        raise ConfigError(f"unknown Mem0 config keys: {', '.join(unknown)}")
    refused = sorted(k for k in _REFUSED if config.get(k))
    if refused:
        raise ConfigError(_FIXED_PROMPT.format(keys=", ".join(refused)))
    ignored = sorted(k for k in _IGNORED if k in config)
    if ignored:
        log.info("graphmem: Mem0 config keys with no graphmem counterpart: %s", ignored)
    overrides = dict(config.get("graphmem") or {})
    return {**_llm(config), **_embedder(config), **_graph_store(config), **overrides}


def settings_of(config: Mapping[str, Any]) -> Settings:
    """graphmem `Settings` for a Mem0 config dictionary.

    Raises:
        ConfigError: what `settings_from_mem0` refuses, settings graphmem finds invalid, or
            an `llm` graphmem could not call (OpenAI with no API key in the config or the
            environment), which would leave extraction offline unasked.
    """
    try:
        settings = Settings(**settings_from_mem0(config))
    except ValidationError as exc:
        raise ConfigError(f"invalid settings from the Mem0 config: {exc}") from exc
    provider, _ = _llm_section(config)
    if provider is not None and not settings.llm_configured:
        raise ConfigError(_NO_API_KEY.format(provider=provider))
    return settings
