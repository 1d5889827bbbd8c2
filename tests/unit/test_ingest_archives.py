"""Zip archives given to `ingest`: their chat logs unpacked into a private temporary folder
named as the archive, nothing else unpacked, entries that would land outside refused, and the
folder gone when the read ends. No store is needed."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from engine.errors import InvalidInputError
from engine.ingest.archives import Archives, is_archive


def _zip(path: Path, entries: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in entries.items():
            archive.writestr(name, text)
    return path


def test_the_logs_are_unpacked_under_the_archives_name_and_removed_after(tmp_path: Path) -> None:
    path = _zip(
        tmp_path / "WhatsApp Chat - Ann.zip",
        {"_chat.txt": "log", "IMG-1.jpg": "picture", "__MACOSX/._chat.txt": "x", "a/b.json": "{}"},
    )

    with Archives() as archives:
        folder = archives.opened(str(path))
        found = sorted(str(p.relative_to(folder)) for p in Path(folder).rglob("*") if p.is_file())
        shown = archives.shown(os.path.join(folder, "_chat.txt"))

    assert Path(folder).name == "WhatsApp Chat - Ann"
    assert found == ["_chat.txt", "a/b.json"]
    assert shown == f"{path}{os.sep}_chat.txt"
    assert not Path(folder).exists()


@pytest.mark.parametrize("name", ["../evil.json", "/etc/evil.json", "a/../../evil.txt"])
def test_an_entry_that_would_land_outside_is_refused(tmp_path: Path, name: str) -> None:
    path = _zip(tmp_path / "export.zip", {name: "{}"})
    with Archives() as archives, pytest.raises(InvalidInputError, match="would land outside"):
        archives.opened(str(path))
    assert not (tmp_path / "evil.json").exists()


def test_a_link_in_the_archive_is_not_unpacked(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    with zipfile.ZipFile(path, "w") as archive:
        link = zipfile.ZipInfo("conversations.json")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/home/someone/.ssh/id_rsa")
    with Archives() as archives:
        assert list(Path(archives.opened(str(path))).iterdir()) == []


def test_a_path_that_is_no_archive_is_itself(tmp_path: Path) -> None:
    text = tmp_path / "chat.zip"
    text.write_text("not a zip", encoding="utf-8")
    assert not is_archive(str(text))
    with Archives() as archives:
        assert archives.opened(str(text)) == str(text)
