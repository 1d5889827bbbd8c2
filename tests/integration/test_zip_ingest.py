"""An export given to `graphmem ingest` as the zip archive the app sent: read as its unpacked
folder, shown under the archive's path, the same messages as the folder gives, nothing left in
the temporary folder, and a rerun adds nothing."""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path

import pytest

from engine.cli import main
from engine.memory import Memory

CHAT = "[30/12/2023, 21:15:03] Ann: I moved to Lisbon last week!\n[30/12/2023, 21:16:00] Bob: ok\n"


def test_an_iphones_whatsapp_zip_is_read_as_its_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    path = tmp_path / "WhatsApp Chat - Bob.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("_chat.txt", CHAT)
        archive.writestr("00000003-PHOTO-2023-12-30-21-17-00.jpg", b"\xff\xd8 a picture")
    home = str(tmp_path / "home")
    ingest = ["--data-dir", home, "--json", "ingest", str(path), "--user", "ann"]

    assert main(ingest) == 0
    first = json.loads(capsys.readouterr().out)
    assert main(ingest) == 0
    again = json.loads(capsys.readouterr().out)

    assert first["formats"] == {f"{path}/_chat.txt": "whatsapp"}
    assert (first["messages_added"], again["messages_added"]) == (2, 0)
    assert list(temporary.iterdir()) == []
    with Memory(data_dir=home) as memory:
        found = memory.search("Where did Ann move?", user_id="ann").episodes[0].episode
        assert (found.text, found.session_id) == (
            "I moved to Lisbon last week!",
            "WhatsApp Chat - Bob",
        )
