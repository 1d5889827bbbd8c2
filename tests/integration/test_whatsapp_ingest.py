"""A chat exported from WhatsApp through `graphmem ingest`: recognised by its lines, stored with
its speakers and times, searchable, and a rerun of a longer export stores only what is new."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest_runs import found_first, ingest_twice

CHAT = """\
12/30/23, 9:15 PM - Messages and calls are end-to-end encrypted.
12/30/23, 9:15 PM - Ann: I moved to Lisbon last week!
12/30/23, 9:15 PM - Bob: ok
12/30/23, 9:15 PM - Bob: ok
"""
LATER = "12/31/23, 10:02 AM - Bob: My sister Eva works at the Gulbenkian museum.\n"


def test_a_whatsapp_chat_is_ingested_once_and_searchable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "WhatsApp Chat with Bob.txt"
    path.write_text(CHAT, encoding="utf-8")

    # a later export of the same chat: more messages at its end
    first, again = ingest_twice(path, lambda: path.write_text(CHAT + LATER, "utf-8"), capsys)

    assert first["formats"] == {str(path): "whatsapp"}
    assert (first["messages_added"], again["messages_added"]) == (3, 1)
    found, stored = found_first(path, "Where did Ann move?")
    assert (found.text, found.speaker) == ("I moved to Lisbon last week!", "Ann")
    assert stored == 4
