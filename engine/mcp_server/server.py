"""The MCP server: graphmem's tools on the official `mcp` SDK, over stdio or streamable HTTP.

The `Memory` (and with it the embedding model, the store and the extractor) is built and
warmed in a worker thread as the server starts, so the host's handshake and tool listing do
not wait for the model; the first tool call that needs memory waits for it instead.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Annotated, Any

from pydantic import Field

from engine.errors import ConfigError, GraphmemError
from engine.mcp_server import tools
from engine.mcp_server.tools import ExportFormat, FactIn, MessageIn, RankBy, ToolOutput
from engine.memory import Memory

try:
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import CallToolResult, TextContent
except ImportError as exc:  # pragma: no cover - exercised only without the package
    raise ConfigError(
        "graphmem mcp needs the MCP SDK: pip install 'graphmem[mcp]' (the `mcp` package)"
    ) from exc

INSTRUCTIONS = (
    "Long-term memory of the user as a knowledge graph. Call search_memory before answering "
    "anything that may depend on what the user said before; call add_memory with what the "
    "user tells you that is worth keeping; facts have ids that delete_memory takes."
)
UserId = Annotated[
    str | None,
    Field(description="whose memory; omit to use the server's default user"),
]


class MemoryHolder:
    """Builds the `Memory` once, in a thread of its own, and hands it to every tool call."""

    def __init__(self, build: Callable[[], Memory], default_user: str | None) -> None:
        self.default_user = default_user
        self._future: Future[Memory] = Future()
        self._thread = threading.Thread(target=self._build, args=(build,), daemon=True)
        self._thread.start()

    def _build(self, build: Callable[[], Memory]) -> None:
        try:
            memory = build()
            memory.embedder.encode(["warm up"])
            memory.stats()  # starts the store and sets its schema up
            load = getattr(memory.extractor, "load", None)  # the offline extractor's pipeline
            if callable(load):
                load()
        except BaseException as exc:  # handed to every call that needs the memory
            self._future.set_exception(exc)
            return
        self._future.set_result(memory)

    def get(self) -> Memory:
        return self._future.result()

    def close(self) -> None:
        self._thread.join()
        if self._future.exception() is None:
            self._future.result().close()


async def _call(
    holder: MemoryHolder, tool: Callable[..., ToolOutput], user_id: str | None, **args: Any
) -> CallToolResult:
    """Run a tool in a worker thread; graphmem's errors become a tool error the model reads."""
    try:
        user = tools.resolve_user(user_id, holder.default_user)
        out = await anyio.to_thread.run_sync(lambda: tool(holder.get(), user, **args))
    except GraphmemError as exc:
        raise ToolError(f"{type(exc).__name__}: {exc}") from exc
    return CallToolResult(
        content=[TextContent(type="text", text=out.text)], structured_content=out.data
    )


def build_server(holder: MemoryHolder) -> MCPServer[Any]:
    """An `MCPServer` whose tools read and write `holder`'s memory."""
    server: MCPServer[Any] = MCPServer(name="graphmem", instructions=INSTRUCTIONS)
    for register in (_writing_tools, _reading_tools, _managing_tools):
        register(server, holder)
    return server


def _writing_tools(server: MCPServer[Any], holder: MemoryHolder) -> None:
    @server.tool()
    async def add_memory(
        messages: Annotated[
            str | list[MessageIn],
            Field(description="a message as text, or a list of {role, content, name?}"),
        ],
        user_id: UserId = None,
        session_id: Annotated[
            str | None, Field(description="the conversation it belongs to")
        ] = None,
        speaker: Annotated[str | None, Field(description="who said it, if not the user")] = None,
        time: Annotated[
            str | float | None,
            Field(description="when it was said: ISO 8601 or epoch seconds (default: now)"),
        ] = None,
    ) -> CallToolResult:
        """Remember what was said: facts are extracted into the user's knowledge graph, and the
        messages are kept as the memory stream."""
        return await _call(
            holder, tools.add_memory, user_id,
            messages=messages, session_id=session_id, speaker=speaker, time=time,
        )  # fmt: skip

    @server.tool()
    async def add_facts(
        facts: Annotated[list[FactIn], Field(description="facts as subject, predicate, object")],
        user_id: UserId = None,
    ) -> CallToolResult:
        """Store facts you already know as (subject, predicate, object), without extraction."""
        return await _call(holder, tools.add_facts, user_id, facts=facts)


def _reading_tools(server: MCPServer[Any], holder: MemoryHolder) -> None:
    @server.tool()
    async def search_memory(
        query: Annotated[str, Field(description="a question or keywords, in plain language")],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="facts to return")] = 10,
    ) -> CallToolResult:
        """Find what the user's memory knows about a question: facts (best first), the
        connections between the things it names, the messages they came from, entities."""
        return await _call(holder, tools.search_memory, user_id, query=query, limit=limit)

    @server.tool()
    async def get_entity(
        name: Annotated[str, Field(description="the entity's name or one of its aliases")],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="facts and messages")] = 50,
    ) -> CallToolResult:
        """Everything known about one entity: its facts and the messages that mention it."""
        return await _call(holder, tools.get_entity, user_id, name=name, limit=limit)

    @server.tool()
    async def list_entities(
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="entities to list")] = 20,
        by: Annotated[RankBy, Field(description="salience, frequency or recency")] = "salience",
    ) -> CallToolResult:
        """The user's most important entities (people, places, things), best first."""
        return await _call(holder, tools.list_entities, user_id, limit=limit, by=by)


def _managing_tools(server: MCPServer[Any], holder: MemoryHolder) -> None:
    @server.tool()
    async def delete_memory(
        fact_id: Annotated[str, Field(description="the id of a fact, as search_memory shows")],
        user_id: UserId = None,
    ) -> CallToolResult:
        """Forget one fact (for example one the user says is wrong)."""
        return await _call(holder, tools.delete_memory, user_id, fact_id=fact_id)

    @server.tool()
    async def export_graph(
        user_id: UserId = None,
        format: Annotated[ExportFormat, Field(description="json, cypher or graphml")] = "json",
    ) -> CallToolResult:
        """The user's whole memory graph as a document (json is lossless and re-importable)."""
        return await _call(holder, tools.export_graph, user_id, format=format)


def serve(
    build: Callable[[], Memory], default_user: str | None, *, http_port: int | None = None
) -> None:
    """Run until the host disconnects (stdio) or the process is stopped (HTTP on 127.0.0.1)."""
    if default_user is not None:
        tools.resolve_user(default_user, None)
    holder = MemoryHolder(build, default_user)
    server = build_server(holder)
    # uvicorn shuts down on SIGTERM and then raises the signal again for the handler it found:
    # the default one ends the process at once, and the embedded database would outlive it
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        if http_port is None:
            server.run("stdio")
        else:
            server.run("streamable-http", host="127.0.0.1", port=http_port)
    finally:
        holder.close()


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM as an exit that unwinds: the memory closes, and the last process to close stops
    the embedded database."""
    raise SystemExit(128 + signum)
