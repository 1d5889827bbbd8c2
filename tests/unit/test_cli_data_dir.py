"""A command that reads or edits what is stored refuses a data dir that does not exist, in one
line naming it, and makes nothing: `graphmem --data-dir /nonexistent/dir/x users` made the
directories, started a server and printed "(no users in this store)" with status 0. No store
is opened (tests/unit/conftest.py fails a test that opens one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main

READS_AND_EDITS = {
    "users": ["users"],
    "stats": ["stats"],
    "search": ["search", "tea", "--user", "u"],
    "entities": ["entities", "--user", "u"],
    "entity": ["entity", "Alice", "--user", "u"],
    "history": ["history", "f00d", "--user", "u"],
    "export": ["export", "--user", "u"],
    "browse": ["browse", "--user", "u"],
    "update": ["update", "f00d", "--user", "u", "--text", "Alice likes tea"],
    "delete": ["delete", "fact", "f00d", "--user", "u"],
    "merge": ["merge", "Alice", "Al", "--user", "u"],
}


@pytest.mark.parametrize("argv", READS_AND_EDITS.values(), ids=list(READS_AND_EDITS))
def test_a_data_dir_that_does_not_exist_is_refused_and_nothing_is_made(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)
    missing = tmp_path / "nonexistent" / "dir" / "x"

    status = main(["--data-dir", str(missing), *argv])

    said = capsys.readouterr()
    assert (status, said.out) == (1, "")
    assert said.err.splitlines() == [
        f"graphmem: error: no data dir at {missing} (nothing is stored there: add, ingest, "
        "load, import and demo create it)"
    ]
    assert list(tmp_path.iterdir()) == []


def test_the_environment_s_data_dir_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path / "typo"))

    assert main(["users"]) == 1
    assert f"no data dir at {tmp_path / 'typo'} " in capsys.readouterr().err
    assert not (tmp_path / "typo").exists()
