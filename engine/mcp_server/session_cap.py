"""How many MCP sessions one token may hold open at once over HTTP.

The SDK caps the sessions of a whole server (10,000) and keeps an idle one for 30 minutes: a
client with any one token opened them all in minutes, and every other token's client was then
refused a session (503 "Too many open sessions") until they expired. So each token (the
principal the gate authenticated) holds at most `PER_TOKEN` sessions; another opening by that
token is refused (429) until one of its own ends: its client's DELETE, the SDK forgetting it
(a request for it answered 404), or `SESSION_IDLE_S` without a request, the SDK's idle timeout
(passed to it explicitly: `http_gate.run_http`). An opening still being answered counts, so
openings sent at once cannot pass together.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from starlette.types import Message, Scope, Send

SESSION_IDLE_S = 30 * 60
PER_TOKEN = 100
_HEADER = b"mcp-session-id"
_REFUSED = (
    "too many open sessions for this token ({limit}): end one (an HTTP DELETE of its "
    "mcp-session-id) or wait until an idle one expires"
)

App = Callable[[Send], Awaitable[None]]


@dataclass
class _Session:
    last: float
    in_flight: int = 0


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
    ) -> None:
        self.per_token, self.idle_s, self._clock = per_token, idle_s, clock
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

    async def serve(self, principal: str, scope: Scope, send: Send, app: App) -> None:
        """Run `app` (which answers through the send it is given) for a request of
        `principal`, refusing a new session past the cap."""
        sid = _session_id(scope)
        held = self._of(principal)
        if sid is None:
            if scope.get("method") != "POST":
                await app(send)
                return
            if len(held.sessions) + held.opening >= self.per_token:
                await _refuse(send, self.per_token)
                return
            await self._opening(held, send, app)
            return
        session = held.sessions.get(sid)
        if session is None:  # not this principal's: the SDK answers it (404)
            await app(send)
            return
        await self._within(held, sid, session, scope.get("method"), send, app)

    async def _opening(self, held: _Held, send: Send, app: App) -> None:
        def started(status: int, headers: dict[bytes, bytes]) -> None:
            new = headers.get(_HEADER)
            if status == 200 and new is not None:
                held.sessions[new.decode("latin-1")] = _Session(self._clock())

        held.opening += 1
        try:
            await app(_on_start(send, started))
        finally:
            held.opening -= 1

    async def _within(
        self, held: _Held, sid: str, session: _Session, method: str | None, send: Send, app: App
    ) -> None:
        def started(status: int, headers: dict[bytes, bytes]) -> None:
            if status == 404 or (method == "DELETE" and 200 <= status < 300):
                held.sessions.pop(sid, None)

        session.in_flight += 1
        try:
            await app(_on_start(send, started))
        finally:
            session.in_flight -= 1
            session.last = self._clock()


def _on_start(send: Send, started: Callable[[int, dict[bytes, bytes]], None]) -> Send:
    """`send`, telling `started` the status and headers of the answer as it starts."""

    async def watching(message: Message) -> None:
        if message["type"] == "http.response.start":
            started(message["status"], dict(message.get("headers", [])))
        await send(message)

    return watching


def _session_id(scope: Scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name.lower() == _HEADER:
            return bytes(value).decode("latin-1")
    return None


async def _refuse(send: Send, limit: int) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": -32000, "message": _REFUSED.format(limit=limit)},
        }
    ).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
