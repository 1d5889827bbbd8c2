"""LLMExtractor against the ways real local servers (llama.cpp, Ollama, vLLM) differ from
OpenAI's API, each played by the scripted server over real HTTP: string-only `tool_choice`,
chat templates that enforce role alternation, tools refused with HTTP 500, schema echoes,
endless output, `response_format` support, provider presets and detection."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from engine.config import Settings
from engine.errors import ConfigError
from engine.extraction.endpoint import Provider, provider_for_url, provider_from_models
from engine.extraction.llm import LLMExtractor, default_max_tokens
from engine.extraction.prompts import extraction_json_schema
from engine.extraction.schema import ChatMessage
from engine.testing.scripted_llm import (
    ScriptedLLM,
    answer_like_a_small_model,
    content,
    echo_schema,
    endless,
    http_error,
    roles_alternate,
    tool_call,
    tools_need_jinja,
)

GOOD: dict[str, Any] = {
    "entities": [{"name": "USER", "type": "Person", "aliases": []}],
    "facts": [
        {"source": "USER", "predicate": "LIKES", "target": "tea", "fact": "The user likes tea."}
    ],
    "invalidations": [],
}
MESSAGES = [ChatMessage(content="I love tea.")]


@pytest.fixture
def server() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as llm:
        yield llm


@pytest.fixture
def clients() -> Iterator[list[openai.OpenAI]]:
    made: list[openai.OpenAI] = []
    yield made
    for client in made:
        client.close()


def extractor_for(
    server: ScriptedLLM,
    clients: list[openai.OpenAI],
    *,
    provider: Provider | None = None,
    max_retries: int = 2,
    timeout: float = 5.0,
    **options: Any,
) -> LLMExtractor:
    client = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
    clients.append(client)
    return LLMExtractor(
        client,
        "local-model",
        provider=provider,
        max_retries=max_retries,
        timeout=timeout,
        sleep=lambda _: None,
        **options,
    )


def extract(extractor: LLMExtractor) -> Any:
    return extractor.extract(MESSAGES, [], user_name=None)


# -- fault 1: tool_choice as an object is not understood by llama-server ----------------------


def test_tool_choice_is_the_string_every_server_understands(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.string_tool_choice = True  # an object tool_choice silently becomes "auto"
    server.default = answer_like_a_small_model  # which chats instead of calling the tool
    outcome = extract(extractor_for(server, clients))
    assert outcome.error is None and outcome.llm_calls == 1
    assert server.requests[0]["tool_choice"] == "required" and server.warnings == []


def test_refused_tool_choice_steps_to_the_named_form_once(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    refusal = 'tool_choice must either be a named tool, "auto", or "none"'
    server.script(http_error(400, refusal), tool_call(GOOD), tool_call(GOOD))
    extractor = extractor_for(server, clients)
    first, second = extract(extractor), extract(extractor)
    assert (first.error, first.llm_calls, second.llm_calls) == (None, 2, 1)
    named = {"type": "function", "function": {"name": "record_memory"}}
    assert [body["tool_choice"] for body in server.requests] == ["required", named, named]


# -- fault 2: a retry must keep user/assistant alternation ------------------------------------


def test_retry_keeps_roles_alternating(server: ScriptedLLM, clients: list[openai.OpenAI]) -> None:
    server.alternating_roles = True  # Gemma's template: two user turns in a row are refused
    server.script(tool_call('{"entities": [}'), tool_call(GOOD))
    outcome = extract(extractor_for(server, clients))
    assert outcome.error is None and outcome.llm_calls == 2 and len(outcome.extraction.facts) == 1
    assert all(roles_alternate(body["messages"]) for body in server.requests)
    assert [status for status, _ in server.responses] == [200, 200]
    assert "not valid JSON" in server.requests[1]["messages"][-1]["content"]


# -- fault 3: "tools unsupported" is known by its message, whatever the status ----------------


@pytest.mark.parametrize(
    ("status", "message"),
    [
        (500, "tools param requires --jinja flag"),  # llama-server without --jinja
        (500, "tool_choice param requires --jinja flag"),
        (400, "registry.ollama.ai/library/gemma:2b does not support tools"),  # Ollama
        (400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'),
    ],
)
def test_tools_refused_by_message_switch_to_json_once(
    server: ScriptedLLM, clients: list[openai.OpenAI], status: int, message: str
) -> None:
    server.script(http_error(status, message), content(json.dumps(GOOD)))
    extractor = extractor_for(server, clients)
    outcome, again = extract(extractor), extract(extractor)
    assert outcome.error is None and outcome.llm_calls == 2 and outcome.mode == "json_schema"
    assert again.llm_calls == 1 and "tools" not in server.requests[-1]


def test_a_server_that_always_answers_500_for_tools(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.reject_tools = tools_need_jinja()
    outcome = extract(extractor_for(server, clients))
    assert outcome.error is None and outcome.llm_calls == 2 and outcome.mode == "json_schema"


def test_a_plain_500_is_still_retried_not_a_fallback(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.script(http_error(500, "failed to parse the tool call"), tool_call(GOOD))
    extractor = extractor_for(server, clients)
    outcome = extract(extractor)
    assert outcome.error is None and outcome.llm_calls == 2 and extractor.mode == "tools"


# -- fault 4: valid JSON that is not an extraction is a fault ---------------------------------


@pytest.mark.parametrize("output", ["tools", "json_object", "prompt"])
def test_schema_echo_is_retried_then_reported(
    server: ScriptedLLM, clients: list[openai.OpenAI], output: str
) -> None:
    server.default = echo_schema
    outcome = extract(extractor_for(server, clients, provider="vllm", output=output))
    assert outcome.error is not None and outcome.llm_calls == 3
    assert "a JSON schema" in outcome.error and outcome.error.startswith("invalid_output:")
    assert outcome.extraction.facts == [] and outcome.mode == output


@pytest.mark.parametrize("reply", [{}, {"answer": "The user likes tea."}, [GOOD], "42"])
def test_json_that_is_not_an_extraction_is_a_fault(
    server: ScriptedLLM, clients: list[openai.OpenAI], reply: Any
) -> None:
    server.script(content(json.dumps(reply)), content(json.dumps(GOOD)))
    outcome = extract(extractor_for(server, clients, provider="llamacpp"))
    assert outcome.error is None and outcome.llm_calls == 2
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "the reply is" in feedback and (
        "missing entities" in feedback or "not a JSON" in feedback
    )


def test_an_empty_extraction_with_its_keys_is_a_success(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.script(content('{"entities": [], "facts": []}'))
    outcome = extract(extractor_for(server, clients, provider="llamacpp"))
    assert outcome.error is None and outcome.llm_calls == 1


# -- fault 5: every request caps the answer's length -----------------------------------------


def test_every_request_caps_the_answer(server: ScriptedLLM, clients: list[openai.OpenAI]) -> None:
    extractor = extractor_for(server, clients)
    extractor.extract(MESSAGES * 3, [], user_name=None)
    extract(extractor_for(server, clients, max_tokens=300))
    assert [body["max_tokens"] for body in server.requests] == [default_max_tokens(3), 300]
    assert default_max_tokens(1) < default_max_tokens(3) <= 8192
    assert 800 <= default_max_tokens(1) <= 1200  # about twice the schema: ~15 facts


def test_endless_output_is_cut_off_and_reported(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.default = lambda body: endless(seconds=30)  # without a cap it runs past any timeout
    started = time.perf_counter()
    outcome = extract(extractor_for(server, clients, max_retries=1, timeout=3.0, max_tokens=64))
    assert outcome.error is not None and "cut off at max_tokens=64" in outcome.error
    assert outcome.llm_calls == 2 and outcome.completion_tokens == 2 * 64
    assert time.perf_counter() - started < 3.0


# -- JSON modes: json_schema where accepted, json_object otherwise, prompt-only last ---------


def test_json_schema_request_carries_the_strict_schema(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.script(content(json.dumps(GOOD)))
    outcome = extract(extractor_for(server, clients, provider="llamacpp"))
    assert outcome.error is None and outcome.mode == "json_schema"
    body = server.requests[0]
    assert "tools" not in body and "tool_choice" not in body
    spec = body["response_format"]["json_schema"]
    assert spec["name"] == "record_memory" and "strict" not in spec
    assert spec["schema"] == extraction_json_schema(strict=True)


def test_json_schema_refused_falls_to_json_object_then_to_the_prompt(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    server.reject_tools = True
    server.response_formats = frozenset({"json_object"})
    extractor = extractor_for(server, clients)
    assert extract(extractor).llm_calls == 3 and extractor.mode == "json_object"
    server.response_formats = frozenset()
    assert extract(extractor).llm_calls == 2 and extractor.mode == "prompt"
    assert extract(extractor).llm_calls == 1
    kinds = [(body.get("response_format") or {}).get("type") for body in server.requests]
    assert kinds == [None, "json_schema", "json_object", "json_object", None, None]
    assert '"invalidations"' in server.requests[-1]["messages"][0]["content"]


# -- provider presets and detection -----------------------------------------------------------


@pytest.mark.parametrize(
    ("owned_by", "header", "expected", "first_mode"),
    [
        ("llamacpp", None, "llamacpp", "json_schema"),
        ("someone", "llama.cpp", "llamacpp", "json_schema"),
        ("vllm", None, "vllm", "json_schema"),
        ("openai", None, "openai", "tools"),
        ("scripted", None, "generic", "tools"),
    ],
)
def test_provider_is_detected_once_from_get_models(
    server: ScriptedLLM,
    clients: list[openai.OpenAI],
    owned_by: str,
    header: str | None,
    expected: str,
    first_mode: str,
) -> None:
    server.owned_by, server.server_header = owned_by, header
    extractor = extractor_for(server, clients)
    first, second = extract(extractor), extract(extractor)
    assert server.model_lists == 1 and extractor.describe().startswith(f"{expected}: ")
    assert first.error is None and first.mode == second.mode == first_mode


def test_a_configured_provider_is_not_probed(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    extract(extractor_for(server, clients, provider="ollama"))
    assert (
        server.model_lists == 0 and server.requests[0]["response_format"]["type"] == "json_schema"
    )


def test_presets_from_settings(server: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMEM_LLM_PROVIDER", "openai")
    monkeypatch.setenv("GRAPHMEM_LLM_MAX_TOKENS", "500")
    config = Settings(openai_base_url=server.base_url, llm_max_retries=0)
    with LLMExtractor.from_settings(config) as extractor:
        extract(extractor)
    body = server.requests[0]
    assert body["max_completion_tokens"] == 500 and "max_tokens" not in body
    assert body["tool_choice"] == "required" and body["tools"][0]["function"]["strict"] is True
    local = Settings(llm_provider="llamacpp", _env_file=None)
    assert local.llm_configured
    with LLMExtractor.from_settings(local) as extractor:
        assert extractor.base_url == "http://127.0.0.1:8080/v1" and extractor.mode == "json_schema"


@pytest.mark.parametrize(
    "settings",
    [{"llm_provider": "openai"}, {"openai_base_url": "https://api.openai.com/v1"}],
)
def test_openai_without_a_key_is_refused_naming_the_key(
    settings: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenAI's own API needs OPENAI_API_KEY: without one, building the extractor says so,
    instead of sending a placeholder key and failing every message later."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError) as raised:
        LLMExtractor.from_settings(Settings(**settings, _env_file=None))  # type: ignore[arg-type]
    assert "needs OPENAI_API_KEY" in str(raised.value)


def test_refused_length_parameter_switches_once(
    server: ScriptedLLM, clients: list[openai.OpenAI]
) -> None:
    refusal = (
        "Unsupported parameter: 'max_tokens' is not supported with this model. "
        "Use 'max_completion_tokens' instead."
    )
    server.script(http_error(400, refusal), tool_call(GOOD))
    outcome = extract(extractor_for(server, clients))
    assert outcome.error is None and outcome.llm_calls == 2
    assert "max_completion_tokens" in server.requests[1] and "max_tokens" not in server.requests[1]


def test_the_mode_is_logged_once_per_endpoint(
    server: ScriptedLLM, clients: list[openai.OpenAI], caplog: pytest.LogCaptureFixture
) -> None:
    server.owned_by = "llamacpp"
    server.default = lambda body: content(json.dumps(GOOD))
    extractor = extractor_for(server, clients)
    with caplog.at_level(logging.INFO, logger="graphmem"):
        for _ in range(3):
            extract(extractor)
    said = [r.getMessage() for r in caplog.records if "(model local-model)" in r.getMessage()]
    assert said == [f"LLM endpoint {server.base_url} (model local-model): llamacpp: json_schema"]


@pytest.mark.parametrize(
    ("headers", "owners", "url", "expected"),
    [
        ({}, ["library"], "http://localhost:11434/v1", "ollama"),
        ({}, ["library"], "http://localhost:9000/v1", "generic"),
        ({"server": "llama.cpp"}, [], "http://10.0.0.2:8080/v1", "llamacpp"),
        ({}, ["vllm"], "http://gpu-box:8000/v1", "vllm"),
        ({}, ["system", "openai"], "https://proxy.example/v1", "openai"),
        ({}, [], "http://localhost:1234/v1", "generic"),
    ],
)
def test_provider_from_models_answer(
    headers: dict[str, str], owners: list[str], url: str, expected: str
) -> None:
    assert provider_from_models(headers, owners, url) == expected
    assert provider_for_url("https://api.openai.com/v1/") == "openai"
    assert provider_for_url(url) is None
