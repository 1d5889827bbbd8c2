"""A data directory or file another account prepared is never used as is; a data directory
graphmem cannot use gets a clear error (no traceback, no abort)."""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.cli import app as cli
from engine.cli import exchange as cli_exchange
from engine.embedding import Embedder
from engine.errors import StoreUnavailableError
from engine.ingest.deadletters import DeadLetters
from engine.load.state import LoadState, save_state
from engine.memory import Memory
from engine.store.falkordb_server import EmbeddedServer
from tests.integration.security.test_files import _letter

NOBODY = 65534


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o000)
    yield
    os.umask(previous)


def _refused(data_dir: Path, embedder: Embedder) -> str:
    with pytest.raises(StoreUnavailableError) as caught:
        Memory(data_dir=data_dir, embedder=embedder)
    return str(caught.value)


def test_a_data_dir_of_another_account_is_refused(tmp_path: Path, embedder: Embedder) -> None:
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, NOBODY, NOBODY)
    message = _refused(theirs, embedder)
    assert str(theirs) in message and f"belongs to uid {NOBODY}" in message
    assert list(theirs.iterdir()) == []  # nothing written into it


@pytest.mark.parametrize("mode", [0o777, 0o757])
def test_a_data_dir_others_can_write_into_is_refused(
    tmp_path: Path, embedder: Embedder, mode: int
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(mode)
    message = _refused(shared, embedder)
    assert str(shared) in message and "others can write into it" in message
    assert list(shared.iterdir()) == []


def test_a_data_dir_that_is_a_file_or_cannot_be_made_is_a_clear_error(
    tmp_path: Path, embedder: Embedder
) -> None:
    a_file = tmp_path / "a_file"
    a_file.write_text("not a directory")
    assert "it is not a directory" in _refused(a_file, embedder)
    assert "cannot be created" in _refused(a_file / "below", embedder)
    assert "cannot be created" in _refused(Path("/sys/graphmem-test"), embedder)  # read-only


def test_the_cli_says_so_in_one_line_and_exits_1(tmp_path: Path) -> None:
    """It printed a traceback, then aborted (exit 134) as the model loaded in a thread."""
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "--data-dir", str(a_file), "stats"],
        env={**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[2])},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert f"graphmem: error: cannot use the data directory '{a_file}'" in done.stderr


# -- files ----------------------------------------------------------------------------------


def test_a_file_of_another_account_is_not_written(tmp_path: Path) -> None:
    """Dead letters (message text) landed in a file another account had created to read."""
    planted = tmp_path / "dead_letters.jsonl"
    planted.write_text("")
    os.chown(planted, NOBODY, NOBODY)
    letters = DeadLetters(planted)
    with pytest.raises(PermissionError, match=f"belongs to uid {NOBODY}"):
        letters.add(_letter())
    assert planted.read_text(encoding="utf-8") == ""


def test_an_export_through_a_symlink_or_into_anothers_file_is_refused(
    tmp_path: Path,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    mem = Memory(data_dir=tmp_path / "mem", embedder=embedder)
    mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    monkeypatch.setattr(cli_exchange, "open_memory", lambda args, **_: contextlib.nullcontext(mem))
    target = tmp_path / "target"
    target.write_text("theirs")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    with mem:
        assert cli.main(["export", "--user", "alice", "-o", str(link)]) == 1
        assert "is a symbolic link" in capsys.readouterr().err
        os.chown(target, NOBODY, NOBODY)
        assert cli.main(["export", "--user", "alice", "-o", str(target)]) == 1
        assert f"belongs to uid {NOBODY}" in capsys.readouterr().err
    assert target.read_text(encoding="utf-8") == "theirs"


def test_load_checkpoints_are_private(tmp_path: Path, loose_umask: None) -> None:
    where = tmp_path / "data" / "loads" / "x.json"
    save_state(where, LoadState("identity", "alice", 2000))
    assert stat.S_IMODE(where.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(where.stat().st_mode) == 0o600


def test_a_data_dir_of_ours_is_made_private(tmp_path: Path, loose_umask: None) -> None:
    data_dir = tmp_path / "ours"
    data_dir.mkdir(mode=0o755)
    server = EmbeddedServer(data_dir)
    server.ensure_running()
    server.stop_if_unused()
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
