"""The text a failed tool call answers with: one line, `Kind: message`, whatever failed it.

The SDK words failures its own ways: `Error executing tool NAME: ` before graphmem's
message, pydantic's multi-line report for an argument of the wrong type or range,
`Unknown tool: NAME`. A model reading the answers should not have to tell them apart, so
every failure is reworded here into one shape:

- graphmem's error: its class and message (`NotFoundError: user 'alice' has no fact 'x'`);
- an argument the tool's schema refuses: `InvalidInputError: search_memory: argument 'limit':
  Input should be greater than or equal to 1` (`... argument 'query' is required`);
- a tool the server does not have: `InvalidInputError: there is no tool 'x'; the tools are ...`;
- a crash (an error that is not graphmem's): `InternalError: NAME failed on the server; ...`,
  with nothing of the exception's text (the server's log has its traceback).
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import ValidationError

from engine.errors import GraphmemError

INTERNAL = "InternalError"


def refusal_text(tool: str, exc: BaseException, tools: Iterable[str] | None) -> str:
    """The one-line answer to a call of `tool` that `exc` failed.

    Args:
        tool: the tool the call named.
        exc: what failed the call (the SDK's `ToolError`, or graphmem's error itself).
        tools: every tool the server has, or None when `tool` is one of them.
    """
    cause = graphmem_or_validation(exc)
    if isinstance(cause, GraphmemError):
        said = f"{type(cause).__name__}: {cause}"
    elif isinstance(cause, ValidationError):
        said = f"InvalidInputError: {tool}: {argument_problems(cause)}"
    elif tools is not None:
        said = f"InvalidInputError: there is no tool {tool!r}; the tools are {', '.join(tools)}"
    else:
        said = crash_text(tool)
    return " ".join(said.splitlines())


def crash_text(tool: str) -> str:
    """The answer to a call that crashed: nothing of the exception, which stays in the log."""
    return f"{INTERNAL}: {tool} failed on the server; the server's log has the details"


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
