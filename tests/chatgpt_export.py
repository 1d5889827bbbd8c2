"""A ChatGPT data export written by hand, in the shape of its `conversations.json`.

Two conversations:
- "Moving to Lisbon" (`conv-a`): a hidden system message, hidden custom instructions, a user
  message, an assistant answer regenerated (the first answer is on a branch no longer shown), a
  user message with an image and no `create_time`, the assistant calling the browser, the
  browser's (tool) reply, and the assistant's answer;
- "Dinner ideas" (`conv-b`, old style: a visible system message first): a user message
  with no `create_time`, an answer, a user message edited (the first wording and its answer on
  another branch), and an empty assistant message.

`SHOWN` lists what a reader keeps, in order: (message id, role, text, time).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

A0 = 1714550400.0  # 2024-05-01 08:00:00 UTC: conv-a's create_time
B0 = 1714640000.0  # 2024-05-02 08:53:20 UTC: conv-b's create_time


def at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


SHOWN = [
    ("a-u1", "user", "I'm moving to Lisbon next month with my dog Rex.", at(A0 + 60.5)),
    ("a-a1", "assistant", "That's exciting! Lisbon is great for dogs.", at(A0 + 80)),
    # no create_time: the time of the message before it on the branch
    ("a-u2", "user", "This is the flat I rented in Alfama.", at(A0 + 80)),
    ("a-a2", "assistant", "Alfama is the oldest district of Lisbon.", at(A0 + 200)),
    # no create_time and nothing dated before it: the conversation's time
    ("b-u1", "user", "My sister Anna is vegetarian.", at(B0)),
    ("b-a1", "assistant", "Then try a chickpea curry.", at(B0 + 30)),
    ("b-u2", "user", "She also hates garlic.\nAnd mushrooms.", at(B0 + 90)),
]
LEFT_OUT = (
    "7 messages read from 2 conversations; left out 9: 3 on other branches (edited or "
    "regenerated), 2 system, 1 hidden, 1 to a tool, 1 tool, 1 empty"
)


def tree(root: str, *nodes: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """A mapping: an empty root, then `(parent, message)` pairs, each node named by its
    message's id, children listed in the order given."""
    mapping: dict[str, Any] = {root: {"id": root, "message": None, "parent": None, "children": []}}
    for parent, said in nodes:
        mapping[said["id"]] = {"id": said["id"], "message": said, "parent": parent, "children": []}
        mapping[parent]["children"].append(said["id"])
    return mapping


def message(
    message_id: str,
    role: str,
    parts: list[Any] | None = None,
    t: float | None = None,
    *,
    kind: str = "text",
    hidden: bool = False,
    recipient: str = "all",
    name: str | None = None,
    **content: Any,
) -> dict[str, Any]:
    body = {"content_type": kind, **content} | ({"parts": parts} if parts is not None else {})
    return {
        "id": message_id,
        "author": {"role": role, "name": name, "metadata": {}},
        "create_time": t,
        "update_time": None,
        "content": body,
        "status": "finished_successfully",
        "end_turn": None,
        "weight": 1.0,
        "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
        "recipient": recipient,
    }


def _lisbon() -> dict[str, Any]:
    image = {"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-1"}
    mapping = tree(
        "client-created-root",
        ("client-created-root", message("a-sys", "system", [""], hidden=True)),
        ("a-sys", message("a-ctx", "user", kind="user_editable_context", hidden=True)),
        ("a-ctx", message("a-u1", "user", [SHOWN[0][2]], A0 + 60.5)),
        ("a-u1", message("a-a1-old", "assistant", ["Lisbon is hilly."], A0 + 70)),  # regenerated
        ("a-u1", message("a-a1", "assistant", [SHOWN[1][2]], A0 + 80)),
        ("a-a1", message("a-u2", "user", [image, SHOWN[2][2]], kind="multimodal_text")),
        ("a-u2", message("a-call", "assistant", t=A0 + 100, kind="code", recipient="browser")),
        ("a-call", message("a-tool", "tool", t=A0 + 150, kind="tether_browsing_display")),
        ("a-tool", message("a-a2", "assistant", [SHOWN[3][2]], A0 + 200)),
    )
    return {
        "title": "Moving to Lisbon",
        "create_time": A0,
        "update_time": A0 + 300,
        "mapping": mapping,
        "moderation_results": [],
        "current_node": "a-a2",
        "conversation_id": "conv-a",
        "id": "conv-a",
    }


def _dinner() -> dict[str, Any]:
    system = message("b-sys", "system", [""])  # old exports: a visible system message first
    mapping = tree(
        "b-root",
        ("b-root", system),
        ("b-sys", message("b-u1", "user", [SHOWN[4][2]])),
        ("b-u1", message("b-a1", "assistant", [SHOWN[5][2]], B0 + 30)),
        ("b-a1", message("b-u2-old", "user", ["She hates onions."], B0 + 60)),  # edited
        ("b-u2-old", message("b-a2-old", "assistant", ["No onions then."], B0 + 70)),
        ("b-a1", message("b-u2", "user", ["She also hates garlic.", "And mushrooms."], B0 + 90)),
        ("b-u2", message("b-a2", "assistant", ["", " "], B0 + 95)),
    )
    return {
        "title": "Dinner ideas",
        "create_time": B0,
        "update_time": B0 + 100,
        "mapping": mapping,
        "current_node": "b-a2",
        "conversation_id": "conv-b",
        "id": "conv-b",
    }


def export() -> list[dict[str, Any]]:
    """The two conversations, as the export lists them."""
    return [_lisbon(), _dinner()]


def write_export(folder: Path, conversations: list[Any] | None = None) -> Path:
    """An unpacked export in `folder`: `conversations.json` beside the account's other files."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user.json").write_text('{"id": "user-1", "email": "ann@example.com"}')
    (folder / "chat.html").write_text("<html><body>conversations</body></html>")
    shared = [{"id": "s1", "conversation_id": "conv-a", "title": "Moving to Lisbon"}]
    (folder / "shared_conversations.json").write_text(json.dumps(shared))
    (folder / "file-1.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    path = folder / "conversations.json"
    path.write_text(json.dumps(export() if conversations is None else conversations))
    return path
