"""A chat exported from WhatsApp through `graphmem ingest`: recognised by its lines, stored with
its speakers and times, searchable, and a rerun of a longer export stores only what is new."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.memory import Memory

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
    home = str(tmp_path / "home")
    ingest = ["--data-dir", home, "--json", "ingest", str(path), "--user", "ann"]

    assert main(ingest) == 0
    first = json.loads(capsys.readouterr().out)
    path.write_text(CHAT + LATER, encoding="utf-8")  # a later export of the same chat
    assert main(ingest) == 0
    again = json.loads(capsys.readouterr().out)

    assert first["formats"] == {str(path): "whatsapp"}
    assert (first["messages_added"], again["messages_added"]) == (3, 1)
    with Memory(data_dir=home) as memory:
        found = memory.search("Where did Ann move?", user_id="ann").episodes
        assert found[0].episode.text == "I moved to Lisbon last week!"
        assert found[0].episode.speaker == "Ann"
        assert memory.stats("ann").episodes == 4
