"""The text a failed tool call answers with: one line, `Kind: message`, whatever failed it.

The SDK words failures its own ways: `Error executing tool NAME: ` before graphmem's
message, pydantic's multi-line report for an argument of the wrong type or range,
`Unknown tool: NAME`. A model reading the answers should not have to tell them apart, so
every failure is reworded here into one shape:

- graphmem's error about the call: its class and message (`NotFoundError: user 'alice' has no
  fact 'x'`);
- graphmem's error about the server (its store, its configuration, its extractor): its class
  and what failed in the caller's terms (`StoreUnavailableError: the memory store is
  unavailable; ...`), none of its message, which names the server's paths and addresses (the
  server's log has it: `logged_error`);
- an argument the tool's schema refuses: `InvalidInputError: search_memory: argument 'limit':
  Input should be greater than or equal to 1` (`... argument 'query' is required`);
- a tool the server does not have: `InvalidInputError: there is no tool 'x'; the tools are ...`;
- a crash (an error that is not graphmem's): `InternalError: NAME failed on the server; ...`,
  with nothing of the exception's text (the server's log has its traceback).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import ValidationError

from engine.errors import (
    ClosedError,
    ConfigError,
    ExtractionError,
    GraphmemError,
    QueryTimeoutError,
    StoreError,
    StoreUnavailableError,
)

INTERNAL = "InternalError"
_IN_THE_LOG = "the server's log has the details"
# errors about the server, not the call, first match wins: what the caller is told instead of
# their message
_SERVER_SIDE: tuple[tuple[type[GraphmemError], str], ...] = (
    (ClosedError, "the memory store is closed"),
    (StoreUnavailableError, "the memory store is unavailable"),
    (QueryTimeoutError, "the memory store took too long to answer"),
    (StoreError, "the memory store failed"),
    (ConfigError, "the server's configuration cannot work"),
    (ExtractionError, "fact extraction failed"),
)
# the kind an extraction fault's reason starts with (engine/extraction/llm.py, reply.py,
# guard.py, offline/extractor.py), in the caller's terms: the reason names the LLM's address
# and quotes what it answered
_EXTRACTION_FAULTS = {
    "unreachable": "the LLM did not answer",
    "timeout": "the LLM did not answer",
    "connection": "the LLM did not answer",
    "server_error": "the LLM did not answer",
    "rate_limited": "the LLM refused the request (rate limited)",
    "http_error": "the LLM refused the request",
    "refused": "the LLM refused the request",
    "invalid_output": "the LLM's answer was unusable",
    "limit_exceeded": "the LLM's answer held more than a call may write",
    "offline extraction failed": "the offline extractor failed",
}
_FAULT_KIND = re.compile("(" + "|".join(map(re.escape, _EXTRACTION_FAULTS)) + "):")


def refusal_text(tool: str, exc: BaseException, tools: Iterable[str] | None) -> str:
    """The one-line answer to a call of `tool` that `exc` failed.

    Args:
        tool: the tool the call named.
        exc: what failed the call (the SDK's `ToolError`, or graphmem's error itself).
        tools: every tool the server has, or None when `tool` is one of them.
    """
    cause = graphmem_or_validation(exc)
    if isinstance(cause, GraphmemError):
        said = f"{type(cause).__name__}: {server_side(cause) or cause}"
    elif isinstance(cause, ValidationError):
        said = f"InvalidInputError: {tool}: {argument_problems(cause)}"
    elif tools is not None:
        said = f"InvalidInputError: there is no tool {tool!r}; the tools are {', '.join(tools)}"
    else:
        said = crash_text(tool)
    return " ".join(said.splitlines())


def crash_text(tool: str) -> str:
    """The answer to a call that crashed: nothing of the exception, which stays in the log."""
    return f"{INTERNAL}: {tool} failed on the server; {_IN_THE_LOG}"


def server_side(exc: GraphmemError) -> str | None:
    """What failed, in the caller's terms, when `exc` is about the server (None: about the
    call, whose message the caller may read)."""
    said = next((said for kind, said in _SERVER_SIDE if isinstance(exc, kind)), None)
    return None if said is None else f"{said}; {_IN_THE_LOG}"


def extraction_failure(reason: str) -> str:
    """An extraction fault's `reason` (`AddResult.extraction_error`, `Episode.error`) in the
    caller's terms: `fact extraction failed: the LLM did not answer`."""
    kind = _FAULT_KIND.search(reason)
    return "fact extraction failed" + (f": {_EXTRACTION_FAULTS[kind[1]]}" if kind else "")


def logged_error(exc: BaseException) -> str:
    """What the server's log says of the error behind `exc`: its class (graphmem's, or
    pydantic's for arguments of the wrong type), and for an error about the server its
    message, for the operator. An error about the call is logged without its message, which
    quotes what the caller sent."""
    cause = graphmem_or_validation(exc)
    if isinstance(cause, GraphmemError) and server_side(cause) is not None:
        return f"{type(cause).__name__}: {' '.join(str(cause).splitlines())}"
    return type(exc if cause is None else cause).__name__


def argument_problems(exc: ValidationError) -> str:
    """What pydantic found wrong with a call's arguments, one clause per argument."""
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "missing":
            problems.append(f"argument {where!r} is required")
        else:
            problems.append(f"argument {where!r}: {' '.join(error['msg'].split())}")
    return "; ".join(problems)


def graphmem_or_validation(exc: BaseException) -> BaseException | None:
    """Graphmem's error, or pydantic's for a call's arguments, behind `exc` (None: neither)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, GraphmemError | ValidationError):
            return cause
        cause = cause.__cause__
    return None
