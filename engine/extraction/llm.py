"""The LLM extractor: one tool-call round per message batch on any OpenAI-compatible endpoint.

Normal path: one `chat.completions` call that forces the `record_memory` tool, whose JSON
schema is the pydantic `Extraction` model. Endpoints that reject tools get JSON mode instead
(schema in the prompt), and the extractor remembers that for later calls. Timeouts, 429, 5xx
and unusable output are retried a bounded number of times with exponential backoff; unusable
output is re-asked with the validation error appended. Model and endpoint faults never raise:
they come back as `ExtractionOutcome.error`, with every call and token counted.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ValidationError

from engine.config import Settings
from engine.extraction import prompts
from engine.extraction.schema import ChatMessage, Extraction, ExtractionOutcome, KnownFact

Mode = Literal["tools", "json"]
FaultKind = Literal["transient", "invalid", "fatal", "fallback"]

_DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers (Ollama, vLLM, llama.cpp) ignore the key, but the client insists on one.
_PLACEHOLDER_KEY = "not-needed"


# -- the endpoint's reply, validated at the edge -------------------------------------------


class _Function(BaseModel):
    name: str = ""
    arguments: Any = None


class _ToolCall(BaseModel):
    type: str = "function"
    function: _Function | None = None


class _Message(BaseModel):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    message: _Message


class _Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Completion(BaseModel):
    choices: list[_Choice]
    usage: _Usage | None = None


@dataclass(frozen=True)
class _Fault:
    kind: FaultKind
    reason: str


@dataclass
class _Tally:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    mode: Mode = "tools"


class LLMExtractor:
    """Extracts entities, facts and invalidations with one tool call per message batch.

    Args:
        client: an `openai.OpenAI` client; build it with `max_retries=0` so that every HTTP
            call is counted here (`from_settings` does).
        model: the model name the endpoint serves.
        temperature: sampling temperature.
        max_retries: retries after the first call for timeouts, 429, 5xx and unusable output.
        timeout: seconds per HTTP call.
        backoff_base_s: first backoff delay; doubles each retry, plus up to 50% jitter.
        backoff_max_s: cap on one backoff delay.
        strict: ask for strict tool schemas; dropped by itself if the endpoint refuses it.
        sleep: how to wait between retries (tests may pass a no-op).

    Example:
        >>> extractor = build_llm_extractor(Settings(openai_base_url="http://localhost:11434/v1"))
        >>> outcome = extractor.extract([ChatMessage(content="I love tea")], [], user_name=None)
        >>> outcome.error or outcome.extraction.facts  # doctest: +SKIP
    """

    name = "llm"

    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        temperature: float = 0.0,
        max_retries: int = 3,
        timeout: float = 60.0,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
        strict: bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._client = client
        self.model = model
        self.temperature = temperature
        self.max_retries = max_retries
        self.timeout = timeout
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self._mode: Mode = "tools"
        self._strict = strict
        self._owns_client = False

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> LLMExtractor:
        """An extractor on a fresh client built from `settings`, client retries disabled."""
        key = settings.openai_api_key
        client = openai.OpenAI(
            api_key=key.get_secret_value() if key else _PLACEHOLDER_KEY,
            base_url=settings.openai_base_url or _DEFAULT_BASE_URL,
            timeout=settings.llm_timeout_s,
            max_retries=0,
        )
        options: dict[str, Any] = {
            "temperature": settings.llm_temperature,
            "max_retries": settings.llm_max_retries,
            "timeout": settings.llm_timeout_s,
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
    def mode(self) -> Mode:
        """`tools`, or `json` once the endpoint has rejected tools."""
        return self._mode

    def extract(
        self, messages: list[ChatMessage], known: list[KnownFact], *, user_name: str | None
    ) -> ExtractionOutcome:
        """Extract from `messages`, given the `known` facts about the entities involved.

        Never raises for endpoint or model faults; `error` names the last fault instead.
        """
        started = time.perf_counter()
        tally = _Tally()
        feedback: str | None = None
        retries = 0
        while True:
            result = self._call_once(messages, known, user_name, feedback, tally)
            if isinstance(result, Extraction):
                return _outcome(tally, started, extraction=result)
            if result.kind == "fallback":
                continue  # bounded: each fallback changes state one way, at most twice
            if result.kind == "fatal" or retries >= self.max_retries:
                return _outcome(tally, started, error=_give_up(result, tally))
            if result.kind == "invalid":
                feedback = result.reason
            self._sleep(self._backoff(retries))
            retries += 1

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
    ) -> Extraction | _Fault:
        mode, strict = self._mode, self._strict
        tally.mode = mode
        chat = self._chat(messages, known, user_name, feedback, mode)
        tally.calls += 1
        try:
            body = self._post(chat, mode, strict)
        except openai.APIStatusError as exc:
            return self._on_status(exc, mode, strict)
        except openai.APITimeoutError:
            return _Fault("transient", f"timeout: no answer within {self.timeout:g}s")
        except openai.APIConnectionError as exc:
            return _Fault("transient", f"connection: {exc}")
        except openai.OpenAIError as exc:
            return _Fault("invalid", f"invalid_output: unusable response: {exc}")
        return _parse(body, mode, tally)

    def _chat(
        self,
        messages: list[ChatMessage],
        known: list[KnownFact],
        user_name: str | None,
        feedback: str | None,
        mode: Mode,
    ) -> list[ChatCompletionMessageParam]:
        schema = prompts.extraction_json_schema(strict=False) if mode == "json" else None
        chat = prompts.build_messages(messages, known, user_name=user_name, json_schema=schema)
        if feedback is not None:
            chat.append(prompts.retry_message(feedback, json_mode=mode == "json"))
        return chat

    def _post(self, chat: list[ChatCompletionMessageParam], mode: Mode, strict: bool) -> bytes:
        # The raw body is validated with our own models: an endpoint that answers 200 with a
        # malformed completion is invalid output, not an AttributeError deep in here.
        create = self._client.chat.completions.with_raw_response.create
        if mode == "json":
            raw = create(
                model=self.model,
                messages=chat,
                temperature=self.temperature,
                timeout=self.timeout,
                response_format={"type": "json_object"},
            )
        else:
            raw = create(
                model=self.model,
                messages=chat,
                temperature=self.temperature,
                timeout=self.timeout,
                tools=[prompts.tool_definition(strict=strict)],
                tool_choice={"type": "function", "function": {"name": prompts.TOOL_NAME}},
            )
        return raw.content

    def _on_status(self, exc: openai.APIStatusError, mode: Mode, strict: bool) -> _Fault:
        status = exc.status_code
        detail = f"HTTP {status}: {_error_message(exc)}"
        if status == 429:
            return _Fault("transient", f"rate_limited: {detail}")
        if status >= 500 or status == 408:
            return _Fault("transient", f"server_error: {detail}")
        if mode == "tools" and _rejects_tools(exc):
            with self._lock:
                if strict and "strict" in _error_text(exc):
                    self._strict = False
                else:
                    self._mode = "json"
            return _Fault("fallback", f"tools_unsupported: {detail}")
        return _Fault("fatal", f"http_error: {detail}")


def build_llm_extractor(settings: Settings) -> LLMExtractor:
    """The LLM extractor the settings describe (endpoint, model, timeout, retries)."""
    return LLMExtractor.from_settings(settings)


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]  # some servers nest it; the client usually unwraps it already
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message else exc.message


def _error_text(exc: openai.APIStatusError) -> str:
    return f"{exc.message} {exc.body}".lower()


def _rejects_tools(exc: openai.APIStatusError) -> bool:
    if exc.status_code in (404, 422):
        return True
    text = _error_text(exc)
    return exc.status_code == 400 and ("tool" in text or "function" in text or "strict" in text)


def _parse(body: bytes, mode: Mode, tally: _Tally) -> Extraction | _Fault:
    try:
        completion = _Completion.model_validate_json(body)
    except ValidationError as exc:
        return _Fault("invalid", f"invalid_output: malformed completion: {_brief(exc)}")
    if completion.usage is not None:
        tally.prompt_tokens += completion.usage.prompt_tokens
        tally.completion_tokens += completion.usage.completion_tokens
    if not completion.choices:
        return _Fault("invalid", "invalid_output: the completion has no choices")
    message = completion.choices[0].message
    if mode == "json":
        return _from_content(message)
    return _from_tool_calls(message)


def _from_tool_calls(message: _Message) -> Extraction | _Fault:
    calls = [
        call.function
        for call in message.tool_calls or []
        if call.function is not None and call.function.name == prompts.TOOL_NAME
    ]
    if not calls:
        said = " (it answered with text instead)" if message.content else ""
        return _Fault("invalid", f"invalid_output: no {prompts.TOOL_NAME} tool call{said}")
    try:
        parts = [_validate(call.arguments) for call in calls]
    except ValidationError as exc:
        reason = f"invalid_output: arguments do not match the schema: {_brief(exc)}"
        return _Fault("invalid", reason)
    return parts[0] if len(parts) == 1 else _merge(parts)


def _from_content(message: _Message) -> Extraction | _Fault:
    if not message.content or not message.content.strip():
        return _Fault("invalid", "invalid_output: empty reply, expected a JSON object")
    try:
        return Extraction.model_validate_json(_unfence(message.content))
    except ValidationError as exc:
        return _Fault("invalid", f"invalid_output: reply does not match the schema: {_brief(exc)}")


def _validate(arguments: Any) -> Extraction:
    # The API sends arguments as a JSON string; a few servers send the object itself.
    if isinstance(arguments, str | bytes):
        return Extraction.model_validate_json(arguments)
    return Extraction.model_validate(arguments)


def _unfence(text: str) -> str:
    # Some models wrap JSON-mode answers in a Markdown code fence despite being told not to.
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```"):
        stripped = stripped[3:-3]
        first_line, _, rest = stripped.partition("\n")
        stripped = rest if first_line.strip().lower() in ("", "json") else stripped
    return stripped


def _merge(parts: list[Extraction]) -> Extraction:
    return Extraction(
        entities=[entity for part in parts for entity in part.entities],
        facts=[fact for part in parts for fact in part.facts],
        invalidations=[item for part in parts for item in part.invalidations],
    )


def _brief(exc: ValidationError, limit: int = 5) -> str:
    errors = exc.errors(include_url=False, include_input=False)
    shown = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in errors]
    more = f" (+{len(shown) - limit} more)" if len(shown) > limit else ""
    return "; ".join(shown[:limit]) + more


def _give_up(fault: _Fault, tally: _Tally) -> str:
    calls = "call" if tally.calls == 1 else "calls"
    return f"{fault.reason} (gave up after {tally.calls} {calls})"


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
