"""The MCP tools as a host sees them: names, arguments and descriptions, each forwarded to
its plain function in `tools` through `Dispatch.call` (the one place that decides whom a call
acts for). A new tool is one function here and one in `tools`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.types import CallToolResult
from pydantic import BeforeValidator, Field
from pydantic_core import PydanticCustomError

from engine.mcp_server import tools
from engine.mcp_server.export_page import MAX_LIMIT
from engine.mcp_server.tools import FactIn, MessageIn, RankBy, ToolOutput


def _not_a_bool(value: object) -> object:
    """JSON's true and false are no number: pydantic would read them as 1 and 0 (`limit=true`
    one hit, `since=true` a second after 1970), where `Memory.search` refuses a bool."""
    if isinstance(value, bool):
        raise PydanticCustomError("bool", "Input should not be true or false")
    return value


NotBool = BeforeValidator(_not_a_bool)
UserId = Annotated[
    str | None,
    Field(description="whose memory; leave it out on a server bound to one user"),
]
_WHEN = (
    "ISO 8601 (e.g. 2024-05-01T09:30:00Z; UTC without an offset), or epoch seconds or milliseconds"
)
Since = Annotated[
    str | float | None, Field(description=f"only what was said or true from: {_WHEN}"), NotBool
]
Until = Annotated[
    str | float | None, Field(description=f"only what was said or true until: {_WHEN}"), NotBool
]
AsOf = Annotated[
    str | float | None,
    Field(
        description="what the memory held then: the messages said by then and the facts true "
        f"then, ended since or not: {_WHEN}"
    ),
    NotBool,
]
FactArg = Annotated[
    FactIn | list[str],
    Field(description="{subject, predicate, object, text?} or [subject, predicate, object, text?]"),
]


class Dispatch(Protocol):
    def call(
        self, ctx: Context, tool: Callable[..., ToolOutput], user_id: str | None, **args: Any
    ) -> Awaitable[CallToolResult]: ...

    def call_bound(
        self, ctx: Context, tool: Callable[..., ToolOutput], **args: Any
    ) -> Awaitable[CallToolResult]: ...


def register_all(server: MCPServer[Any], dispatch: Dispatch) -> None:
    for register in (_writing_tools, _reading_tools, _managing_tools, _editing_tools):
        register(server, dispatch)


def _writing_tools(server: MCPServer[Any], dispatch: Dispatch) -> None:
    @server.tool()
    async def add_memory(
        ctx: Context,
        messages: Annotated[
            str | list[MessageIn],
            Field(description="a message as text, or a list of {role, content, name?}"),
        ],
        user_id: UserId = None,
        session_id: Annotated[
            str | None, Field(description="the conversation it belongs to")
        ] = None,
        speaker: Annotated[str | None, Field(description="who said it, if not the user")] = None,
        ts: Annotated[
            str | float | None,
            Field(description=f"when it was said: {_WHEN} (default: now)"),
            NotBool,
        ] = None,
        metadata: Annotated[
            dict[str, Any] | None,
            Field(
                description="kept with each message, for search_memory's filters: a JSON "
                'object such as {"topic": "music"}, as JSON no longer than a message may be '
                "(32,000 characters by default)"
            ),
        ] = None,
    ) -> CallToolResult:
        """Remember what was said: facts are extracted into the user's knowledge graph, and the
        messages are kept as the memory stream, each with the optional `metadata` object that
        search_memory's `filters` match on."""
        return await dispatch.call(
            ctx, tools.add_memory, user_id,
            messages=messages, session_id=session_id, speaker=speaker, ts=ts, metadata=metadata,
        )  # fmt: skip

    @server.tool()
    async def add_facts(
        ctx: Context,
        facts: Annotated[list[FactArg], Field(description="facts as subject, predicate, object")],
        user_id: UserId = None,
    ) -> CallToolResult:
        """Store facts you already know as (subject, predicate, object), without extraction."""
        return await dispatch.call(ctx, tools.add_facts, user_id, facts=facts)


def _reading_tools(server: MCPServer[Any], dispatch: Dispatch) -> None:
    @server.tool()
    async def search_memory(
        ctx: Context,
        query: Annotated[str, Field(description="a question or keywords, in plain language")],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=100, description="facts to return"), NotBool] = 10,
        since: Since = None,
        until: Until = None,
        as_of: AsOf = None,
        filters: Annotated[
            dict[str, Any] | None,
            Field(
                description="only what messages with this metadata said: {key: value} or "
                '{key: {"eq"|"ne"|"in"|"nin": value}}, all must hold'
            ),
        ] = None,
        max_tokens: Annotated[
            int | None,
            Field(
                ge=1,
                le=2_500,  # at most 100 hits a list, as `limit`
                description="answer as one block for a prompt of at most this many tokens "
                "(facts and messages in one order, dated) instead of the ranked lists",
            ),
            NotBool,
        ] = None,
        near: Annotated[
            list[str] | None,
            Field(
                max_length=20,
                description="whom or what the conversation is about (names): each anchors the "
                "search as if the query named it, e.g. 'what does she like?' near ['Kate']",
            ),
        ] = None,
    ) -> CallToolResult:
        """Find what the user's memory knows about a question: facts (best first), the
        connections between the things it names, the messages they came from, entities."""
        window = {"since": since, "until": until, "as_of": as_of}
        return await dispatch.call(
            ctx,
            tools.search_memory,
            user_id,
            query=query,
            limit=limit,
            filters=filters,
            max_tokens=max_tokens,
            near=near,
            **window,
        )

    @server.tool()
    async def get_entity(
        ctx: Context,
        name: Annotated[str, Field(description="the entity's name, one of its aliases or its id")],
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="facts and messages"), NotBool] = 50,
        since: Since = None,
        until: Until = None,
    ) -> CallToolResult:
        """Everything known about one entity: its facts and the messages that mention it."""
        return await dispatch.call(
            ctx, tools.get_entity, user_id, name=name, limit=limit, since=since, until=until
        )

    @server.tool()
    async def list_entities(
        ctx: Context,
        user_id: UserId = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="entities to list"), NotBool] = 20,
        by: Annotated[RankBy, Field(description="salience, frequency or recency")] = "salience",
    ) -> CallToolResult:
        """The user's most important entities (people, places, things), best first."""
        return await dispatch.call(ctx, tools.list_entities, user_id, limit=limit, by=by)


def _managing_tools(server: MCPServer[Any], dispatch: Dispatch) -> None:
    @server.tool()
    async def delete_memory(
        ctx: Context,
        fact_id: Annotated[str, Field(description="the id of a fact, as search_memory shows")],
        user_id: UserId = None,
        with_messages: Annotated[
            bool,
            Field(description="also delete the messages that said it (the user wants it gone)"),
        ] = False,
    ) -> CallToolResult:
        """Delete one fact (for example one the user says is wrong); with `with_messages`,
        also every message it came from, so no search shows what was said."""
        return await dispatch.call(
            ctx, tools.delete_memory, user_id, fact_id=fact_id, with_messages=with_messages
        )

    @server.tool()
    async def export_graph(
        ctx: Context,
        user_id: UserId = None,
        limit: Annotated[
            int, Field(ge=1, le=MAX_LIMIT, description="records in this page"), NotBool
        ] = 100,
        cursor: Annotated[
            str | None, Field(description="the next_cursor of the previous page")
        ] = None,
    ) -> CallToolResult:
        """A page of the user's memory graph (entities, facts, messages, history) without
        embeddings; when `truncated`, call again with `cursor` set to `next_cursor`."""
        return await dispatch.call(ctx, tools.export_graph, user_id, limit=limit, cursor=cursor)


def _editing_tools(server: MCPServer[Any], dispatch: Dispatch) -> None:
    @server.tool()
    async def update_memory(
        ctx: Context,
        fact_id: Annotated[str, Field(description="the id of a fact, as search_memory shows")],
        user_id: UserId = None,
        text: Annotated[str | None, Field(description="the fact's new sentence")] = None,
        valid_at: Annotated[
            str | float | None, Field(description=f"when it became true: {_WHEN}"), NotBool
        ] = None,
        invalid_at: Annotated[
            str | float | None,
            Field(description=f"when it stopped being true: {_WHEN}"),
            NotBool,
        ] = None,
    ) -> CallToolResult:
        """Correct one fact: its sentence and/or when it was true (kept as history)."""
        return await dispatch.call(
            ctx, tools.update_memory, user_id,
            fact_id=fact_id, text=text, valid_at=valid_at, invalid_at=invalid_at,
        )  # fmt: skip

    @server.tool()
    async def memory_history(
        ctx: Context,
        fact_id: Annotated[
            str,
            Field(
                description="the id of a fact (search_memory shows it) or of an entity "
                "(get_entity shows it)"
            ),
        ],
        user_id: UserId = None,
    ) -> CallToolResult:
        """How a fact or an entity changed, oldest first: added, updated, invalidated, merged.
        fact_id takes either one's id."""
        return await dispatch.call(ctx, tools.memory_history, user_id, fact_id=fact_id)

    @server.tool()
    async def delete_message(
        ctx: Context,
        message_id: Annotated[str, Field(description="the id of a message, as search shows")],
        user_id: UserId = None,
    ) -> CallToolResult:
        """Delete one stored message; the facts it gave stay (delete_memory removes those)."""
        return await dispatch.call(ctx, tools.delete_message, user_id, message_id=message_id)

    @server.tool()
    async def list_users(ctx: Context) -> CallToolResult:
        """The users this connection may act for, with the size of their memory (on a server
        bound to one user: that user only)."""
        return await dispatch.call_bound(ctx, tools.list_users)
