"""A Slack workspace export, unpacked: who is who, and which channels it holds.

The folder holds `users.json` (a list of users: `id`, `name`, `real_name`, `profile`,
`is_bot`), `channels.json` (a list of channels: `id`, `name`) and one folder per channel, named
as the channel, of `YYYY-MM-DD.json` files. Exports that include private channels, group and
direct messages also hold `groups.json`, `mpims.json` (named folders) and `dms.json` (folders
named by the id); each list found is read. The lists are decoded one item at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from engine.errors import InvalidInputError
from engine.ingest import fields
from engine.ingest.chat_records import ReadError
from engine.ingest.fields import Item, SourceFile
from engine.ingest.json_list import file_items
from engine.ingest.slack_text import Names

USERS = "users.json"
CHANNELS = "channels.json"
# the lists of conversations an export may hold, and the key naming each one's folder
_LISTS = (("channels.json", "name"), ("groups.json", "name"), ("mpims.json", "name"))
_DMS = "dms.json"
_SLACKBOT = "USLACKBOT"


def is_slack_export(folder: Path) -> bool:
    """True when `folder` holds a `channels.json` that is a JSON list: without `users.json`
    it is still an export, read with that file named as missing."""
    channels = folder / CHANNELS
    if not channels.is_file():
        return False
    with channels.open(encoding="utf-8", errors="replace") as handle:
        return handle.read(256).lstrip("\ufeff \t\r\n").startswith("[")


def day_files(folder: Path) -> int:
    """How many day files (`<channel folder>/<date>.json`) the export at `folder` holds."""
    return sum(
        1
        for channel in folder.iterdir()
        if channel.is_dir() and not channel.name.startswith(".")
        for day in channel.iterdir()
        if day.suffix == ".json" and not day.name.startswith(".")
    )


@dataclass(frozen=True, slots=True)
class Channel:
    """A conversation of the export: its id (the session), its name, its folder."""

    id: str
    name: str
    folder: str


@dataclass(slots=True)
class Workspace:
    """The export's users and channels, as its lists give them."""

    names: Names = field(default_factory=Names)
    bots: set[str] = field(default_factory=lambda: {_SLACKBOT})
    channels: list[Channel] = field(default_factory=list)
    # False when users.json is missing or no list: its error says who speaks instead, once
    users_listed: bool = True

    def is_bot(self, user: str | None) -> bool:
        return user in self.bots


def load_workspace(root: SourceFile, workspace: Workspace) -> Iterator[Item]:
    """Fill `workspace` from the export at `root`; a bad list or item, or a missing
    `users.json`, is a `ReadError` naming its file and record, and the rest still loads."""
    yield from _users(root.inside(USERS), workspace)
    for name, folder_key in (*_LISTS, (_DMS, "id")):
        listed = root.inside(name)
        if listed.path.is_file():
            visit = partial(_channel, listed, folder_key, workspace)
            yield from file_items(listed, "channels", visit)


def _users(users: SourceFile, workspace: Workspace) -> Iterator[Item]:
    if not users.path.is_file():
        workspace.users_listed = False
        reason = "not found: messages speak under their own user_profile, else the user id"
        yield users.error("file", reason)
        return
    for item in file_items(users, "users", partial(_user, users, workspace)):
        if isinstance(item, ReadError) and item.location == "file":
            workspace.users_listed = False
        yield item


def _user(file: SourceFile, workspace: Workspace, number: int, item: object) -> Iterator[Item]:
    user_id = item.get("id") if isinstance(item, dict) else None
    if not isinstance(item, dict) or not isinstance(user_id, str) or not user_id:
        yield file.error(f"record {number}", "expected a user object with an 'id'")
        return
    if item.get("is_bot") or item.get("is_app_user"):
        workspace.bots.add(user_id)
    profile = item.get("profile")
    profile = profile if isinstance(profile, dict) else {}
    given = (item.get("real_name"), profile.get("real_name"), profile.get("display_name"))
    name = _first_name(*given, item.get("name"))
    if name is not None:
        workspace.names.users[user_id] = name


def _channel(
    file: SourceFile, folder_key: str, workspace: Workspace, number: int, item: object
) -> Iterator[Item]:
    where = f"record {number}"
    if not isinstance(item, dict):
        yield file.error(where, f"expected a channel object, got {type(item).__name__}")
        return
    try:
        channel_id = fields.text_id(item.get("id"), "id")
        folder = fields.text_id(item.get(folder_key), folder_key)
    except InvalidInputError as exc:
        yield file.error(where, str(exc))
        return
    if channel_id is None or folder is None:
        yield file.error(where, f"expected a channel object with an 'id' and a '{folder_key}'")
        return
    if folder in (".", "..") or any(sep in folder for sep in ("/", "\\", "\0")):
        # the folder is looked up under the export: a name must not lead out of it
        yield file.error(where, f"{folder_key} {folder!r} cannot be a channel's folder")
        return
    name = _first_name(item.get("name")) or channel_id
    workspace.channels.append(Channel(channel_id, name, folder))
    workspace.names.channels[channel_id] = name


def profile_name(profile: object) -> str | None:
    """The name a message's own `user_profile` gives, if any."""
    if not isinstance(profile, dict):
        return None
    return _first_name(profile.get("real_name"), profile.get("display_name"), profile.get("name"))


def _first_name(*given: Any) -> str | None:
    return next((n.strip() for n in given if isinstance(n, str) and n.strip()), None)
