"""Each user's write generation on FalkorDB: a token in plain redis keys beside the graph, read
by every process that shares the server.

What the token promises: it changes after every write to the user's graph is applied, by any
process (`FalkorDBStore.write`, each `run(..., read_only=False)` but of the `DERIVED`
statements, which store only what a search derives, `delete_user`), and after
every write statement that names no user (`reset`, the store's id key), which changes every
user's token; the schema's statements that name no user (an index declared or dropped, the
store's schema node) change none. So a reader that reads the token, then the graph, and later
finds the same token knows that no write of its entities, facts or messages completed in
between: what it kept from that read
still holds. A change does not say that the user's graph did change (a write may have found
nothing to do).

Each change stores a fresh random token (uuid4), never a count: a key lost or deleted comes
back as a new token, never as one a reader may still hold. A write that fails is followed by
a change too (it may be applied all the same), but for one whose reply never came (the server
may be hung: the store's restart of a hung server changes every token). The change is sent
right after the write, before the store waits for both to reach the append-only file, so a
write that survives a crash of the server brings its change along but in a narrow window; a
writer killed between its write and its change leaves the old token until the next write (the
window of one redis command).

Keys, in the graph's own namespace, apart from any graph (FalkorDB keeps a graph under its
name; none is named like these): `graphmem:<graph>:generation:all` holds the token of writes
that name no user, and the hash `graphmem:<graph>:generation:users` one field per user id
(binary-safe: any user id is a field of its own). They persist with the append-only file like
the graph.

Cost: `read` is one round trip (a pipeline of four commands); a change is one SET or HSET.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import redis


class Generations:
    """The write generations of one graph's users, on the graph's redis connection."""

    def __init__(self, connection: redis.Redis, graph_name: str) -> None:
        self._connection = connection
        self._all = f"graphmem:{graph_name}:generation:all"
        self._users = f"graphmem:{graph_name}:generation:users"

    def read(self, user_id: str) -> str:
        """The user's token: `<all>:<user>`. A key missing (a store written before tokens
        existed, or one deleted) is created with a fresh token in the same round trip, so it
        stays the same until the next write.

        Raises:
            redis.RedisError: as the connection raises it (the store maps it).
        """
        pipe = self._connection.pipeline(transaction=False)
        pipe.set(self._all, _fresh(), nx=True)
        pipe.hsetnx(self._users, user_id, _fresh())
        pipe.get(self._all)
        pipe.hget(self._users, user_id)
        _, _, every, own = pipe.execute()
        return f"{_text(every)}:{_text(own)}"

    def change(self, user_id: str | None) -> None:
        """A fresh token for `user_id`, or (None) for every user."""
        if user_id is None:
            self._connection.set(self._all, _fresh())
        else:
            self._connection.hset(self._users, user_id, _fresh())

    @contextlib.contextmanager
    def changing(self, user_id: str | None) -> Iterator[None]:
        """Change the token once the write inside is done, even when it failed (it may
        still be applied); a change that fails after a failed write leaves that write's
        error to be raised. Not after a reply that never came: the server may be hung, and
        the change would wait as long again (the store changes every token when it restarts
        a hung server)."""
        try:
            yield
        except redis.TimeoutError:
            raise
        except BaseException:
            with contextlib.suppress(redis.RedisError):
                self.change(user_id)
            raise
        self.change(user_id)


# statements that store what a search derives from a user's graph (the relation vectors, the
# message index and its terms): they change no entity, fact or message, so no token
DERIVED = frozenset({"set_relation_vectors", "set_message_index", "set_episode_terms"})


def written_user(params: dict[str, object]) -> str | None:
    """The user a write statement names (`$user_id`), or None: one that names none."""
    user_id = params.get("user_id")
    return user_id if isinstance(user_id, str) else None


def _fresh() -> str:
    return uuid.uuid4().hex


def _text(value: bytes | str | None) -> str:
    if value is None:  # deleted between the SET NX and the GET: read as a fresh token
        return _fresh()
    return value.decode() if isinstance(value, bytes) else value
