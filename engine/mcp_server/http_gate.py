"""The bearer-token gate in front of the streamable-HTTP MCP app, and the HTTP server.

Every HTTP request passes the gate before the MCP SDK sees it (MCP specification,
"Authorization": a bearer token in the `Authorization` header of every request, never in the
URL):
- a token in the URL's query is refused (400): URLs end up in logs, proxies and shell
  history, so a token there is as good as published;
- no token, or one this server does not accept: 401 with `WWW-Authenticate: Bearer`;
- an accepted token: the request goes on with its `Grant` as the SDK's authenticated user,
  so a session opened with one token cannot be used with another; a token holds at most
  `session_cap.PER_TOKEN` sessions open (429 past it), so no client takes every session.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import socket
from typing import Any
from urllib.parse import parse_qsl, unquote_plus

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from engine.errors import ConfigError
from engine.mcp_server.addresses import is_loopback, url_host
from engine.mcp_server.session_cap import SESSION_IDLE_S, SessionCap, TokenlessCap
from engine.mcp_server.tokens import Grant, TokenTable

GRANT_CLAIM = "graphmem_user"
_SDK_LOOPBACK = ("127.0.0.1", "localhost", "[::1]")  # what the SDK's own guard allows
_QUERY_NAMES = {"access_token", "token", "bearer", "auth", "authorization", "api_key", "apikey"}
_IN_QUERY = (
    "a token in the URL is refused: URLs are written to logs, proxies and shell history. "
    "Send it in the header `Authorization: Bearer <token>` (and consider this one leaked)"
)
_MISSING = (
    "authentication required: send the server's token as `Authorization: Bearer <token>` "
    "(graphmem mcp --print-token)"
)


class BearerGate:
    """ASGI middleware: only requests carrying an accepted bearer token reach `app`."""

    def __init__(
        self, app: ASGIApp, tokens: TokenTable, sessions: SessionCap | None = None
    ) -> None:
        self.app = app
        self.tokens = tokens
        self.sessions = sessions or SessionCap()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websocket route: nothing else may pass
            await send({"type": "websocket.close", "code": 1008})
            return
        if self._token_in_query(scope.get("query_string", b"").decode("latin-1")):
            await _refuse(send, 400, "invalid_request", _IN_QUERY)
            return
        presented = _bearer(scope)
        if presented is None:
            await _refuse(send, 401, None, _MISSING)
            return
        grant = self.tokens.check(presented)
        if grant is None:
            await _refuse(send, 401, "invalid_token", "the bearer token is not valid here")
            return
        principal = _principal(presented)
        authenticated = _authenticated(scope, principal, grant)

        async def app(answer: Send) -> None:
            await self.app(authenticated, receive, answer)

        await self.sessions.serve(principal, scope, receive, send, app)

    def _token_in_query(self, query: str) -> bool:
        if not query:
            return False
        names = {name.lower() for name, _ in parse_qsl(query, keep_blank_values=True)}
        return bool(names & _QUERY_NAMES) or self.tokens.appears_in(unquote_plus(query))


def _bearer(scope: Scope) -> str | None:
    values = [v for k, v in scope.get("headers", []) if k.lower() == b"authorization"]
    if len(values) != 1:
        return None
    scheme, _, token = values[0].decode("latin-1").strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _principal(presented: str) -> str:
    """A digest of the token: the SDK ties each session to the principal that opened it."""
    return hashlib.sha256(presented.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _authenticated(scope: Scope, principal: str, grant: Grant) -> Scope:
    """`scope` with the grant as the SDK's authenticated user `principal`."""
    access = AccessToken(
        token="(not kept)", client_id=principal, scopes=[], claims={GRANT_CLAIM: grant.user}
    )
    return {**scope, "user": AuthenticatedUser(access), "auth": AuthCredentials([])}


def grant_of(request: Any) -> Grant | None:
    """The `Grant` the gate gave an HTTP request (None: not an HTTP request)."""
    user = getattr(request, "scope", {}).get("user")
    if not isinstance(user, AuthenticatedUser) or user.access_token.claims is None:
        return None
    return Grant(user.access_token.claims.get(GRANT_CLAIM))


async def _refuse(send: Send, status: int, error: str | None, description: str) -> None:
    challenge = 'Bearer realm="graphmem"'
    if error is not None:
        challenge += f', error="{error}", error_description="{description}"'
    body = json.dumps({"error": error or "unauthorized", "error_description": description})
    data = body.encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(data)).encode()),
        (b"www-authenticate", challenge.encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on `host:port`, opened before the memory loads: a port in use is
    a clear error at once, not uvicorn's exit status 3 once the model has loaded.

    Raises:
        ConfigError: the address cannot be listened on (in use, not this machine's, ...).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        # create_server's own message repeats the address; the system's names the reason
        code = exc.errno or 0
        reason = os.strerror(code) if code > 0 else str(exc.strerror or exc)
        if exc.errno == errno.EADDRINUSE:
            reason += " (another server listens there: choose another --port)"
        raise ConfigError(f"cannot serve HTTP on {host}:{port}: {reason}") from exc


def rebinding_guard(host: str) -> TransportSecuritySettings | None:
    """The SDK's guard against DNS rebinding for a server on a loopback address: a request
    naming another host (a web page whose name a DNS server rebound to this address) or sent
    by a page of another origin is refused (421, 403). The SDK turns it on by itself only for
    127.0.0.1, localhost and ::1 as written, and a tokenless server on 127.0.0.2 or
    0:0:0:0:0:0:0:1 answered every web page; None (the SDK's choice) off loopback, where a
    token is required."""
    if not is_loopback(host):
        return None
    hosts = [*_SDK_LOOPBACK, url_host(host)]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts],
        allowed_origins=[f"http://{h}:*" for h in hosts],
    )


def run_http(server: Any, sock: socket.socket, host: str, tokens: TokenTable | None) -> None:
    """Serve `server`'s streamable-HTTP app on `sock` (see `listen`; its address `host`)
    behind the gate (when `tokens` is None, behind the one session cap of all its clients),
    until the process is stopped. No access log: a refused URL could carry a token. Each
    call is answered with one JSON body: an answer on an event stream was cut by a stop (the
    SSE library ends every stream at once) while the call went on, so its client never
    learnt that it was done."""
    import anyio
    import uvicorn

    guard = rebinding_guard(host)
    app: ASGIApp = server.streamable_http_app(
        host=host,
        transport_security=guard,
        session_idle_timeout=SESSION_IDLE_S,
        json_response=True,
    )
    app = TokenlessCap(app) if tokens is None else BearerGate(app, tokens)
    config = uvicorn.Config(app, log_config=None, access_log=False)
    anyio.run(lambda: uvicorn.Server(config).serve(sockets=[sock]))
