"""The reads and writes of a user's stored message index (see
`engine.retrieval.stored_index`): the index itself, and what it is checked and completed
against, the user's message uids and the messages it does not cover."""

from __future__ import annotations

from dataclasses import dataclass

from engine.store.base import EpisodeText, GraphStore
from engine.store.rows import episode_texts


@dataclass(frozen=True, slots=True)
class Stored:
    """A user's stored message index (`format`, `data`) and the user's message uids now."""

    format: int
    data: str
    uids: list[str]


class MessageIndexes:
    """Each user's stored message index, through the port `store`."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store

    def stored(self, user_id: str) -> Stored | None:
        """The user's stored index with the uids of the user's messages; None when no index
        is stored (or the uids cannot be told apart: then the index is read again)."""
        rows = self.store.run("get_message_index", {"user_id": user_id})
        if not rows or rows[0][1] is None:
            return None
        format_, data, count, uids = rows[0]
        listed = (uids.split("\n") if isinstance(uids, str) else list(uids)) if count else []
        if len(listed) != int(count):
            return None
        return Stored(int(format_ or 0), str(data), listed)

    def store_index(self, user_id: str, uids: list[str], format_: int, data: str) -> None:
        """Store the user's index of the messages of `uids` in place of the one stored
        before, unless one of them was deleted meanwhile (its terms are not stored again)."""
        params = {"user_id": user_id, "uids": uids, "format": format_, "data": data}
        self.store.run("set_message_index", params, read_only=False)

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
