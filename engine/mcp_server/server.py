"""The MCP server: graphmem's tools on the official `mcp` SDK, over stdio or streamable HTTP.

The `Memory` (and with it the embedding model, the store and the extractor) is built and
warmed in a worker thread as the server starts, so the host's handshake and tool listing do
not wait for the model; the first tool call that needs memory waits for it instead.

Whom a call acts for is decided in one place, `Dispatch.call`, from the server's `Mode` and,
over HTTP, the grant of the token that authenticated the request (`http_gate`).
"""

from __future__ import annotations

import difflib
import inspect
import logging
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from importlib.metadata import version
from typing import Any

from engine.errors import ClosedError, ConfigError, GraphmemError, InvalidInputError
from engine.mcp_server import catalog
from engine.mcp_server.access import Mode, act_for
from engine.mcp_server.stdin_pipe import StdinPipe
from engine.mcp_server.tool_errors import crash_text, logged_error, refusal_text
from engine.mcp_server.tools import ToolOutput
from engine.memory import Memory

try:
    import anyio
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from mcp.types import CallToolResult, TextContent
    from mcp.types import Tool as MCPTool
except ImportError as exc:  # pragma: no cover - exercised only without the package
    raise ConfigError(
        "graphmem mcp needs the MCP SDK: pip install 'graphmem[mcp]' (the `mcp` package)"
    ) from exc

INSTRUCTIONS = (
    "Long-term memory of the user as a knowledge graph. Call search_memory before answering "
    "anything that may depend on what the user said before; call add_memory with what the "
    "user tells you that is worth keeping; facts have ids that delete_memory takes."
)
_log = logging.getLogger("graphmem.mcp")
# the SDK's own record of a failed call quotes the error's text (what the caller sent: names,
# ids, values) at INFO; `GraphmemMCP.call_tool` logs the tool and the kind of error instead
_SDK_SERVER_LOG = "mcp.server.mcpserver.server"


class MemoryHolder:
    """Builds the `Memory` once, in a thread of its own, and hands it to every tool call; a
    server stopped while it builds stops the build at its next step (a stopped server does not
    first load what it will never use)."""

    def __init__(self, build: Callable[[], Memory]) -> None:
        self._future: Future[Memory] = Future()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._build, args=(build,), daemon=True)
        self._thread.start()

    def _build(self, build: Callable[[], Memory]) -> None:
        try:
            memory = build()
            for step in _warm_up_steps(memory):
                if self._stopping.is_set():
                    memory.close()
                    raise ClosedError("the MCP server stopped while its memory was opening")
                step()
        except BaseException as exc:  # handed to every call that needs the memory
            self._future.set_exception(exc)
            return
        self._future.set_result(memory)
        _log.info("ready: the model, the store and the extractor are loaded")

    def get(self) -> Memory:
        return self._future.result()

    def close(self) -> None:
        self._stopping.set()
        self._thread.join()
        if self._future.exception() is None:
            self._future.result().close()


def _warm_up_steps(memory: Memory) -> list[Callable[[], object]]:
    """What a server does before its first call: the model warmed, the store started and its
    schema set up, the offline extractor's pipeline loaded."""
    return [lambda: memory.embedder.encode(["warm up"]), memory.stats, lambda: _load(memory)]


def _load(memory: Memory) -> None:
    load = getattr(memory.extractor, "load", None)  # the offline extractor's pipeline
    if callable(load):
        load()


class Dispatch:
    """Runs every tool call: decides whom it acts for, then runs the tool in a worker thread;
    graphmem's errors become a tool error the model reads."""

    def __init__(self, holder: MemoryHolder, mode: Mode, *, gated: bool) -> None:
        self.holder, self.mode, self.gated = holder, mode, gated

    def binding(self, ctx: Context) -> str | None:
        """The user this call is held to (None: any): the grant of the token that
        authenticated the HTTP request, else the server's mode."""
        if not self.gated:
            return self.mode.binding
        from engine.mcp_server.http_gate import grant_of

        grant = grant_of(ctx.request_context.request)
        if grant is None:  # the gate lets no request through without one
            raise InvalidInputError("this HTTP request carries no authenticated token")
        return grant.user

    async def call(
        self, ctx: Context, tool: Callable[..., ToolOutput], user_id: str | None, **args: Any
    ) -> CallToolResult:
        """Run `tool` for the user the call acts for (`act_for`)."""
        return await self._run(lambda: act_for(self.binding(ctx), user_id), tool, args)

    async def call_bound(
        self, ctx: Context, tool: Callable[..., ToolOutput], **args: Any
    ) -> CallToolResult:
        """Run `tool` with the call's binding itself (None: any user), for a tool whose
        answer depends on whom the connection may see (`list_users`)."""
        return await self._run(lambda: self.binding(ctx), tool, args)

    async def _run(
        self, whom: Callable[[], str | None], tool: Callable[..., ToolOutput], args: Any
    ) -> CallToolResult:
        try:
            user = whom()
            out = await anyio.to_thread.run_sync(lambda: tool(self.holder.get(), user, **args))
        except GraphmemError as exc:  # worded by `GraphmemMCP.call_tool`
            raise ToolError(str(exc)) from exc
        return CallToolResult(
            content=[TextContent(type="text", text=out.text)], structured_content=out.data
        )


class GraphmemMCP(MCPServer[Any]):
    """`MCPServer` that refuses a call naming an argument its tool does not take (the SDK
    drops it silently: `time` for `ts` was lost)."""

    _arguments: dict[str, list[str]] | None = None

    async def list_tools(self) -> list[MCPTool]:
        """The tools, each schema saying it takes no other argument, each description without
        the indentation of the docstring it comes from."""
        listed = await super().list_tools()
        return [
            t.model_copy(
                update={
                    "input_schema": {**t.input_schema, "additionalProperties": False},
                    "description": inspect.cleandoc(t.description or ""),
                }
            )
            for t in listed
        ]

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> Any:
        """The SDK's call, after the check of its arguments. A failed call answers one line in
        one shape, whoever refused it (`tool_errors.refusal_text`), and is logged as one
        WARNING naming the tool and the kind of error, without the text of an error about the
        call (it quotes what the caller sent, which the answer alone carries back); the text
        of an error about the server is logged, not answered (`tool_errors.logged_error`). A
        call its client cancelled runs to its end (its thread is not cut) and is one INFO
        line."""
        if self._arguments is None:  # the tools are all registered by the first call
            listed = await self.list_tools()
            self._arguments = {t.name: list(t.input_schema.get("properties", {})) for t in listed}
        known = self._arguments.get(name)
        try:
            unknown = sorted(set(arguments) - set(known)) if known is not None else []
            if unknown:
                raise InvalidInputError(_unknown_arguments(name, unknown, known or []))
            answer = await super().call_tool(name, arguments, context)
            await anyio.lowlevel.checkpoint()  # a cancellation held while the tool's thread ran
            return answer
        except anyio.get_cancelled_exc_class():
            _log.info("%s: its client cancelled the call (it left or gave up): unanswered", name)
            raise
        except UnexpectedToolError as exc:  # a crash: the SDK logs it with its traceback
            raise UnexpectedToolError(crash_text(name)) from exc
        except (ToolError, InvalidInputError) as exc:
            tool = name if known is not None else "an unknown tool"  # a name is what was sent
            _log.warning("%s failed: %s", tool, logged_error(exc))
            tools = sorted(self._arguments) if known is None else None
            raise ToolError(refusal_text(name, exc, tools)) from exc


def _unknown_arguments(tool: str, unknown: list[str], known: list[str]) -> str:
    hints = []
    for arg in unknown:
        close = difflib.get_close_matches(arg, known, n=1)
        hints.append(f"{arg!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    takes = f"it takes {', '.join(known)}" if known else "it takes no arguments"
    return f"{tool} has no argument {', '.join(hints)}; {takes}"


def build_server(dispatch: Dispatch) -> GraphmemMCP:
    """A server whose tools read and write the memory of `dispatch`."""
    server = GraphmemMCP(name="graphmem", instructions=INSTRUCTIONS, version=version("graphmem"))
    catalog.register_all(server, dispatch)
    return server


def plain_logging() -> None:
    """One-line log records on stderr (before the SDK would install its boxed rich handler:
    `logging.basicConfig` keeps the first handler it is given), none of the SDK's INFO records
    of failed calls (see `_SDK_SERVER_LOG`)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(LogFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    logging.getLogger(_SDK_SERVER_LOG).setLevel(logging.WARNING)


class LogFormatter(logging.Formatter):
    """The server's log lines: a graphmem record says "graphmem: " once, in its logger's
    name; its message opens with "graphmem: " too for a process whose log shows no name
    (`logging.lastResort` prints the message alone), and is left out here."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        if record.name == "graphmem" or record.name.startswith("graphmem."):
            return line.replace(f"{record.name}: graphmem: ", f"{record.name}: ", 1)
        return line


def serve(
    build: Callable[[], Memory],
    mode: Mode,
    *,
    http: Callable[[GraphmemMCP], None] | None = None,
    gated: bool = False,
) -> None:
    """Run until the host disconnects (stdio) or the process is stopped (`http`: serves the
    server over HTTP, see `http_gate.run_http`; `gated`: behind the token gate, whose grants
    then bind each call)."""
    plain_logging()
    pipe = StdinPipe() if http is None else None  # before the memory loads: stdin may be closed
    holder = MemoryHolder(build)
    server = build_server(Dispatch(holder, mode, gated=gated))
    # uvicorn shuts down on SIGTERM and then raises the signal again for the handler it found:
    # the default one ends the process at once, and the embedded database would outlive it
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        if pipe is not None:
            _serve_stdio(server, pipe)
        elif http is not None:
            http(server)
    finally:
        holder.close()


def _serve_stdio(server: GraphmemMCP, pipe: StdinPipe) -> None:
    """Serve the host on stdin/stdout until it hangs up or SIGINT or SIGTERM ends its input
    (`pipe`); a signal is then raised again as the exit it asks for, so the memory closes on
    the way out."""
    pipe.close_on(signal.SIGINT, signal.SIGTERM)
    server.run("stdio")
    if pipe.signals and pipe.signals[0] == signal.SIGINT:
        raise KeyboardInterrupt
    if pipe.signals:
        raise SystemExit(128 + pipe.signals[0])


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM as an exit that unwinds: the memory closes, and the last process to close stops
    the embedded database."""
    raise SystemExit(128 + signum)
