"""A Claude.ai data export written by hand, in the shape of its `conversations.json`.

Two conversations:
- "Trip to Kyoto" (`conv-kyoto`): a user message; an answer that thinks, searches the web (a
  tool_use and its tool_result) and speaks in two text blocks; a user message with an
  attachment and no `created_at`; an answer from an older export, with `text` and no blocks;
- unnamed (`conv-dentist`): a user message, an empty answer, a user message holding only an
  image file.

`SHOWN` lists what a reader keeps, in order: (message uuid, role, text, time, session).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

KYOTO = "2024-06-01T09:00:00.000000Z"
DENTIST = "2024-06-03T18:30:00Z"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


SHOWN = [
    (
        "k-1",
        "user",
        "I'm going to Kyoto in October with my wife Mia.",
        at("2024-06-01T09:00:05.123456Z"),
        "conv-kyoto",
    ),
    (
        "k-2",
        "assistant",
        "Kyoto in October is lovely.\n\nThe maple season starts in November.",
        at("2024-06-01T09:00:20Z"),
        "conv-kyoto",
    ),
    # no created_at: the time of the message before it
    ("k-3", "user", "Here is our itinerary.", at("2024-06-01T09:00:20Z"), "conv-kyoto"),
    ("k-4", "assistant", "Day 2 looks packed.", at("2024-06-01T09:02:00Z"), "conv-kyoto"),
    (
        "d-1",
        "user",
        "My dentist appointment is on Friday.",
        at("2024-06-03T18:30:10Z"),
        "conv-dentist",
    ),
]
LEFT_OUT = (
    "5 messages read from 2 conversations; left out 2: 1 empty, 1 without text (only file); "
    "left out of the messages read: 1 thinking, 1 tool_use, 1 tool_result, 1 attachment"
)


def text(said: str) -> dict[str, Any]:
    return {"type": "text", "text": said, "citations": []}


def message(
    uuid: str, sender: str, content: list[Any] | None, created: str | None, **more: Any
) -> dict[str, Any]:
    said = "\n\n".join(b["text"] for b in content or [] if b["type"] == "text")
    body = {"uuid": uuid, "text": said, "sender": sender, "created_at": created}
    return (
        body
        | ({"content": content} if content is not None else {})
        | {"updated_at": created, "attachments": [], "files": []}
        | more
    )


def _kyoto() -> dict[str, Any]:
    search = {"type": "tool_use", "name": "web_search", "input": {"query": "kyoto maple"}}
    found = {"type": "tool_result", "name": "web_search", "content": [text("maple: Nov")]}
    thinking = {"type": "thinking", "thinking": "They asked about October weather."}
    itinerary = {
        "file_name": "itinerary.txt",
        "file_size": 120,
        "file_type": "txt",
        "extracted_content": "Day 1: Fushimi Inari. Day 2: Arashiyama, Kinkaku-ji.",
    }
    answer = [
        thinking,
        text(SHOWN[1][2].split("\n\n")[0]),
        search,
        found,
        text(SHOWN[1][2].split("\n\n")[1]),
    ]
    messages = [
        message("k-1", "human", [text(SHOWN[0][2])], "2024-06-01T09:00:05.123456Z"),
        message("k-2", "assistant", answer, "2024-06-01T09:00:20Z"),
        message("k-3", "human", [text(SHOWN[2][2])], None, attachments=[itinerary]),
        message("k-4", "assistant", None, "2024-06-01T09:02:00Z", text=SHOWN[3][2]),
    ]
    return {
        "uuid": "conv-kyoto",
        "name": "Trip to Kyoto",
        "created_at": KYOTO,
        "updated_at": "2024-06-01T09:02:00Z",
        "account": {"uuid": "acct-1"},
        "chat_messages": messages,
    }


def _dentist() -> dict[str, Any]:
    messages = [
        message("d-1", "human", [text(SHOWN[4][2])], "2024-06-03T18:30:10Z"),
        message("d-2", "assistant", [text("")], "2024-06-03T18:30:15Z"),
        message(
            "d-3", "human", [text("")], "2024-06-03T18:31:00Z", files=[{"file_name": "xray.png"}]
        ),
    ]
    return {
        "uuid": "conv-dentist",
        "name": "",
        "created_at": DENTIST,
        "updated_at": DENTIST,
        "account": {"uuid": "acct-1"},
        "chat_messages": messages,
    }


def export() -> list[dict[str, Any]]:
    """The two conversations, as the export lists them."""
    return [_kyoto(), _dentist()]


def write_export(folder: Path, conversations: list[Any] | None = None) -> Path:
    """An unpacked export in `folder`: `conversations.json` beside the account's other files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "users.json").write_text('[{"uuid": "acct-1", "full_name": "Ann Lee"}]')
    (folder / "projects.json").write_text('[{"uuid": "p-1", "name": "Travel", "docs": []}]')
    path = folder / "conversations.json"
    path.write_text(json.dumps(export() if conversations is None else conversations, indent=1))
    return path
