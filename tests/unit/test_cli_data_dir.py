"""A command that reads or edits what is stored refuses a data dir that does not exist, or a
folder that holds no graphmem data, in one line naming it, and makes nothing: `graphmem
--data-dir /nonexistent/dir/x users` made the directories, started a server and printed "(no
users in this store)" with status 0; `graphmem --data-dir . users` in a project folder made it
0700 and started a server there. No store is opened (tests/unit/conftest.py fails a test that
opens one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main
from engine.private_files import holds_store

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
        "load, import, demo and mcp create it)"
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


@pytest.mark.parametrize("argv", READS_AND_EDITS.values(), ids=list(READS_AND_EDITS))
def test_a_folder_without_graphmem_data_is_refused_and_left_as_it_is(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# not a data dir\n")
    project.chmod(0o755)

    status = main(["--data-dir", str(project), *argv])

    said = capsys.readouterr()
    assert (status, said.out) == (1, "")
    assert said.err.splitlines() == [
        f"graphmem: error: no graphmem data in {project}: it is not a data dir (add, ingest, "
        "load, import, demo and mcp create one; give them a new folder, not one holding other "
        "files)"
    ]
    assert [p.name for p in project.iterdir()] == ["README.md"]
    assert project.stat().st_mode & 0o777 == 0o755


def test_an_empty_folder_is_no_data_dir_for_a_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GRAPHMEM_STORE", raising=False)

    assert main(["--data-dir", str(tmp_path), "users"]) == 1
    assert f"no graphmem data in {tmp_path}: " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "written",
    ["appendonlydir/appendonly.aof.manifest", "dump.rdb", "server.json"],
    ids=["append-only files", "an older version's dump", "a server's record"],
)
def test_what_the_embedded_server_writes_marks_a_data_dir(written: str, tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("# notes\n")
    assert not holds_store(tmp_path)
    (tmp_path / written).parent.mkdir(exist_ok=True)
    (tmp_path / written).write_text("")

    assert holds_store(tmp_path)


def test_a_folder_that_cannot_be_looked_into_is_left_for_opening_to_explain(
    tmp_path: Path,
) -> None:
    def denied(self: Path, **_: object) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Path, "stat", denied)
        held = holds_store(tmp_path)

    assert held  # so prepare_data_dir says "it is read-only for you", not "no graphmem data"
