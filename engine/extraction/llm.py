"""The LLM extractor: one structured-output call per message batch on any OpenAI-compatible
endpoint (OpenAI, Ollama, vLLM, llama.cpp's llama-server, ...).

The request asks for the `Extraction` schema in the way the endpoint accepts (`endpoint.py`):
the `record_memory` tool with `tool_choice` "required", or JSON content constrained by
`response_format` json_schema / json_object, or the schema in the prompt only. The provider is
configured or detected once from the server's `GET /models`; refusals move the endpoint down
that ladder, remembered for later calls, and the mode in use is logged once.

Every request caps the answer's length (`max_tokens`): a looping model is cut off, not waited
for. Timeouts, 429, 5xx and unusable output (including valid JSON that is not an extraction,
such as the schema echoed back) are retried a bounded number of times with exponential
backoff. A retry re-asks in ONE user turn that names the fault, so chat templates that insist
on user/assistant alternation accept it. Model and endpoint faults never raise: they come back
as `ExtractionOutcome.error`, with every call and token counted.
"""

from __future__ import annotations

import functools
import json
import logging
import random
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

from engine.config import Settings
from engine.errors import ConfigError
from engine.extraction import prompts
from engine.extraction.endpoint import (
    PRESETS,
    Capabilities,
    Endpoint,
    OutputMode,
    Provider,
    provider_for_url,
    provider_from_models,
)
from engine.extraction.reply import Fault, parse
from engine.extraction.schema import ChatMessage, Extraction, ExtractionOutcome, KnownFact
from engine.graph_types import GraphTypes

log = logging.getLogger("graphmem")

_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"
# Each refusal moves the endpoint one step down a short ladder; this bounds a server that
# keeps refusing in ways that look different.
_MAX_FALLBACKS = 8
_MAX_TOKENS_CAP = 8192


@functools.cache
def _schema_tokens() -> int:
    return len(json.dumps(prompts.extraction_json_schema(strict=True))) // 4


def default_max_tokens(batch_size: int) -> int:
    """The answer's length cap when none is set: the schema's size once per message plus
    once more (about 950 tokens for one message, some 15 facts with their entities); a
    schema echo or a loop stops there."""
    return min(_MAX_TOKENS_CAP, _schema_tokens() * (1 + max(1, batch_size)))


class _ModelCard(BaseModel):
    owned_by: str = ""


class _ModelList(BaseModel):
    data: list[_ModelCard] = []


@dataclass
class _Tally:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    mode: str = "tools"


class LLMExtractor:
    """Extracts entities, facts and invalidations with one structured-output call per batch.

    Args:
        client: an `openai.OpenAI` client; build it with `max_retries=0` so that every HTTP
            call is counted here (`from_settings` does).
        model: the model name the endpoint serves.
        provider: `openai`, `ollama`, `llamacpp` or `vllm` (a preset), or None to detect it
            from the server's `GET /models` on first use.
        output: the structured-output mode to start from (`tools`, `json_schema`,
            `json_object`, `prompt`); None for the provider's preset.
        max_tokens: the cap on one answer's length; None for `default_max_tokens`.
        temperature: sampling temperature.
        max_retries: retries after the first call for timeouts, 429, 5xx and unusable output.
        timeout: seconds per HTTP call.
        backoff_base_s: first backoff delay; doubles each retry, plus up to 50% jitter.
        backoff_max_s: cap on one backoff delay.
        sleep: how to wait between retries (tests may pass a no-op).

    Example:
        >>> extractor = build_llm_extractor(Settings(llm_provider="ollama", llm_model="qwen3"))
        >>> outcome = extractor.extract([ChatMessage(content="I love tea")], [], user_name=None)
        >>> outcome.error or outcome.extraction.facts  # doctest: +SKIP
    """

    name = "llm"

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        provider: Provider | None = None,
        output: OutputMode | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        max_retries: int = 3,
        timeout: float = 60.0,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        sleep: Callable[[float], None] = time.sleep,
        graph_types: GraphTypes | None = None,
    ) -> None:
        self._client = client
        self.model = model
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._sleep = sleep
        self.graph_types = graph_types or GraphTypes()
        self.base_url = str(client.base_url).rstrip("/")
        self._endpoint = Endpoint(provider or provider_for_url(self.base_url), output)
        self._detecting = threading.Lock()
        self._announced: Capabilities | None = None
        self._owns_client = False

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> LLMExtractor:
        """An extractor on a fresh client built from `settings`, client retries disabled.

        Raises:
            ConfigError: the endpoint is OpenAI's own API and no OPENAI_API_KEY is set.
        """
        provider = None if settings.llm_provider == "auto" else settings.llm_provider
        preset_url = PRESETS[provider].base_url if provider else None
        base_url = settings.openai_base_url or preset_url or _DEFAULT_BASE_URL
        key = settings.openai_api_key
        if key is None and provider_for_url(base_url) == "openai":
            raise ConfigError(
                f"the LLM endpoint {base_url} (OpenAI's API) needs OPENAI_API_KEY; set it, or "
                "OPENAI_BASE_URL / GRAPHMEM_LLM_PROVIDER for a local server (no key needed)"
            )
        client = openai.OpenAI(
            api_key=key.get_secret_value() if key else _PLACEHOLDER_KEY,
            base_url=base_url,
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )
        options: dict[str, Any] = {
            "provider": provider,
            "output": None if settings.llm_output == "auto" else settings.llm_output,
            "max_tokens": settings.llm_max_tokens,
            "temperature": settings.llm_temperature,
            "max_retries": settings.llm_max_retries,
            "timeout": settings.llm_timeout_s,
            "graph_types": settings.graph_types,
        }
        extractor = cls(client, settings.llm_model, **(options | overrides))
        extractor._owns_client = True
        return extractor

    def close(self) -> None:
        """Close the HTTP client if this extractor built it (`from_settings`)."""
        if self._owns_client:
            self._client.close()

    def __enter__(self) -> LLMExtractor:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def mode(self) -> OutputMode:
        """The structured-output mode requests use now (`tools` until the endpoint is known)."""
        return self._endpoint.capabilities.output

    def describe(self) -> str:
        """The endpoint's provider and structured-output mode, e.g. `llamacpp: json_schema`."""
        return self._endpoint.capabilities.describe()

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome:
        """Extract from `messages`, given the `known` facts about the entities involved.

        Never raises for endpoint or model faults; `error` names the last fault instead.
        """
        started = time.perf_counter()
        self._detect()
        tally = _Tally()
        feedback: str | None = None
        retries = fallbacks = 0
        while True:
            result = self._call_once(messages, known, user_name, feedback, tally)
            if isinstance(result, Extraction):
                self._announce()
                return _outcome(tally, started, extraction=result)
            if result.kind == "fallback" and fallbacks < _MAX_FALLBACKS:
                fallbacks += 1
                continue
            if result.kind in ("fatal", "fallback") or retries >= self.max_retries:
                return _outcome(tally, started, error=_give_up(result, tally))
            if result.kind == "invalid":
                feedback = result.reason
            self._sleep(self._backoff(retries))
            retries += 1

    def _detect(self) -> None:
        with self._detecting:
            if self._endpoint.known:
                return
            provider = self._probe()
            caps = self._endpoint.settle(provider)
            log.info(
                "LLM endpoint %s looks like %s; starting with %s",
                self.base_url,
                provider,
                caps.output,
            )

    def _probe(self) -> Provider:
        try:
            raw = self._client.models.with_raw_response.list(timeout=min(self.timeout, 10.0))
            models = _ModelList.model_validate_json(raw.content)
        except (openai.OpenAIError, ValidationError) as exc:
            log.info("LLM endpoint %s: no usable GET /models (%s)", self.base_url, exc)
            return "generic"
        headers = {name.lower(): value for name, value in raw.headers.items()}
        return provider_from_models(headers, [m.owned_by for m in models.data], self.base_url)

    def _announce(self) -> None:
        caps = self._endpoint.capabilities
        with self._detecting:
            if caps == self._announced:
                return
            self._announced = caps
            log.info("LLM endpoint %s (model %s): %s", self.base_url, self.model, caps.describe())

    def _backoff(self, retry: int) -> float:
        delay = min(self.backoff_max_s, self.backoff_base_s * 2.0**retry)
        return delay * (1 + random.random() / 2)  # jitter spreads out synchronized retries

    def _call_once(
        self,
        messages: list[ChatMessage],
        known: list[KnownFact],
        user_name: str | None,
        feedback: str | None,
        tally: _Tally,
    ) -> Extraction | Fault:
        caps = self._endpoint.capabilities
        tally.mode = caps.output
        chat = _chat(messages, known, user_name, feedback, caps.output, self.graph_types)
        max_tokens = self.max_tokens or default_max_tokens(len(messages))
        tally.calls += 1
        try:
            raw = self._client.chat.completions.with_raw_response.create(
                model=self.model,
                messages=chat,
                temperature=self.temperature,
                timeout=self.timeout,
                **caps.request_options(max_tokens),
            )
        except openai.APIStatusError as exc:
            return self._on_status(exc, caps)
        except openai.APITimeoutError:
            return Fault("transient", f"timeout: no answer within {self.timeout:g}s")
        except openai.APIConnectionError as exc:
            if unreachable(exc):  # nothing listens there: retrying only makes the add wait
                return Fault("fatal", f"unreachable: {self.base_url}: {_root(exc)}")
            return Fault("transient", f"connection: {exc}")
        except openai.OpenAIError as exc:
            return Fault("invalid", f"invalid_output: unusable response: {exc}")
        found, usage = parse(raw.content, tools=caps.output == "tools", max_tokens=max_tokens)
        tally.prompt_tokens += usage.prompt_tokens
        tally.completion_tokens += usage.completion_tokens
        return found

    def _on_status(self, exc: openai.APIStatusError, sent: Capabilities) -> Fault:
        status = exc.status_code
        detail = f"HTTP {status}: {_error_message(exc)}"
        if status == 429:
            return Fault("transient", f"rate_limited: {detail}")
        refused = self._endpoint.refused(sent, status, f"{exc.message} {exc.body}")
        if refused is not None:
            now = self._endpoint.capabilities.describe()
            log.info("LLM endpoint %s: %s (%s); now %s", self.base_url, refused, detail, now)
            return Fault("fallback", f"refused: {refused}: {detail}")
        if status >= 500 or status == 408:
            return Fault("transient", f"server_error: {detail}")
        return Fault("fatal", f"http_error: {detail}")


def unreachable(exc: BaseException) -> bool:
    """Whether a connection error means no server is there (refused, or a name that does
    not resolve), as opposed to one that broke off or timed out."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError | socket.gaierror):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _root(exc: BaseException) -> str:
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return f"{type(exc).__name__}: {exc}"


def build_llm_extractor(settings: Settings) -> LLMExtractor:
    """The LLM extractor the settings describe (endpoint, provider, model, limits, retries)."""
    return LLMExtractor.from_settings(settings)


def _chat(
    messages: list[ChatMessage],
    known: list[KnownFact],
    user_name: str | None,
    feedback: str | None,
    output: OutputMode,
    types: GraphTypes,
) -> list[ChatCompletionMessageParam]:
    json_mode = output != "tools"
    schema = prompts.extraction_json_schema(strict=False) if json_mode else None
    chat = prompts.build_messages(
        messages, known, user_name=user_name, json_schema=schema, types=types
    )
    if feedback is not None:
        # One user turn, not a second one after it: templates that enforce user/assistant
        # alternation (Gemma, Mistral, Llama 2) refuse two user messages in a row.
        note = prompts.retry_message(feedback, json_mode=json_mode)
        chat[-1] = {"role": "user", "content": f"{_text(chat[-1])}\n\n{_text(note)}"}
    return chat


def _text(message: ChatCompletionMessageParam) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]  # some servers nest it; the client usually unwraps it already
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message else exc.message


def _give_up(fault: Fault, tally: _Tally) -> str:
    calls = "call" if tally.calls == 1 else "calls"
    return f"{printable(fault.reason)} (gave up after {tally.calls} {calls})"


def printable(text: str) -> str:
    """`text` with control characters escaped: a fault's reason quotes the model's output, and
    it is stored with the episode (a NUL byte would end FalkorDB's query text)."""
    return "".join(c if c.isprintable() or c in "\n\t" else repr(c)[1:-1] for c in text)


def _outcome(
    tally: _Tally, started: float, *, extraction: Extraction | None = None, error: str | None = None
) -> ExtractionOutcome:
    return ExtractionOutcome(
        extraction=extraction if extraction is not None else Extraction(),
        llm_calls=tally.calls,
        prompt_tokens=tally.prompt_tokens,
        completion_tokens=tally.completion_tokens,
        latency_ms=(time.perf_counter() - started) * 1000,
        error=error,
        mode=tally.mode,
    )
