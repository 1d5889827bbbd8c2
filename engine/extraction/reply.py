"""An endpoint's answer to one extraction request, validated at the edge.

The completion is checked with our own models (a 200 with a malformed body is invalid output,
not an AttributeError). The extraction inside must be a plausible one: a JSON object that has
at least one of `entities`, `facts`, `invalidations` and none of a JSON schema's own keywords.
Anything else (the schema echoed back, `{}`, an unrelated object) is a fault to retry and
then report, never an empty success. An answer cut off at the length cap is a fault as well.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from engine.extraction import prompts
from engine.extraction.schema import Extraction

FaultKind = Literal["transient", "invalid", "fatal", "fallback"]

_PARTS = ("entities", "facts", "invalidations")
_SCHEMA_WORDS = ("$defs", "$schema", "properties", "required", "additionalProperties")


@dataclass(frozen=True)
class Fault:
    """Why a call gave no extraction, and how the caller should treat it."""

    kind: FaultKind
    reason: str


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
    finish_reason: str | None = None


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Completion(BaseModel):
    choices: list[_Choice]
    usage: Usage | None = None


def parse(body: bytes, *, tools: bool, max_tokens: int) -> tuple[Extraction | Fault, Usage]:
    """The extraction in a completion body (tool call or JSON content), and its token usage."""
    try:
        completion = _Completion.model_validate_json(body)
    except ValidationError as exc:
        return Fault("invalid", f"invalid_output: malformed completion: {brief(exc)}"), Usage()
    usage = completion.usage or Usage()
    if not completion.choices:
        return Fault("invalid", "invalid_output: the completion has no choices"), usage
    choice = completion.choices[0]
    if choice.finish_reason == "length":
        reason = f"invalid_output: the answer was cut off at max_tokens={max_tokens}"
        return Fault("invalid", reason), usage
    found = _from_tool_calls(choice.message) if tools else _from_content(choice.message)
    return found, usage


def _from_tool_calls(message: _Message) -> Extraction | Fault:
    calls = [
        call.function
        for call in message.tool_calls or []
        if call.function is not None and call.function.name == prompts.TOOL_NAME
    ]
    if not calls:
        said = " (it answered with text instead)" if message.content else ""
        return Fault("invalid", f"invalid_output: no {prompts.TOOL_NAME} tool call{said}")
    parts = [_extraction(call.arguments, "the tool call") for call in calls]
    faults = [part for part in parts if isinstance(part, Fault)]
    if faults:
        return faults[0]
    found = [part for part in parts if isinstance(part, Extraction)]
    return found[0] if len(found) == 1 else _merge(found)


def _from_content(message: _Message) -> Extraction | Fault:
    if not message.content or not message.content.strip():
        return Fault("invalid", "invalid_output: empty reply, expected a JSON object")
    return _extraction(_unfence(message.content), "the reply")


def _extraction(raw: Any, what: str) -> Extraction | Fault:
    # The API sends tool arguments as a JSON string; a few servers send the object itself.
    try:
        data = json.loads(raw) if isinstance(raw, str | bytes) else raw
    except ValueError as exc:
        return Fault("invalid", f"invalid_output: {what} is not valid JSON: {exc}")
    implausible = _implausible(data)
    if implausible is not None:
        return Fault("invalid", f"invalid_output: {what} is {implausible}")
    try:
        return Extraction.model_validate(data)
    except ValidationError as exc:
        return Fault("invalid", f"invalid_output: {what} does not match the schema: {brief(exc)}")


def _implausible(data: Any) -> str | None:
    if not isinstance(data, dict):
        return f"not a JSON object but a {type(data).__name__}"
    echoed = [word for word in _SCHEMA_WORDS if word in data]
    if echoed:
        return f"a JSON schema ({', '.join(echoed)}), not an extraction"
    if not any(part in data for part in _PARTS):
        keys = ", ".join(sorted(map(str, data))[:5]) or "none"
        return f"missing entities, facts and invalidations (keys: {keys})"
    return None


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


def brief(exc: ValidationError, limit: int = 5) -> str:
    """A validation error in one line: the first `limit` locations and messages."""
    errors = exc.errors(include_url=False, include_input=False)
    shown = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in errors]
    more = f" (+{len(shown) - limit} more)" if len(shown) > limit else ""
    return "; ".join(shown[:limit]) + more
