"""The reads and writes of a user's stored message index (see
`engine.retrieval.stored_index`): the index itself, and what it is checked and completed
against, the user's message uids and the messages it does not cover."""

from __future__ import annotations

from dataclasses import dataclass

from engine.store.base import EpisodeText, GraphStore
from engine.store.rows import episode_texts


@dataclass(frozen=True, slots=True)
class Stored:
    """A user's stored message index, as the numbers and formats of its parts in order, and
    the user's message uids now."""

    parts: list[tuple[int, int]]
    uids: list[str]


class MessageIndexes:
    """Each user's stored message index, in parts, through the port `store`."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def stored(self, user_id: str) -> Stored | None:
        """The parts of the user's stored index with the uids of the user's messages; None
        when no part is stored (or the uids cannot be told apart: then the index is read
        again)."""
        rows = self.store.run("get_message_index", {"user_id": user_id})
        if not rows:
            return None
        count, uids, parts = rows[0]
        known = sorted((int(n), int(f or 0)) for n, f in parts)
        listed = (_lines(uids) if isinstance(uids, str) else list(uids)) if count else []
        if not known or len(listed) != int(count):
            return None
        return Stored(known, listed)

    def part(self, user_id: str, number: int) -> tuple[int, str] | None:
        """Part `number` of the user's stored index: its format and data."""
        rows = self.store.run("get_message_index_part", {"user_id": user_id, "part": number})
        if not rows or rows[0][1] is None:
            return None
        return int(rows[0][0] or 0), str(rows[0][1])

    def store_part(
        self, user_id: str, number: int, uids: list[str], format_: int, data: str, last: bool
    ) -> bool:
        """Store part `number` of the user's index, the index of the messages of `uids`, in
        place of the one stored under that number, unless one of them was deleted meanwhile
        (its terms are not stored again: False); the `last` part removes those after it."""
        params = {
            "user_id": user_id,
            "part": number,
            "uids": uids,
            "format": format_,
            "data": data,
            "last": last,
        }
        return bool(self.store.run("set_message_index", params, read_only=False))

    def texts(
        self, user_id: str, uids: list[str], terms_v: int
    ) -> tuple[list[EpisodeText], list[str | None]]:
        """The user's messages of `uids`, with their index terms stored under `terms_v`."""
        params = {"user_id": user_id, "uids": uids, "terms_v": terms_v}
        return episode_texts(self.store.run("get_episode_texts_by_uids", params))

    def contents(self, user_id: str, uids: list[str]) -> dict[str, str]:
        """The text of the user's messages of `uids` (of those still stored)."""
        rows = self.store.run("get_episode_contents", {"user_id": user_id, "uids": uids})
        return {row[0]: row[1] or "" for row in rows}


def _lines(text: str, step: int = 2**18) -> list[str]:
    """`text.split("\n")`, a slice of about `step` characters at a time: 200k uids in one
    split hold the interpreter ~20 ms, and other users' searches wait that long."""
    lines: list[str] = []
    start = 0
    while start <= len(text):
        end = text.find("\n", start + step)
        end = len(text) if end < 0 else end
        lines += text[start:end].split("\n")
        start = end + 1
    return lines
