"""`graphmem mcp`: its arguments and the checks made before the server starts.

Imports the MCP SDK only when the server runs, so `graphmem --help` works without it.
"""

from __future__ import annotations

import argparse
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.cli.arg_types import text_arg, user_arg
from engine.cli.verbs import UsageError
from engine.config import build_settings
from engine.errors import InvalidInputError
from engine.mcp_server.access import Mode, choose_mode
from engine.mcp_server.addresses import is_loopback, url_host
from engine.memory import Memory
from engine.normalize import check_user_id

LOOPBACK = "127.0.0.1"
PORT = 8765
WHOM = (
    "say whose memory this server serves: --user USER (or GRAPHMEM_MCP_USER_ID) serves that "
    "user only; --any-user lets every client name any user with user_id (it trusts every client)"
)
_log = logging.getLogger("graphmem.mcp")
_FREEZE_GC = "GRAPHMEM_FREEZE_GC"


def add_mcp_parser(sub: Any) -> None:
    mcp = sub.add_parser(
        "mcp",
        help="serve memory to MCP hosts (stdio, or streamable HTTP with a bearer token)",
        description="Run graphmem as an MCP server, over stdio by default (what MCP hosts "
        "spawn); --http serves streamable HTTP at /mcp, each request authenticated by a bearer "
        "token (GRAPHMEM_MCP_TOKEN, else one kept in <data dir>/mcp_tokens.json). Say whose "
        "memory it serves: --user USER, or --any-user.",
    )
    who = mcp.add_mutually_exclusive_group()
    who.add_argument(
        "--user", type=user_arg, help="serve this user only (default GRAPHMEM_MCP_USER_ID)"
    )
    who.add_argument(
        "--any-user",
        action="store_true",
        help="each call names its user_id: trusts every client with any user's memory",
    )
    mcp.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    mcp.add_argument(
        "--host",
        type=text_arg("the host"),  # a blank host serves every interface
        help=f"HTTP address (default {LOOPBACK}; with --http)",
    )
    mcp.add_argument("--port", type=int, help=f"HTTP port (default {PORT}; with --http)")
    mcp.add_argument(
        "--print-token",
        action="store_true",
        help="print the HTTP token of --user (or of --any-user), creating it, and exit",
    )
    mcp.add_argument(
        "--no-token",
        action="store_true",
        help="HTTP without a token, on loopback only: trusts every local account (with --http)",
    )
    mcp.set_defaults(func=cmd_mcp)


def cmd_mcp(args: argparse.Namespace) -> None:
    if getattr(args, "json", False):  # `graphmem --json mcp`: `mcp --json` is no option
        raise UsageError("--json: graphmem mcp prints no result (it serves until stopped)")
    _check_http_options(args)
    settings = build_settings(**({"data_dir": args.data_dir} if args.data_dir else {}))
    user = args.user or (None if args.any_user else _user_of_environment(settings.mcp_user_id))
    if user is None and not args.any_user:
        raise UsageError(WHOM)
    mode = choose_mode(user, args.any_user)
    env_token = settings.mcp_token.get_secret_value() if settings.mcp_token else None
    data_dir = settings.data_dir.expanduser().absolute()
    if args.print_token:
        from engine.mcp_server.tokens import token_for

        print(env_token or token_for(data_dir, mode.binding))
        return
    from engine.mcp_server.server import serve

    if not args.http:
        serve(lambda: _memory(args), mode)
        return
    run = _http_runner(args, mode, data_dir, env_token or None)
    serve(lambda: _memory(args), mode, http=run, gated=not args.no_token)


def _user_of_environment(user_id: str | None) -> str | None:
    """GRAPHMEM_MCP_USER_ID's user (None when unset or empty), checked as --user is.

    Raises:
        UsageError: an id every other door refuses (blank, not in canonical form), naming
            the variable.
    """
    if not user_id:
        return None
    try:
        return check_user_id(user_id)
    except InvalidInputError as exc:
        raise UsageError(f"GRAPHMEM_MCP_USER_ID: {exc}") from None


def _check_http_options(args: argparse.Namespace) -> None:
    """Fill in --host and --port, which only an HTTP server takes.

    Raises:
        UsageError: --host, --port or --no-token without --http (the server would serve
            stdio, silently, not the address asked for); a --port out of range; --no-token
            with a --host other machines reach.
    """
    options = {"--host": args.host, "--port": args.port, "--no-token": args.no_token or None}
    given = [flag for flag, value in options.items() if value is not None]
    if given and not args.http and not args.print_token:
        raise UsageError(
            f"{', '.join(given)}: only with --http (without it, graphmem mcp serves stdio and "
            "listens on no port)"
        )
    args.host = LOOPBACK if args.host is None else args.host
    args.port = PORT if args.port is None else args.port
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be between 1 and 65535, got {args.port}")
    if args.no_token and not is_loopback(args.host):
        raise UsageError(
            f"--no-token is refused with --host {args.host}: a server reachable from other "
            "machines needs a token (leave --no-token out, or serve 127.0.0.1)"
        )


def _http_runner(
    args: argparse.Namespace, mode: Mode, data_dir: Path, env_token: str | None
) -> Callable[[Any], None]:
    """What serves HTTP once the server is built, after the checks that must pass first.

    Raises:
        ConfigError: unusable tokens, or an address that cannot be listened on (a port in
            use).
    """
    from engine.mcp_server.http_gate import listen, run_http
    from engine.mcp_server.tokens import TOKEN_FILE, token_table

    where = f"http://{url_host(args.host)}:{args.port}/mcp"
    if args.no_token:
        sock = listen(args.host, args.port)

        def run_open(server: Any) -> None:
            _log.warning("serving %s without a token: every local account can use it", where)
            run_http(server, sock, args.host, None)

        return run_open
    tokens = token_table(data_dir, mode, env_token)
    source = "GRAPHMEM_MCP_TOKEN" if env_token else str(data_dir / TOKEN_FILE)
    sock = listen(args.host, args.port)

    def run_gated(server: Any) -> None:
        _log.info("serving %s; bearer token from %s", where, source)
        run_http(server, sock, args.host, tokens)

    return run_gated


def _memory(args: argparse.Namespace) -> Memory:
    """The server's memory. The process is the server's own, so what it loads (the model, the
    extractor's pipeline) is frozen out of the garbage collector's full passes, each of which
    walked it all (~360,000 objects, 140-190 ms) inside a tool call; `GRAPHMEM_FREEZE_GC`
    decides instead when set (docs/performance.md)."""
    own: dict[str, Any] = {} if _FREEZE_GC in os.environ else {"freeze_gc": True}
    if args.data_dir:
        own["data_dir"] = args.data_dir
    return Memory(**own)
