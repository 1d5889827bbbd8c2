"""Private files: nothing graphmem writes is readable by another local user, and the socket
directory is used only when it is the current user's alone."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.cli import app as cli
from engine.cli import exchange as cli_exchange
from engine.embedding import Embedder
from engine.errors import StoreUnavailableError
from engine.ingest.chat_records import ChatRecord
from engine.ingest.deadletters import DeadLetter, DeadLetters
from engine.memory import Memory
from engine.store.falkordb_server import EmbeddedServer, socket_path_for


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The most permissive umask a user may have: everything private must stay private."""
    previous = os.umask(0o000)
    yield
    os.umask(previous)


def _modes(root: Path) -> dict[str, int]:
    out = {str(root): stat.S_IMODE(root.stat().st_mode)}
    for path in root.rglob("*"):
        if not path.is_socket():
            out[str(path.relative_to(root))] = stat.S_IMODE(path.lstat().st_mode)
    return out


def _open_to_others(modes: dict[str, int]) -> dict[str, str]:
    return {path: f"{mode:04o}" for path, mode in modes.items() if mode & 0o077}


def test_the_data_dir_and_everything_in_it_are_private(
    tmp_path: Path, embedder: Embedder, loose_umask: None
) -> None:
    data_dir = tmp_path / "mem"
    with Memory(data_dir=data_dir, embedder=embedder) as mem:
        mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    letters = DeadLetters(data_dir / "dead_letters.jsonl")
    letters.add(_letter())
    letters.close()
    modes = _modes(data_dir)
    assert {"falkordb.log", "appendonlydir", "server.lock", "dead_letters.jsonl"} <= set(modes)
    assert _open_to_others(modes) == {}
    assert modes[str(data_dir)] == 0o700


def test_files_an_older_version_left_readable_are_made_private(
    tmp_path: Path, loose_umask: None
) -> None:
    data_dir = tmp_path / "old"
    (data_dir / "appendonlydir").mkdir(parents=True, mode=0o755)
    for name in ("falkordb.log", "server.json", "appendonlydir/graphmem.aof.1.incr.aof"):
        (data_dir / name).write_text("")
        (data_dir / name).chmod(0o644)
    data_dir.chmod(0o755)
    server = EmbeddedServer(data_dir)
    server.ensure_running()
    try:
        assert _open_to_others(_modes(data_dir)) == {}
    finally:
        server.stop_if_unused()


def test_rewritten_dead_letters_stay_private(tmp_path: Path, loose_umask: None) -> None:
    letters = DeadLetters(tmp_path / "letters" / "dead.jsonl")
    letters.add(_letter("a"))
    letters.add(_letter("b"))
    letters.resolve("a")
    letters.close()  # rewrites the file through a temporary one
    assert _open_to_others(_modes(tmp_path / "letters")) == {}


def test_a_cli_export_is_private(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch, loose_umask: None
) -> None:
    mem = Memory(data_dir=tmp_path / "mem", embedder=embedder)
    mem.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    monkeypatch.setattr(cli_exchange, "open_memory", lambda args, **_: mem)
    out = tmp_path / "alice.json"
    assert cli.main(["export", "--user", "alice", "-o", str(out)]) == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o600


# -- the socket directory -------------------------------------------------------------------


@pytest.fixture
def shared_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """No XDG_RUNTIME_DIR: the socket directory goes under the system temp dir (here a
    stand-in for /tmp, which every local user can write into). Made directly in /tmp: under
    a parallel run's longer `tmp_path` the socket path would pass the 108-byte limit."""
    base = Path(tempfile.mkdtemp(prefix="gm-"))
    base.chmod(0o1777)
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def server(tmp_path: Path, shared_tmp: Path) -> Iterator[EmbeddedServer]:
    """The server of a fresh data dir too deep for its socket (which then goes into the
    socket directory), stopped afterwards should a test start it."""
    embedded = EmbeddedServer(tmp_path / ("d" * 100))
    yield embedded
    if embedded.socket_path.exists():
        embedded.stop_if_unused()


def test_a_socket_dir_open_to_others_is_refused(server: EmbeddedServer, shared_tmp: Path) -> None:
    socket_dir = server.socket_path.parent
    assert socket_dir.parent == shared_tmp
    socket_dir.mkdir()
    socket_dir.chmod(0o777)  # what another user would leave for us to use
    with pytest.raises(StoreUnavailableError) as caught:
        server.ensure_running()
    assert "group or others have access" in str(caught.value)
    assert str(socket_dir) in str(caught.value)
    assert not server.socket_path.exists()


def test_a_socket_dir_that_is_a_symlink_is_refused(server: EmbeddedServer, tmp_path: Path) -> None:
    socket_dir = server.socket_path.parent
    elsewhere = tmp_path / "theirs"
    elsewhere.mkdir(mode=0o700)
    socket_dir.symlink_to(elsewhere)
    with pytest.raises(StoreUnavailableError, match="symbolic link"):
        server.ensure_running()
    assert list(elsewhere.iterdir()) == []


def test_a_socket_dir_of_another_user_is_refused(
    server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    socket_dir = server.socket_path.parent
    socket_dir.mkdir(mode=0o700)
    if os.getuid() == 0:
        os.chown(socket_dir, 4242, 4242)
    else:  # only root can give a directory away; seen from another uid it is the same case
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)
    with pytest.raises(StoreUnavailableError, match="belongs to uid"):
        server.ensure_running()


def test_a_fresh_socket_dir_is_created_private(
    server: EmbeddedServer, shared_tmp: Path, tmp_path: Path
) -> None:
    server.ensure_running()
    assert server.socket_path.parent.parent == shared_tmp
    assert stat.S_IMODE(server.socket_path.parent.stat().st_mode) == 0o700
    assert server.socket_path == socket_path_for(server.data_dir)


def _letter(checksum: str = "c1") -> DeadLetter:
    record = ChatRecord(role="user", content="hello", user_id="alice", source="chat.jsonl:1")
    return DeadLetter(
        record=record,
        user_id="alice",
        checksum=checksum,
        path="chat.jsonl",
        location="line 1",
        stage="extract",
        reason="test",
        failed_at=datetime.now(UTC),
    )
