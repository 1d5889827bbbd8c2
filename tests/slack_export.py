"""A Slack workspace export written by hand, unpacked, in the shape Slack gives it.

`users.json`: Ann Lee (her `real_name`), Bob (only a profile display name), the bot user
deploybot; Cat is not in it (her messages carry a `user_profile`). `channels.json`: #general
(`C01GEN`) and #trips (`C02TRIP`).

- general, 2024-05-03: Ann joins (left out), Ann starts a thread with a mention, a link and an
  `&amp;`, Bob replies in the thread, deploybot posts (left out), Cat points to #trips;
- general, 2024-05-04: a deleted message (left out), Ann's reply to the thread, also sent to
  the channel, a file shared with no text (left out);
- trips, 2024-05-03: Bob writes to `<!here>`, Cat leaves (left out).

`SHOWN` lists what a reader keeps, in order: (source, speaker, text, time, channel, thread).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DAY1 = 1714723200  # 2024-05-03 08:00:00 UTC
DAY2 = DAY1 + 86400
THREAD = f"{DAY1 + 60}.000100"


def at(seconds: int, micro: int = 0) -> datetime:
    return datetime.fromtimestamp(seconds, UTC).replace(microsecond=micro)


USERS = [
    {
        "id": "U01ANN",
        "team_id": "T1",
        "name": "ann",
        "real_name": "Ann Lee",
        "profile": {"real_name": "Ann Lee", "display_name": "ann"},
        "is_bot": False,
    },
    {
        "id": "U02BOB",
        "team_id": "T1",
        "name": "bob",
        "profile": {"real_name": "", "display_name": "Bob Stone"},
        "is_bot": False,
    },
    {"id": "U09BOT", "name": "deploybot", "profile": {"real_name": "deploybot"}, "is_bot": True},
]
CHANNELS = [
    {"id": "C01GEN", "name": "general", "created": DAY1 - 999, "members": ["U01ANN", "U02BOB"]},
    {"id": "C02TRIP", "name": "trips", "created": DAY1 - 999, "members": ["U02BOB"]},
]

SHOWN = [
    (
        f"C01GEN:{THREAD}",
        "Ann Lee",
        "Hi @Bob Stone, the offsite is in Lisbon & Porto. Notes: offsite page "
        "(https://wiki.example.com/offsite)",
        at(DAY1 + 60, 100),
        "general",
        THREAD,
    ),
    (
        f"C01GEN:{DAY1 + 120}.000200",
        "Bob Stone",
        "I'll book the train to Porto: https://cp.pt",
        at(DAY1 + 120, 200),
        "general",
        THREAD,
    ),
    (
        f"C01GEN:{DAY1 + 300}.000000",
        "Cat Diaz",
        "Hotels are in #trips <- have a look",
        at(DAY1 + 300),
        "general",
        None,
    ),
    (
        f"C01GEN:{DAY2 + 30}.000300",
        "Ann Lee",
        "Booked the hotel in Alfama for the offsite.",
        at(DAY2 + 30, 300),
        "general",
        THREAD,
    ),
    (
        f"C02TRIP:{DAY1 + 600}.000000",
        "Bob Stone",
        "@here I prefer a hotel by the sea <3",
        at(DAY1 + 600),
        "trips",
        None,
    ),
]
LEFT_OUT = (
    "5 messages read from 2 channels; left out 5: 1 channel_join, 1 from bots, 1 deleted, "
    "1 with only files, 1 channel_leave"
)


def message(user: str | None, text: str, ts: str, **more: Any) -> dict[str, Any]:
    said = {"type": "message", "text": text, "ts": ts} | more
    return said | ({"user": user} if user else {})


def _general_day1() -> list[dict[str, Any]]:
    return [
        message(
            "U01ANN", "<@U01ANN> has joined the channel", f"{DAY1}.000000", subtype="channel_join"
        ),
        message(
            "U01ANN",
            "Hi <@U02BOB>, the offsite is in Lisbon &amp; Porto. Notes: "
            "<https://wiki.example.com/offsite|offsite page>",
            THREAD,
            client_msg_id="m-1",
            thread_ts=THREAD,
            reply_count=2,
            reply_users=["U02BOB", "U01ANN"],
        ),
        message(
            "U02BOB",
            "I'll book the train to Porto: <https://cp.pt>",
            f"{DAY1 + 120}.000200",
            thread_ts=THREAD,
            parent_user_id="U01ANN",
        ),
        message(
            None,
            "Deploy finished: v2.3",
            f"{DAY1 + 200}.000000",
            subtype="bot_message",
            bot_id="B01",
            username="deploybot",
        ),
        message(
            "U03CAT",
            "Hotels are in <#C02TRIP|trips> &lt;- have a look",
            f"{DAY1 + 300}.000000",
            user_profile={"real_name": "Cat Diaz", "name": "cat"},
        ),
    ]


def _general_day2() -> list[dict[str, Any]]:
    return [
        message(
            None,
            "",
            f"{DAY2 + 10}.000000",
            subtype="message_deleted",
            hidden=True,
            deleted_ts=f"{DAY1 + 300}.000000",
        ),
        message(
            "U01ANN",
            "Booked the hotel in Alfama for the offsite.",
            f"{DAY2 + 30}.000300",
            subtype="thread_broadcast",
            thread_ts=THREAD,
        ),
        message(
            "U02BOB",
            "",
            f"{DAY2 + 90}.000000",
            subtype="file_share",
            files=[{"id": "F1", "name": "ticket.pdf"}],
        ),
    ]


def _trips_day1() -> list[dict[str, Any]]:
    return [
        message("U02BOB", "<!here> I prefer a hotel by the sea &lt;3", f"{DAY1 + 600}.000000"),
        message(
            "U03CAT",
            "<@U03CAT> has left the channel",
            f"{DAY1 + 700}.000000",
            subtype="channel_leave",
        ),
    ]


def days() -> dict[str, list[dict[str, Any]]]:
    """The day files, by path in the export."""
    return {
        "general/2024-05-03.json": _general_day1(),
        "general/2024-05-04.json": _general_day2(),
        "trips/2024-05-03.json": _trips_day1(),
    }


def write_export(folder: Path, files: dict[str, Any] | None = None) -> Path:
    """The unpacked export in `folder`; `files` (path -> JSON) replace or add to its files."""
    content: dict[str, Any] = {"users.json": USERS, "channels.json": CHANNELS, **days()}
    content["integration_logs.json"] = [{"service_name": "deploybot", "date": str(DAY1)}]
    for path, data in (content | (files or {})).items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(data if isinstance(data, str) else json.dumps(data, indent=1))
    return folder
