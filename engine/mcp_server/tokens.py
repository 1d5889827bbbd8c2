"""The bearer tokens of `graphmem mcp --http`, and the user each one is bound to.

A token is either `GRAPHMEM_MCP_TOKEN` (bound as the server's mode says) or one kept in
`<data dir>/mcp_tokens.json`, a file only its owner may read, created on first start:

    {"version": 1, "any_user": "<token>", "users": {"alice": "<token>"}}

A `--user alice` server accepts alice's token only; an `--any-user` server accepts the
any-user token (its calls name their user) and every user's token (held to that user).
Tokens are compared in constant time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import ConfigError
from engine.mcp_server.access import Mode
from engine.normalize import check_user_id
from engine.private_files import open_private, private_dir, write_private

TOKEN_FILE = "mcp_tokens.json"
LOCK_FILE = "mcp_tokens.lock"
_log = logging.getLogger("graphmem.mcp")
_TOKEN = re.compile(r"[\x21-\x7e]{16,512}")  # visible ASCII, as a header value carries it


@dataclass(frozen=True)
class Grant:
    """What a presented token allows: acting for `user`, or for any user when None."""

    user: str | None


class TokenTable:
    """The tokens a server accepts, each with its `Grant`; with a `TokenFile`, those the file
    holds now (a token made or a file deleted while the server runs counts at once)."""

    def __init__(self, grants: dict[str, Grant], source: TokenFile | None = None) -> None:
        if not grants:
            raise ConfigError("an HTTP MCP server needs at least one token")
        self._source = source
        self._set(grants)

    def _set(self, grants: dict[str, Grant]) -> None:
        self._grants = [(_digest(token), grant) for token, grant in grants.items()]
        self._tokens = list(grants)

    def _refresh(self) -> None:
        if self._source is None:
            return
        try:
            grants = self._source.changed()
        except ConfigError as exc:  # an unsafe or broken file: accept nothing until fixed
            _log.warning("graphmem: refusing every token: %s", exc)
            grants = {}
        if grants is not None:
            self._set(grants)

    def check(self, presented: str) -> Grant | None:
        """The grant of `presented`, or None; every token is compared, in constant time."""
        self._refresh()
        digest = _digest(presented)
        found = None
        for known, grant in self._grants:
            if hmac.compare_digest(digest, known):
                found = grant
        return found

    def appears_in(self, text: str) -> bool:
        """Whether any accepted token is written in `text` (a URL's query)."""
        self._refresh()
        return any(token in text for token in self._tokens)


class TokenFile:
    """The grants of the token file for a server in `mode`, read again when the file changed:
    deleting it replaces every token (the mode's own made anew), revoking the old ones."""

    def __init__(self, data_dir: Path, mode: Mode) -> None:
        self.data_dir, self.mode = data_dir, mode
        self._seen: tuple[int, int, int] | None = None

    def changed(self) -> dict[str, Grant] | None:
        """The grants now, or None when the file is as last read.

        Raises:
            ConfigError: the file is unsafe or unreadable.
        """
        now = _signature(self.data_dir / TOKEN_FILE)
        return None if now is not None and now == self._seen else self.read()

    def read(self) -> dict[str, Grant]:
        """The grants of the file (the mode's own token added when missing).

        Raises:
            ConfigError: the file is unsafe or unreadable.
        """
        before = _signature(self.data_dir / TOKEN_FILE)  # a change during the read is seen
        doc = ensure_token(self.data_dir, self.mode.binding)
        self._seen = before  # only once read: a file refused is read again at the next call
        if not self.mode.any_user:
            return {doc["users"][self.mode.user]: Grant(self.mode.user)}
        grants = {token: Grant(user) for user, token in doc["users"].items()}
        grants[doc["any_user"]] = Grant(None)
        return grants


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return None
    return info.st_ino, info.st_mtime_ns, info.st_size


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def token_table(data_dir: Path, mode: Mode, env_token: str | None) -> TokenTable:
    """The tokens a server in `mode` accepts: `env_token` alone when given, else those the
    token file holds at each request (the mode's own token created there if missing).

    Raises:
        ConfigError: `env_token` is not a usable token, or the token file is unsafe or
            unreadable.
    """
    if env_token:
        if not _TOKEN.fullmatch(env_token):
            raise ConfigError(
                "GRAPHMEM_MCP_TOKEN must be 16 to 512 visible ASCII characters (no spaces); "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'` makes one"
            )
        return TokenTable({env_token: Grant(mode.binding)})
    source = TokenFile(data_dir, mode)
    return TokenTable(source.read(), source)


def ensure_token(data_dir: Path, user: str | None) -> dict[str, Any]:
    """The token file's document, with a token for `user` (None: the any-user token) added
    when it has none; written back 0600 only when it changed, one process at a time."""
    path = data_dir / TOKEN_FILE
    private_dir(data_dir)
    with _locked(data_dir / LOCK_FILE):
        doc = _read(path)
        have = doc["users"].get(user) if user is not None else doc.get("any_user")
        if have is None:
            fresh = secrets.token_urlsafe(32)
            if user is None:
                doc["any_user"] = fresh
            else:
                doc["users"][user] = fresh
            partial = path.with_name(TOKEN_FILE + ".partial")
            write_private(partial, json.dumps(doc, indent=2) + "\n")
            os.replace(partial, path)  # a reader never sees a half-written file
    return doc


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Held while the token file is read and written back: two servers started at once
    each wrote it with only their own new token, and a token already handed out was lost."""
    with open_private(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def token_for(data_dir: Path, user: str | None) -> str:
    """The token of `user` (None: the any-user token), created if missing."""
    doc = ensure_token(data_dir, user)
    return str(doc["any_user"] if user is None else doc["users"][user])


def _read(path: Path) -> dict[str, Any]:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {"version": 1, "users": {}}
    problem = None
    if not stat.S_ISREG(info.st_mode):
        problem = "it is not a regular file"
    elif info.st_uid != os.getuid():
        problem = f"it belongs to uid {info.st_uid}, not to you"
    elif info.st_mode & 0o077:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):04o}: others may have read it"
    if problem is not None:
        raise ConfigError(f"refusing the token file {str(path)!r}: {problem}. {_RENEW}")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        users = doc.setdefault("users", {})
        if not isinstance(users, dict) or not all(_valid(t) for t in users.values()):
            raise ValueError("users must map user ids to tokens")
        for user in users:
            check_user_id(user)
        if "any_user" in doc and not _valid(doc["any_user"]):
            raise ValueError("any_user is not a token")
    except (OSError, ValueError, AttributeError) as exc:
        raise ConfigError(f"cannot read the token file {str(path)!r}: {exc}. {_RENEW}") from exc
    return dict(doc)


def _valid(token: object) -> bool:
    return isinstance(token, str) and _TOKEN.fullmatch(token) is not None


_RENEW = "Delete it to make new tokens (clients then need the new ones)."
