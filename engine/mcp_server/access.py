"""Whom an MCP call may act for: one check every tool goes through.

A server runs in one of two modes, chosen at start and never by a client:
- bound to one user (`graphmem mcp --user alice`): every call acts for alice; a call that
  names another `user_id` is refused;
- any user (`graphmem mcp --any-user`): each call names its `user_id`, and the server trusts
  its clients to name only their own. Over HTTP a token may still be bound to one user
  (see `engine.mcp_server.tokens`), and then that token's calls act for that user only.

A call's `Binding` is the user it is held to (`None`: any user), from the server's mode on
stdio and from the token that authenticated it over HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ConfigError, InvalidInputError
from engine.normalize import check_user_id

ANY_USER = None  # a binding that lets each call name its user


@dataclass(frozen=True)
class Mode:
    """The server's mode: `user` is the one user it serves, or None with `any_user`."""

    user: str | None
    any_user: bool

    @property
    def binding(self) -> str | None:
        """The binding of a call that carries no binding of its own (stdio, the server's
        own token)."""
        return self.user


def choose_mode(user: str | None, any_user: bool) -> Mode:
    """The server's mode from `--user` / `GRAPHMEM_MCP_USER_ID` and `--any-user`.

    Raises:
        ConfigError: both or neither are given (a server must say whom it serves).
        InvalidInputError: the user id is not usable (see `check_user_id`).
    """
    if user is not None and any_user:
        raise ConfigError(
            "--user and --any-user exclude each other: --user USER serves that user only, "
            "--any-user lets every client name any user"
        )
    if user is None and not any_user:
        raise ConfigError(
            "say whose memory this server serves: --user USER (or GRAPHMEM_MCP_USER_ID) "
            "serves that user only; --any-user lets every client name any user with user_id "
            "(it trusts every client)"
        )
    return Mode(check_user_id(user) if user is not None else None, any_user)


def act_for(binding: str | None, requested: str | None) -> str:
    """The user a tool call acts for: the binding's user, or the one the call names.

    Args:
        binding: the user the call is held to, or `ANY_USER`.
        requested: the call's `user_id` argument, if any.

    Raises:
        InvalidInputError: the call names another user than its binding, an any-user call
            names none, or the id is not usable (see `check_user_id`).
    """
    if requested is not None:
        requested = check_user_id(requested)
    if binding is ANY_USER:
        if requested is None:
            raise InvalidInputError(
                "user_id is required: this server serves any user (--any-user), so each "
                "call names whose memory it reads or writes"
            )
        return requested
    if requested is not None and requested != binding:
        raise InvalidInputError(
            f"user_id {requested!r} is refused: this connection acts for user {binding!r} "
            f"only. Leave user_id out, or connect to a server (or with a token) for "
            f"{requested!r}"
        )
    return binding
