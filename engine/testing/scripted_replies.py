"""What the scripted LLM server answers: reply types, ready-made responders, and the rendering
of a reply as an OpenAI chat completion (or error) body. See `engine/testing/scripted_llm.py`."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

EMPTY_EXTRACTION: dict[str, Any] = {"entities": [], "facts": [], "invalidations": []}
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ToolCall:
    """Answer with one tool call; `arguments` as a dict, or a raw (maybe malformed) string."""

    arguments: dict[str, Any] | str
    name: str = "record_memory"


@dataclass(frozen=True)
class ToolCalls:
    """Answer with several tool calls in one message (parallel tool calls)."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Content:
    """Answer with plain assistant text and no tool call."""

    text: str


@dataclass(frozen=True)
class HttpError:
    """Answer with an HTTP error status and an OpenAI-style error body."""

    status: int
    message: str = "scripted error"
    type: str = "server_error"
    code: str | None = None


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` before answering with `then` (longer than the client timeout: a timeout)."""

    seconds: float
    then: Reply = field(default_factory=lambda: ToolCall(EMPTY_EXTRACTION))


@dataclass(frozen=True)
class Endless:
    """A model that never stops: text until the request's length cap (`finish_reason`
    "length"), or, when the request sets no cap, for `seconds` (past any client timeout)."""

    seconds: float = 30.0


Reply = ToolCall | ToolCalls | Content | HttpError | Delay | Endless
Responder = Callable[[dict[str, Any]], Reply]


def tool_call(arguments: dict[str, Any] | str, name: str = "record_memory") -> ToolCall:
    return ToolCall(arguments, name)


def tool_calls(*calls: ToolCall) -> ToolCalls:
    return ToolCalls(calls)


def content(text: str) -> Content:
    return Content(text)


def http_error(status: int, message: str = "scripted error") -> HttpError:
    kinds = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_exceeded"}
    return HttpError(status, message, kinds.get(status, "server_error"))


def tools_not_supported() -> HttpError:
    return HttpError(400, "tools are not supported by this model", "invalid_request_error")


def tools_need_jinja() -> HttpError:
    """What llama-server started without `--jinja` answers to a request that sends tools."""
    return HttpError(500, "tools param requires --jinja flag", "server_error")


def roles_must_alternate() -> HttpError:
    """What a chat template that enforces alternation (Gemma's) makes the server answer."""
    message = "Conversation roles must alternate user/assistant/user/assistant/..."
    return HttpError(400, message, "invalid_request_error")


def delay(seconds: float, then: Reply | None = None) -> Delay:
    return Delay(seconds, then if then is not None else ToolCall(EMPTY_EXTRACTION))


def endless(seconds: float = 30.0) -> Endless:
    return Endless(seconds)


def estimate_tokens(text: str) -> int:
    """The server's token count for a text: one token per four characters."""
    return len(text) // CHARS_PER_TOKEN


def prompt_text(body: dict[str, Any]) -> str:
    """All message contents of a request, joined: what `prompt_tokens` is estimated from."""
    parts = [m.get("content") for m in body.get("messages", []) if isinstance(m, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def length_cap(body: dict[str, Any]) -> int | None:
    """The request's cap on the answer, in tokens (`max_tokens` or `max_completion_tokens`)."""
    for key in ("max_completion_tokens", "max_tokens"):
        if isinstance(body.get(key), int):
            return int(body[key])
    return None


def answer_empty(body: dict[str, Any]) -> Reply:
    """Default responder: an empty extraction, as a tool call or as JSON-mode content."""
    if body.get("tools"):
        return ToolCall(EMPTY_EXTRACTION)
    return Content(json.dumps(EMPTY_EXTRACTION))


def answer_like_a_small_model(body: dict[str, Any]) -> Reply:
    """A small local model: calls the tool only when `tool_choice` forces it (otherwise it
    chats), and answers JSON content when asked for JSON."""
    if not body.get("tools"):
        return Content(json.dumps(EMPTY_EXTRACTION))
    choice = body.get("tool_choice", "auto")
    named = isinstance(choice, dict) and choice.get("function", {}).get("name") == "record_memory"
    if choice == "required" or named:
        return ToolCall(EMPTY_EXTRACTION)
    return Content("Sure! I will remember that you love tea.")


def echo_schema(body: dict[str, Any]) -> Reply:
    """A model that answers with the JSON schema it was given (a known small-model failure)."""
    schema = sent_schema(body)
    if body.get("tools"):
        return ToolCall(schema)
    return Content(json.dumps(schema))


def sent_schema(body: dict[str, Any]) -> dict[str, Any]:
    """The schema a request carries: the tool's parameters, the response_format schema, or the
    first JSON object in the system prompt."""
    if body.get("tools"):
        return dict(body["tools"][0]["function"]["parameters"])
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        return dict(response_format["json_schema"]["schema"])
    system = str(body["messages"][0]["content"])
    schema, _ = json.JSONDecoder().raw_decode(system[system.index("\n{") + 1 :])
    return dict(schema)


def render(reply: Reply, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of a reply (not a `Delay`) to the request `body`; output
    longer than the request's length cap is cut there, with `finish_reason` "length"."""
    if isinstance(reply, Delay):
        raise TypeError("a Delay is waited out before rendering")
    if isinstance(reply, HttpError):
        return reply.status, error_body(reply.message, reply.type, reply.code)
    cap = length_cap(body)
    if isinstance(reply, Endless):
        return 200, _endless(body, cap or 10_000)
    if isinstance(reply, ToolCall | ToolCalls):
        calls = [reply] if isinstance(reply, ToolCall) else list(reply.calls)
        raws = [_raw_arguments(call) for call in calls]
        output, finish = _cut("".join(raws), cap, "tool_calls")
        if finish == "length":
            raws = [output]
        wire = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": call.name, "arguments": raw},
            }
            for call, raw in zip(calls, raws, strict=False)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": wire}
        return 200, _completion(body, message, finish, output)
    text, finish = _cut(reply.text, cap, "stop")
    return 200, _completion(body, {"role": "assistant", "content": text}, finish, text)


def _endless(body: dict[str, Any], cap: int) -> dict[str, Any]:
    text = ('{"entities": [' + '{"name": "again"}, ' * (cap // 2))[: cap * CHARS_PER_TOKEN]
    if body.get("tools"):
        function = {"name": "record_memory", "arguments": text}
        call = {"id": "call_endless", "type": "function", "function": function}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": text}
    return _completion(body, message, "length", text)


def _cut(output: str, cap: int | None, finish: str) -> tuple[str, str]:
    if cap is not None and estimate_tokens(output) > cap:
        return output[: cap * CHARS_PER_TOKEN], "length"
    return output, finish


def _raw_arguments(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _completion(
    body: dict[str, Any], message: dict[str, Any], finish: str, output: str
) -> dict[str, Any]:
    prompt_tokens = estimate_tokens(prompt_text(body))
    completion_tokens = estimate_tokens(output)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "scripted")),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
