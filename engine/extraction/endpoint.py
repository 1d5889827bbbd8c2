"""What one OpenAI-compatible endpoint accepts, learned once and remembered.

Servers differ in how they take structured output. A provider preset says where to start;
the endpoint's own refusals say where to go next, always downwards and never back:

    tools (tool_choice "required" -> the named form -> none) -> response_format json_schema
        -> response_format json_object -> the schema in the prompt only

`tools` is the function-calling path; the three JSON modes ask for the answer as the message
content. A refusal is recognised by its message as well as its status, because servers answer
the same thing as 400, 422 or 500 (llama.cpp without `--jinja`: HTTP 500 "tools param
requires --jinja flag"). The preset also names the parameter that caps the answer's length
(`max_tokens`, or `max_completion_tokens` for OpenAI's newer models); a refusal of one switches
to the other.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import urlparse

from engine.extraction import prompts

Provider = Literal["openai", "ollama", "llamacpp", "vllm", "generic"]
OutputMode = Literal["tools", "json_schema", "json_object", "prompt"]
ToolChoice = Literal["required", "named", "none"]
TokenParam = Literal["max_tokens", "max_completion_tokens"]

LADDER: tuple[OutputMode, ...] = ("tools", "json_schema", "json_object", "prompt")
_TOOL_CHOICES: tuple[ToolChoice, ...] = ("required", "named", "none")
_REFUSAL_STATUSES = (400, 404, 422, 500, 501)
_REFUSED = (
    "not support",
    "unsupported",
    "does not support",
    "requires --jinja",
    "jinja",
    "not enabled",
    "enable-auto-tool-choice",
    "not allowed",
    "not permitted",
    "unknown",
    "unrecognized",
)
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "json schema", "grammar")


@dataclass(frozen=True)
class Preset:
    """Where a provider starts: the first output mode, strict tool schemas, the length cap's
    parameter, and the base URL used when `OPENAI_BASE_URL` is not set."""

    provider: Provider
    output: OutputMode
    strict: bool
    token_param: TokenParam
    base_url: str | None


PRESETS: dict[Provider, Preset] = {
    "openai": Preset("openai", "tools", True, "max_completion_tokens", "https://api.openai.com/v1"),
    # local servers constrain json_schema output with a grammar: valid shape even from small
    # models, and no dependence on the chat template's tool-call support
    "ollama": Preset("ollama", "json_schema", False, "max_tokens", "http://localhost:11434/v1"),
    "llamacpp": Preset("llamacpp", "json_schema", False, "max_tokens", "http://127.0.0.1:8080/v1"),
    "vllm": Preset("vllm", "json_schema", False, "max_tokens", "http://localhost:8000/v1"),
    "generic": Preset("generic", "tools", True, "max_tokens", None),
}


@dataclass(frozen=True)
class Capabilities:
    """How requests to the endpoint are shaped right now."""

    provider: Provider
    output: OutputMode
    tool_choice: ToolChoice
    strict: bool
    token_param: TokenParam

    def describe(self) -> str:
        """One line for the log, e.g. `llamacpp: json_schema` or `openai: tools (required)`."""
        if self.output != "tools":
            return f"{self.provider}: {self.output}"
        strict = ", strict" if self.strict else ""
        return f"{self.provider}: tools (tool_choice {self.tool_choice}{strict})"

    def request_options(self, max_tokens: int) -> dict[str, Any]:
        """The `chat.completions.create` arguments that carry the structured-output request."""
        options: dict[str, Any] = {self.token_param: max_tokens}
        if self.output == "tools":
            options["tools"] = [prompts.tool_definition(strict=self.strict)]
            if self.tool_choice == "required":
                options["tool_choice"] = "required"
            elif self.tool_choice == "named":
                options["tool_choice"] = {
                    "type": "function",
                    "function": {"name": prompts.TOOL_NAME},
                }
        elif self.output == "json_schema":
            spec: dict[str, Any] = {
                "name": prompts.TOOL_NAME,
                "schema": prompts.extraction_json_schema(strict=True),
            }
            if self.strict:
                spec["strict"] = True
            options["response_format"] = {"type": "json_schema", "json_schema": spec}
        elif self.output == "json_object":
            options["response_format"] = {"type": "json_object"}
        return options


def initial_capabilities(provider: Provider, output: OutputMode | None = None) -> Capabilities:
    """The preset's starting point; `output` (a setting) overrides the first mode."""
    preset = PRESETS[provider]
    return Capabilities(
        provider=provider,
        output=output or preset.output,
        tool_choice="required",
        strict=preset.strict,
        token_param=preset.token_param,
    )


def adapt(caps: Capabilities, status: int, message: str) -> tuple[Capabilities, str] | None:
    """The capabilities to try next after the endpoint refused a request sent with `caps`,
    and what was refused; None when the answer is not a refusal of something optional."""
    if status not in _REFUSAL_STATUSES:
        return None
    text = message.lower()
    tokens = _adapt_tokens(caps, text)
    if tokens is not None:
        return tokens
    if caps.output == "tools":
        return _adapt_tools(caps, status, text)
    if caps.output != "prompt" and (status == 422 or any(w in text for w in _FORMAT_WORDS)):
        return _next_output(caps), f"response_format {caps.output} refused"
    return None


def _adapt_tokens(caps: Capabilities, text: str) -> tuple[Capabilities, str] | None:
    # OpenAI's newer models refuse max_tokens and name max_completion_tokens instead;
    # servers that predate max_completion_tokens refuse it by name
    if "max_completion_tokens" not in text:
        return None
    if caps.token_param == "max_tokens":
        return replace(caps, token_param="max_completion_tokens"), "max_tokens refused"
    if any(marker in text for marker in _REFUSED):
        return replace(caps, token_param="max_tokens"), "max_completion_tokens refused"
    return None


def _adapt_tools(caps: Capabilities, status: int, text: str) -> tuple[Capabilities, str] | None:
    if caps.strict and "strict" in text:
        return replace(caps, strict=False), "strict tool schemas refused"
    if "tool_choice" in text and "jinja" not in text and caps.tool_choice != "none":
        step = _TOOL_CHOICES[_TOOL_CHOICES.index(caps.tool_choice) + 1]
        return replace(caps, tool_choice=step), f"tool_choice {caps.tool_choice} refused"
    about_tools = "tool" in text or "function" in text
    if status in (404, 422) or (about_tools and any(m in text for m in _REFUSED)):
        return _next_output(caps), "tools refused"
    if status == 400 and about_tools:
        return _next_output(caps), "tools refused"
    return None


def _next_output(caps: Capabilities) -> Capabilities:
    return replace(caps, output=LADDER[LADDER.index(caps.output) + 1])


class Endpoint:
    """The capabilities of one endpoint, shared by every call of one extractor (thread-safe).

    A refusal moves the endpoint on only if nothing else has moved it since the refused
    request was sent, so concurrent calls that hit the same refusal step down once.
    """

    def __init__(self, provider: Provider | None, output: OutputMode | None = None) -> None:
        self._lock = threading.Lock()
        self._output = output
        self._caps = initial_capabilities(provider, output) if provider else None

    @property
    def known(self) -> bool:
        """Whether the provider is settled (given, or detected already)."""
        return self._caps is not None

    def settle(self, provider: Provider) -> Capabilities:
        """Set the detected provider, unless another thread did first; the capabilities."""
        with self._lock:
            if self._caps is None:
                self._caps = initial_capabilities(provider, self._output)
            return self._caps

    @property
    def capabilities(self) -> Capabilities:
        caps = self._caps
        return caps if caps is not None else initial_capabilities("generic", self._output)

    def refused(self, sent: Capabilities, status: int, message: str) -> str | None:
        """Step down after a refusal of `sent`; what was refused, or None if it was not one."""
        step = adapt(sent, status, message)
        if step is None:
            return None
        with self._lock:
            if self._caps == sent:
                self._caps = step[0]
        return step[1]


def provider_for_url(base_url: str) -> Provider | None:
    """The provider a base URL alone names: OpenAI's own API, else unknown (None)."""
    return "openai" if urlparse(base_url).hostname == "api.openai.com" else None


def provider_from_models(
    headers: dict[str, str], owners: list[str], base_url: str | None
) -> Provider:
    """The provider a `GET /models` answer reveals: its `Server` header or `owned_by`."""
    server = headers.get("server", "").lower()
    owned = {owner.lower() for owner in owners}
    if "llama.cpp" in server or "llamacpp" in owned:
        return "llamacpp"
    if "vllm" in owned:
        return "vllm"
    port = urlparse(base_url or "").port
    if "ollama" in server or "ollama" in owned or ("library" in owned and port == 11434):
        return "ollama"
    if "openai" in owned or "openai-internal" in owned:
        return "openai"
    return "generic"
