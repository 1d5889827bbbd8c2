"""How many MCP sessions one token (or a tokenless server's clients) may hold open at once.

The SDK caps the sessions of a whole server (10,000) and keeps an idle one for 30 minutes: a
client with any one token opened them all in minutes, and every other token's client was then
refused a session (503 "Too many open sessions") until they expired. So each token (the
principal the gate authenticated) holds at most `PER_TOKEN` sessions; another opening by that
token is refused (429) until one of its own ends: its client's DELETE, the SDK forgetting it
(a request for it answered 404), or `SESSION_IDLE_S` without a request, the SDK's idle timeout
(passed to it explicitly: `http_gate.run_http`). An opening still being answered counts, so
openings sent at once cannot pass together.

A session's DELETE waits (at most `HAND_ON_S`) for its requests already answered to return:
the SDK answers a notification (202) before it hands it to the session, and a client leaving
during a call sends the call's cancellation, then the DELETE, at once. The handing on then met
a closed session, and the SDK logged the ClosedResourceError, then tried a second answer, which
uvicorn refused with a traceback of its own.

A client that drops its connection during a call, without cancelling it or ending its session,
is told of when the call's answer starts (it goes nowhere): one INFO line. One that drops it
between calls sends nothing to tell: its session ends `SESSION_IDLE_S` later, which the SDK
logs ("Session ... idle timeout").

A server without a token (`--no-token`, loopback only) has no principal to count by: its
clients share one budget of `PER_TOKEN` sessions (`TokenlessCap`). Its client's address tells
no one apart: any local account can send from any of the 2**24 addresses of 127.0.0.0/8.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

_log = logging.getLogger("graphmem.mcp")

SESSION_IDLE_S = 30 * 60
PER_TOKEN = 100
HAND_ON_S = 5.0
_HEADER = b"mcp-session-id"
_REFUSED = (
    "too many open sessions for {whom} ({limit}): end one (an HTTP DELETE of its "
    "mcp-session-id) or wait until an idle one expires"
)
_TOKENLESS = "(no token)"
_DROPPED = (
    "a client dropped its connection during a call, without cancelling it or ending its "
    "session: the call ran to its end, its answer goes nowhere; the session ends after "
    "%g minutes without a request"
)

App = Callable[[Send], Awaitable[None]]


@dataclass
class _Session:
    last: float
    in_flight: int = 0
    handing_on: set[anyio.Event] = field(default_factory=set)  # answered, still running

    async def handed_on(self) -> None:
        """Wait until the requests already answered have returned (at most `HAND_ON_S`)."""
        with anyio.move_on_after(HAND_ON_S):
            for running in list(self.handing_on):
                await running.wait()


@dataclass
class _Held:
    sessions: dict[str, _Session] = field(default_factory=dict)
    opening: int = 0


class SessionCap:
    """The sessions each principal holds open, learnt from the answers that open and end them."""

    def __init__(
        self,
        per_token: int = PER_TOKEN,
        idle_s: float = SESSION_IDLE_S,
        clock: Callable[[], float] = time.monotonic,
        whom: str = "this token",
    ) -> None:
        self.per_token, self.idle_s, self._clock = per_token, idle_s, clock
        self.whom = whom  # who is refused, in the refusal's words
        self._held: dict[str, _Held] = {}

    def _of(self, principal: str) -> _Held:
        held = self._held.setdefault(principal, _Held())
        now = self._clock()
        expired = [
            sid
            for sid, s in held.sessions.items()
            if s.in_flight == 0 and now - s.last > self.idle_s
        ]
        for sid in expired:
            del held.sessions[sid]
        return held

    async def serve(
        self, principal: str, scope: Scope, receive: Receive, send: Send, app: App
    ) -> None:
        """Run `app` (which answers through the send it is given) for a request of
        `principal`, refusing a new session past the cap; `receive` tells whether the client
        of a call is still there when its answer starts."""
        sid = _session_id(scope)
        held = self._of(principal)
        if sid is None:
            if scope.get("method") != "POST":
                await app(send)
                return
            if len(held.sessions) + held.opening >= self.per_token:
                await _refuse(send, _REFUSED.format(whom=self.whom, limit=self.per_token))
                return
            await self._opening(held, send, app)
            return
        session = held.sessions.get(sid)
        if session is None:  # not this principal's: the SDK answers it (404)
            await app(send)
            return
        if scope.get("method") == "POST":
            send = _noting_a_drop(send, receive, self.idle_s / 60)
        await self._within(held, sid, session, scope.get("method"), send, app)

    async def _opening(self, held: _Held, send: Send, app: App) -> None:
        def started(status: int, headers: dict[bytes, bytes]) -> None:
            new = headers.get(_HEADER)
            if status == 200 and new is not None:
                held.sessions[new.decode("latin-1")] = _Session(self._clock())

        held.opening += 1
        try:
            await app(_watched(send, started))
        finally:
            held.opening -= 1

    async def _within(
        self, held: _Held, sid: str, session: _Session, method: str | None, send: Send, app: App
    ) -> None:
        def started(status: int, headers: dict[bytes, bytes]) -> None:
            if status == 404 or (method == "DELETE" and 200 <= status < 300):
                held.sessions.pop(sid, None)

        if method == "DELETE":
            await session.handed_on()
        running = anyio.Event()
        session.in_flight += 1
        try:
            await app(_watched(send, started, lambda: session.handing_on.add(running)))
        finally:
            session.in_flight -= 1
            session.handing_on.discard(running)
            running.set()
            session.last = self._clock()


class TokenlessCap:
    """ASGI middleware of a server without a token: its clients hold at most `PER_TOKEN`
    sessions open between them (429 past it)."""

    def __init__(self, app: ASGIApp, sessions: SessionCap | None = None) -> None:
        self.app = app
        self.sessions = sessions or SessionCap(whom="clients without a token")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def app(answer: Send) -> None:
            await self.app(scope, receive, answer)

        await self.sessions.serve(_TOKENLESS, scope, receive, send, app)


def _watched(
    send: Send,
    started: Callable[[int, dict[bytes, bytes]], None],
    answered: Callable[[], object] = lambda: None,
) -> Send:
    """`send`, telling `started` the status and headers of the answer as it starts, and
    `answered` before its last part goes out (before its client can act on it)."""

    async def watching(message: Message) -> None:
        if message["type"] == "http.response.start":
            started(message["status"], dict(message.get("headers", [])))
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            answered()
        await send(message)

    return watching


def _noting_a_drop(send: Send, receive: Receive, idle_minutes: float) -> Send:
    """`send`, logging `_DROPPED` when a call's answer (200) starts after its client closed
    the connection. Only then: the look yields to other requests, and nothing may come
    between a notification's 202 and its handing on (`_Session.handed_on`)."""

    async def noting(message: Message) -> None:
        start = message["type"] == "http.response.start"
        if start and message["status"] == 200 and await _gone(receive):
            _log.info(_DROPPED, idle_minutes)
        await send(message)

    return noting


async def _gone(receive: Receive) -> bool:
    """Whether the client closed the connection: once a request's body is read, `receive`
    answers `http.disconnect` at once when it did (ASGI), and waits while it did not."""
    with anyio.move_on_after(0):
        message = await receive()
        return bool(message["type"] == "http.disconnect")
    return False


def _session_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == _HEADER:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, message: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": message}}
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
