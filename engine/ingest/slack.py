"""The Slack reader: a Slack workspace export, unpacked (`engine.ingest.slack_export`).

Channel by channel (in the order the export lists them), day file by day file, message by
message. A kept message is what a person wrote: role `user`, its speaker the author's name in
`users.json` (else the message's own `user_profile`, else the user id, with a warning), its
text with Slack's markup made readable (`engine.ingest.slack_text`). Left out, and counted in
one warning at the end: joins, leaves and other system messages (by subtype), bots' messages,
deleted messages, and messages with no text. Folders of the export that no channel list names
are left out with one warning.

Each message's time is its `ts` (epoch seconds to the microsecond: `1714700000.000100`), its
session and conversation id the channel's id, its metadata the channel's name (`channel`) and,
in a thread, the thread's `thread_ts` (the parent's `ts`); its `source` is
`<channel id>:<ts>`, the id Slack gives a message, stable across re-exports. A message that
cannot be read is a `ReadError` naming its day file and record.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ChatRecord
from engine.ingest.fields import Item, SourceFile
from engine.ingest.json_list import file_items
from engine.ingest.slack_export import Channel, Workspace, load_workspace, profile_name
from engine.ingest.slack_text import readable
from engine.ingest.tally import Tally
from engine.ingest.turns import Turns

_TS = re.compile(r"(\d{1,12})(?:\.(\d{1,6}))?")
# subtypes that are what a person wrote; any other is a system message, left out by its name
_KEPT = (None, "thread_broadcast", "file_share", "me_message")
_DELETED = ("message_deleted", "tombstone")
_LINK_OUT = "a link out of the export, not read"


def read_slack(root: SourceFile) -> Iterator[Item]:
    """Every message people wrote in every channel of the export at `root` (a folder)."""
    reader = _Reader(root)
    yield from load_workspace(root, reader.workspace)
    for channel in reader.workspace.channels:
        yield from reader.channel(channel)
    yield from _unlisted(root, reader.workspace)
    if (summary := reader.tally.summary()) is not None:
        yield root.warning("file", summary)


def _within(path: Path, root: Path) -> bool:
    """`path`, its links followed, is in the export: a zip unpacks symbolic links, and one
    that leads out would have the reader take whatever JSON lies there for messages."""
    return path.resolve().is_relative_to(root.resolve())


def _unlisted(root: SourceFile, workspace: Workspace) -> Iterator[Item]:
    listed = {channel.folder for channel in workspace.channels}
    found = sorted(
        entry.name
        for entry in os.scandir(root.path)
        if entry.is_dir() and not entry.name.startswith(".") and entry.name not in listed
    )
    if found:
        reason = f"folders no channel list names, left out: {', '.join(found)}"
        yield root.warning("file", reason)


@dataclass(slots=True)
class _Reader:
    """One export being read: its root, users and channels, what it gave so far."""

    root: SourceFile
    workspace: Workspace = field(default_factory=Workspace)
    tally: Tally = field(default_factory=lambda: Tally("channels"))
    unknown: set[str] = field(default_factory=set)  # users already warned about

    def channel(self, channel: Channel) -> Iterator[Item]:
        """The channel's messages, day file by day file."""
        folder = self.root.path / channel.folder
        if not folder.is_dir():
            return  # a channel with no message in the export
        if not _within(folder, self.root.path):
            yield self.root.inside(channel.folder).error("file", _LINK_OUT)
            return
        self.tally.groups += 1
        days = sorted(
            p.name for p in folder.iterdir() if p.suffix == ".json" and not p.name.startswith(".")
        )
        for day in days:
            file = self.root.inside(channel.folder, day)
            if not _within(file.path, self.root.path):
                yield file.error("file", _LINK_OUT)
                continue
            visit = partial(self.message, file, (channel, Turns()))
            yield from file_items(file, "messages", visit)

    def message(
        self, file: SourceFile, at: tuple[Channel, Turns], number: int, item: object
    ) -> Iterator[Item]:
        """The message as a record, or nothing when it is left out (counted)."""
        (channel, turns), where, notes = at, f"record {number}", list[str]()
        if not isinstance(item, dict):
            yield file.error(where, f"expected a message object, got {type(item).__name__}")
            return
        try:
            reason = left_out(item, self.workspace)
        except InvalidInputError as exc:
            yield file.error(where, str(exc))
            return
        if reason is not None:
            self.tally.left_out[reason] += 1
            return
        record = fields.build_record(file, where, lambda: self.record(channel, item, notes))
        self.tally.kept += isinstance(record, ChatRecord)
        moment = record.source if isinstance(record, ChatRecord) else None
        yield from turns.checked(file, where, record, notes, moment)

    def record(self, channel: Channel, item: dict[str, Any], notes: fields.Notes) -> ChatRecord:
        """The record of a message that is kept.

        Raises:
            InvalidInputError: it has no `ts` Slack would write, or no user.
        """
        ts = item.get("ts")
        user = fields.text_id(item.get("user"), "user")
        if user is None:
            raise InvalidInputError("no user: who wrote it cannot be told")
        thread = fields.text_id(item.get("thread_ts"), "thread_ts")
        return ChatRecord(
            user_id=self.root.user_id,
            session_id=channel.id,
            conversation_id=channel.id,
            role="user",
            content=readable(item["text"], self.workspace.names),
            ts=slack_time(ts),
            speaker=self.speaker(user, item.get("user_profile"), notes),
            source=f"{channel.id}:{ts}",
            exported_id=True,
            metadata={"channel": channel.name} | ({"thread_ts": thread} if thread else {}),
        )

    def speaker(self, user: str, profile: object, notes: fields.Notes) -> str:
        """The author's name: users.json's, the message's user_profile's, else the id (with
        a warning the first time, unless users.json's own error said so already)."""
        name = self.workspace.names.users.get(user) or profile_name(profile)
        if name is not None:
            return name
        if self.workspace.users_listed and user not in self.unknown:
            self.unknown.add(user)
            notes.append(
                f"user {user!r} is not in users.json and the message names no user_profile: "
                "its messages are kept under the id as speaker"
            )
        return user


def left_out(item: dict[str, Any], workspace: Workspace) -> str | None:
    """Why a message is not read (`"deleted"`, `"from bots"`, `"channel_join"`, `"empty"`,
    ...), None if it is.

    Raises:
        InvalidInputError: its text is not a string.
    """
    kind, subtype = item.get("type", "message"), item.get("subtype")
    if kind != "message":
        return f"of type {kind!r}"
    if subtype in _DELETED:
        return "deleted"
    user = item.get("user")
    bot = item.get("bot_id") and user not in workspace.names.users
    if subtype == "bot_message" or bot or workspace.is_bot(user):
        return "from bots"
    if subtype not in _KEPT:
        return str(subtype)
    text = item.get("text")
    if text is not None and not isinstance(text, str):
        raise InvalidInputError(f"text must be a string, got {type(text).__name__}")
    if text and text.strip():
        return None
    return "with only files" if item.get("files") else "empty"


def slack_time(ts: object) -> datetime:
    """The UTC time of a Slack `ts` ("1714700000.000100"), to the microsecond.

    Raises:
        InvalidInputError: `ts` is missing or not epoch seconds written as Slack does.
    """
    match = _TS.fullmatch(ts) if isinstance(ts, str) else None
    if match is None:
        raise InvalidInputError(f"ts {ts!r} is not a Slack time ('1714700000.000100')")
    micro = int((match[2] or "0").ljust(6, "0"))
    return datetime.fromtimestamp(int(match[1]), UTC) + timedelta(microseconds=micro)
