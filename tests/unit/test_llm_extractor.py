"""LLMExtractor through the real `openai` client, over real HTTP, against a scripted server."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import openai
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from engine.config import Settings
from engine.extraction.llm import LLMExtractor, build_llm_extractor, default_max_tokens
from engine.extraction.prompts import extraction_json_schema
from engine.extraction.schema import ChatMessage, KnownFact
from engine.testing.scripted_llm import (
    ScriptedLLM,
    ScriptedLLMProcess,
    content,
    delay,
    http_error,
    prompt_text,
    tool_call,
    tool_calls,
    tools_not_supported,
)

GOOD: dict[str, Any] = {
    "entities": [
        {"name": "USER", "type": "Person", "aliases": []},
        {"name": "tea", "type": "Food", "aliases": []},
    ],
    "facts": [
        {
            "source": "USER",
            "predicate": "LIKES",
            "target": "tea",
            "fact": "The user likes tea.",
            "valid_at": None,
        }
    ],
    "invalidations": [],
}
MESSAGES = [ChatMessage(content="I love tea.")]


_clients: list[openai.OpenAI] = []


def make_extractor(
    server: ScriptedLLM | ScriptedLLMProcess, *, max_retries: int = 2, timeout: float = 5.0
) -> LLMExtractor:
    client = openai.OpenAI(base_url=server.base_url, api_key="test-key", max_retries=0)
    _clients.append(client)
    return LLMExtractor(
        client,
        "scripted-model",
        max_retries=max_retries,
        timeout=timeout,
        backoff_base_s=0.01,
        backoff_max_s=0.05,
    )


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


@pytest.fixture
def extractor(scripted_llm: ScriptedLLM) -> LLMExtractor:
    return make_extractor(scripted_llm)


def test_tool_call_is_parsed_in_one_call(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    scripted_llm.script(tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None
    assert outcome.llm_calls == 1 and len(scripted_llm.requests) == 1
    assert [(f.source, f.predicate, f.target) for f in outcome.extraction.facts] == [
        ("USER", "LIKES", "tea")
    ]
    assert (outcome.prompt_tokens, outcome.completion_tokens) == scripted_llm.usage_totals()
    assert outcome.prompt_tokens > 0 and outcome.completion_tokens > 0
    assert outcome.mode == "tools" and outcome.latency_ms > 0


def test_request_forces_the_strict_tool(scripted_llm: ScriptedLLM, extractor: LLMExtractor) -> None:
    extractor.extract(MESSAGES, [], user_name=None)
    body = scripted_llm.requests[0]
    (tool,) = body["tools"]
    assert tool["function"]["name"] == "record_memory" and tool["function"]["strict"] is True
    assert tool["function"]["parameters"] == extraction_json_schema(strict=True)
    assert body["tool_choice"] == "required"
    assert body["max_tokens"] == default_max_tokens(1)
    assert body["model"] == "scripted-model" and "response_format" not in body


def test_strict_schema_closes_every_object() -> None:
    schema = extraction_json_schema(strict=True)
    objects = [schema, *schema["$defs"].values()]
    for node in objects:
        assert node["additionalProperties"] is False
        assert set(node["required"]) == set(node["properties"])
    assert "default" not in json.dumps(schema)


def test_the_schema_offers_how_precisely_a_date_is_known() -> None:
    """`valid_unit` is in the tool's schema, one of four values or null, and its description
    tells the model what it means."""
    fact = extraction_json_schema(strict=True)["$defs"]["ExtractedFact"]
    unit = fact["properties"]["valid_unit"]
    assert "valid_unit" in fact["required"]  # strict: present, but it may be null
    (values,) = [option["enum"] for option in unit["anyOf"] if "enum" in option]
    assert values == ["day", "week", "month", "year"]
    assert {"type": "null"} in unit["anyOf"] and "last year" in unit["description"]


def test_a_reply_gives_the_unit_of_its_date_or_leaves_it_out(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    """A reply may give `valid_unit`; one without it (every reply before it existed) is as
    valid as ever, its dates known to the day."""
    dated = {**GOOD["facts"][0], "valid_at": "2022-05-08T00:00:00Z", "valid_unit": "Year"}
    old = {**GOOD["facts"][0], "target": "coffee", "valid_at": "2023-05-07T00:00:00Z"}
    scripted_llm.script(tool_call({**GOOD, "facts": [dated, old]}))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 1
    assert [(f.target, f.valid_unit) for f in outcome.extraction.facts] == [
        ("tea", "year"),
        ("coffee", None),
    ]


def test_an_unknown_unit_is_retried_with_the_error(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    wrong = {**GOOD, "facts": [{**GOOD["facts"][0], "valid_unit": "decade"}]}
    scripted_llm.script(tool_call(wrong), tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 2
    feedback = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "facts.0.valid_unit" in feedback


def test_malformed_arguments_are_retried_with_the_error(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    scripted_llm.script(tool_call('{"entities": [}'), tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and len(outcome.extraction.facts) == 1
    assert outcome.llm_calls == 2 and len(scripted_llm.requests) == 2
    first, retry = (body["messages"] for body in scripted_llm.requests)
    assert [m["role"] for m in retry] == [m["role"] for m in first] == ["system", "user"]
    assert retry[-1]["content"].startswith(first[-1]["content"])
    assert "the tool call is not valid JSON" in retry[-1]["content"]
    assert (outcome.prompt_tokens, outcome.completion_tokens) == scripted_llm.usage_totals()


def test_malformed_arguments_give_up_without_raising(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    scripted_llm.script(*[tool_call("not json at all")] * 3)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is not None and outcome.error.startswith("invalid_output:")
    assert "3 calls" in outcome.error
    assert outcome.llm_calls == 3 == len(scripted_llm.requests)
    assert outcome.extraction.facts == [] and scripted_llm.pending == 0


def test_wrong_schema_is_retried(scripted_llm: ScriptedLLM, extractor: LLMExtractor) -> None:
    wrong = {"facts": [{"subject": "USER", "relation": "LIKES"}]}
    scripted_llm.script(tool_call(wrong), tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 2
    feedback = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "facts.0.source" in feedback and "Field required" in feedback


def test_no_tool_call_is_retried(scripted_llm: ScriptedLLM, extractor: LLMExtractor) -> None:
    scripted_llm.script(content("Sure! You like tea."), tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 2
    assert "no record_memory tool call" in scripted_llm.requests[1]["messages"][-1]["content"]


def test_other_tool_name_is_not_accepted(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(*[tool_call(GOOD, name="something_else")] * 2)
    outcome = make_extractor(scripted_llm, max_retries=1).extract(MESSAGES, [], user_name=None)
    assert outcome.error is not None and "no record_memory tool call" in outcome.error
    assert outcome.llm_calls == 2


def test_rate_limit_then_success(scripted_llm: ScriptedLLM, extractor: LLMExtractor) -> None:
    scripted_llm.script(http_error(429, "Rate limit reached"), tool_call(GOOD))
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 2
    assert len(outcome.extraction.facts) == 1
    # a transient fault is not the model's fault: no feedback message is appended
    assert scripted_llm.requests[0]["messages"] == scripted_llm.requests[1]["messages"]


def test_server_errors_give_up_with_the_reason(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(*[http_error(500, "boom")] * 2)
    outcome = make_extractor(scripted_llm, max_retries=1).extract(MESSAGES, [], user_name=None)
    assert outcome.error == "server_error: HTTP 500: boom (gave up after 2 calls)"
    assert outcome.llm_calls == 2 and outcome.prompt_tokens == 0


def test_timeout_then_success(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(delay(1.0, tool_call(GOOD)), tool_call(GOOD))
    extractor = make_extractor(scripted_llm, timeout=0.2)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 2
    assert len(outcome.extraction.facts) == 1


def test_timeouts_give_up(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(*[delay(1.0)] * 2)
    extractor = make_extractor(scripted_llm, max_retries=1, timeout=0.2)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is not None and outcome.error.startswith("timeout:")
    assert outcome.llm_calls == 2


def test_unreachable_endpoint_fails_fast(scripted_llm: ScriptedLLM) -> None:
    """Issue 48 X2: connection refused is not retried like a 5xx (it was: 4 calls, backoffs)."""
    extractor = make_extractor(scripted_llm, max_retries=3)
    scripted_llm.close()
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is not None and outcome.error.startswith("unreachable:"), outcome.error
    assert "ConnectionRefusedError" in outcome.error
    assert outcome.llm_calls == 1


def test_an_unresolvable_host_fails_fast() -> None:
    client = openai.OpenAI(base_url="http://no-such-host.invalid/v1", api_key="k", max_retries=0)
    _clients.append(client)
    extractor = LLMExtractor(client, "m", provider="generic", max_retries=3, sleep=_no_sleep)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is not None and outcome.error.startswith("unreachable:")
    assert outcome.llm_calls == 1


def _no_sleep(seconds: float) -> None:
    raise AssertionError(f"an unreachable endpoint was waited on ({seconds:.2f}s)")


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_MODEL"])
def test_an_empty_environment_variable_counts_as_unset(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Issue 48 X2: `OPENAI_API_KEY=` made every add wait on an unreachable endpoint."""
    for unset in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_PROVIDER"):
        monkeypatch.delenv(unset, raising=False)
    monkeypatch.setenv(name, "")
    settings = Settings()
    assert not settings.llm_configured
    assert settings.llm_model == "gpt-4o-mini"


def test_other_client_errors_are_not_retried(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(http_error(401, "bad key"))
    outcome = make_extractor(scripted_llm).extract(MESSAGES, [], user_name=None)
    assert outcome.error == "http_error: HTTP 401: bad key (gave up after 1 call)"
    assert outcome.llm_calls == 1


def test_json_mode_fallback_is_remembered(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    scripted_llm.script(
        tools_not_supported(),
        content(json.dumps(GOOD)),
        content("```json\n" + json.dumps(GOOD) + "\n```"),
    )
    first = extractor.extract(MESSAGES, [], user_name=None)
    second = extractor.extract(MESSAGES, [], user_name=None)
    assert first.error is None and len(first.extraction.facts) == 1
    assert first.llm_calls == 2 and first.mode == "json_schema"
    assert second.error is None and second.llm_calls == 1 and second.mode == "json_schema"
    assert extractor.mode == "json_schema"
    tools_request, *json_requests = scripted_llm.requests
    assert "tools" in tools_request
    for body in json_requests:
        assert "tools" not in body and body["response_format"]["type"] == "json_schema"
        sent = body["response_format"]["json_schema"]["schema"]
        assert sent == extraction_json_schema(strict=True)
        assert '"invalidations"' in body["messages"][0]["content"]  # the schema is in the prompt


@pytest.mark.parametrize("status", [404, 422])
def test_json_mode_fallback_on_404_and_422(scripted_llm: ScriptedLLM, status: int) -> None:
    scripted_llm.script(http_error(status, "unknown field"), content(json.dumps(GOOD)))
    outcome = make_extractor(scripted_llm).extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.mode == "json_schema" and outcome.llm_calls == 2


def test_server_that_always_rejects_tools(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.reject_tools = True
    outcome = make_extractor(scripted_llm).extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.mode == "json_schema" and outcome.llm_calls == 2


def test_strict_rejection_drops_strict_only(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(http_error(400, "'strict' is not permitted"), tool_call(GOOD))
    extractor = make_extractor(scripted_llm)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.mode == "tools" and outcome.llm_calls == 2
    assert "strict" not in scripted_llm.requests[1]["tools"][0]["function"]


def test_prompt_shows_known_facts_and_user_name(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    known = [
        KnownFact(
            id="f-123",
            text="Alice likes coffee.",
            source="Alice",
            predicate="LIKES",
            target="coffee",
        )
    ]
    messages = [
        ChatMessage(content="I hate coffee now."),
        ChatMessage(role="assistant", content="Noted!"),
    ]
    extractor.extract(messages, known, user_name="Alice")
    prompt = prompt_text(scripted_llm.requests[0])
    assert "[f-123] Alice likes coffee." in prompt
    assert "The user's name is Alice." in prompt
    assert "Alice: I hate coffee now." in prompt and "ASSISTANT: Noted!" in prompt


def test_prompt_without_user_name_uses_user(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor
) -> None:
    extractor.extract([ChatMessage(content="我叫小明")], [], user_name=None)
    prompt = prompt_text(scripted_llm.requests[0])
    assert "USER: 我叫小明" in prompt and "KNOWN facts (id, text):\n(none)" in prompt


def test_several_tool_calls_are_merged(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.script(tool_calls(tool_call(GOOD), tool_call(GOOD, name="other"), tool_call(GOOD)))
    outcome = make_extractor(scripted_llm).extract(MESSAGES, [], user_name=None)
    assert outcome.error is None and outcome.llm_calls == 1
    assert len(outcome.extraction.facts) == 2 and len(outcome.extraction.entities) == 4


def test_build_from_settings_disables_client_retries(scripted_llm: ScriptedLLM) -> None:
    config = Settings(
        openai_base_url=scripted_llm.base_url,
        openai_api_key=SecretStr("k"),
        llm_model="m1",
        llm_max_retries=1,
        llm_timeout_s=3,
    )
    scripted_llm.script(http_error(500), http_error(500))
    with LLMExtractor.from_settings(config, backoff_base_s=0.01) as extractor:
        outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert extractor.max_retries == 1 and extractor._client.max_retries == 0
    assert outcome.llm_calls == 2 == len(scripted_llm.requests)
    assert scripted_llm.requests[0]["model"] == "m1"
    with build_llm_extractor(config) as built:
        assert built.timeout == 3 and built.model == "m1"


def test_server_answers_concurrent_calls_with_fixed_latency(scripted_llm: ScriptedLLM) -> None:
    scripted_llm.latency_s = 0.3
    extractor = make_extractor(scripted_llm)
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        outcomes = list(
            pool.map(lambda _: extractor.extract(MESSAGES, [], user_name=None), range(4))
        )
    elapsed = time.perf_counter() - started
    assert all(o.error is None and o.latency_ms >= 300 for o in outcomes)
    assert len(scripted_llm.requests) == 4 and elapsed < 1.0


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "entities",
                    "facts",
                    "invalidations",
                    "name",
                    "source",
                    "predicate",
                    "target",
                    "fact",
                    "fact_id",
                    "valid_at",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(payload=JSON | st.text(max_size=40))
def test_arbitrary_arguments_never_raise(
    scripted_llm: ScriptedLLM, extractor: LLMExtractor, payload: Any
) -> None:
    scripted_llm.reset()
    raw = payload if isinstance(payload, str) else json.dumps(payload)
    scripted_llm.default = lambda body: tool_call(raw)
    outcome = extractor.extract(MESSAGES, [], user_name=None)
    assert outcome.llm_calls == (1 if outcome.error is None else 3)
    assert outcome.error is None or outcome.error.startswith("invalid_output:")


def test_server_in_its_own_process_answers_calls_in_parallel() -> None:
    with ScriptedLLMProcess(latency_s=0.5) as server:
        extractor = make_extractor(server)
        started = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            outcomes = list(
                pool.map(lambda _: extractor.extract(MESSAGES, [], user_name=None), range(4))
            )
        elapsed = time.perf_counter() - started
    assert server._process.exitcode is not None
    assert [o.error for o in outcomes] == [None] * 4
    assert all(o.llm_calls == 1 and not o.extraction.facts for o in outcomes)
    assert elapsed < 1.5  # four 0.5 s answers at once, not one after another
