"""The embedded server's lifecycle: one server per data dir whatever the environment, a
relative data dir, a failed start, a stale pid file, processes that exit without `close`."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import cli
from engine.config import build_settings
from engine.embedding import Embedder
from engine.errors import ClosedError, StoreUnavailableError
from engine.memory import Memory
from engine.store import falkordb_server
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.server_record import ServerRecord, alive

LEFT_BEHIND = {"server.json", "falkordb.pid", "falkordb.sock"}


def _start_python(script: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _facts(data_dir: Path, user: str, embedder: Embedder) -> list[str]:
    with Memory(data_dir=data_dir, embedder=embedder) as mem:
        return sorted(f.subject for f in mem.get_all(user))


# -- a relative data dir, a failed start ------------------------------------------------------


def test_a_relative_data_dir_works_from_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: Embedder
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMEM_HOME", "home")
    assert build_settings().data_dir == tmp_path / "home"
    with Memory(data_dir="mem", embedder=embedder) as mem:
        mem.add_facts([("Alice", "LIKES", "tea")], user_id="alice")
        assert mem.settings.data_dir == tmp_path / "mem"
    assert _facts(tmp_path / "mem", "alice", embedder) == ["Alice"]


def test_a_relative_data_dir_works_from_the_cli(tmp_path: Path, embedder: Embedder) -> None:
    with Memory(data_dir=tmp_path / "mem", embedder=embedder) as mem:  # a read makes none
        mem.add_facts([("Alice", "LIKES", "tea")], user_id="alice")
    done = subprocess.run(
        [sys.executable, "-m", "engine.cli", "--data-dir", "./mem", "stats"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(cli.__file__).parents[2])},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "facts: 1" in done.stdout
    assert not LEFT_BEHIND & {p.name for p in (tmp_path / "mem").iterdir()}


def test_a_failed_start_says_why_and_leaves_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(falkordb_server, "_PLAN_CACHE", "not-a-number")
    kept, fresh = tmp_path / "kept", tmp_path / "fresh"
    kept.mkdir()
    for data_dir in (kept, fresh):
        with pytest.raises(StoreUnavailableError) as caught:
            EmbeddedServer(data_dir).ensure_running()
        assert "did not start" in str(caught.value)
        assert "Can't load module" in str(caught.value)  # the server's own words
    assert not LEFT_BEHIND & {p.name for p in kept.iterdir()}
    assert not fresh.exists()  # a data dir made for a start that failed is removed


# -- one server per data dir, whatever the environment ---------------------------------------

WRITER = """
    import sys
    from engine import Memory
    mem = Memory(data_dir=sys.argv[1])
    mem.stats()
    print("ready", flush=True)
    sys.stdin.readline()  # both processes are open before either writes
    for i in range(int(sys.argv[3]), int(sys.argv[3]) + 20):
        mem.add_facts([(f"Person {i}", "LIKES", "tea")], user_id="shared")
        print(f"acked {i}", flush=True)
    sys.stdin.readline()  # both have written before either closes
    mem.close()
"""


def test_processes_with_different_temp_dirs_share_one_server(
    tmp_path: Path, embedder: Embedder
) -> None:
    data_dir, procs = tmp_path / "data", []
    for n in range(2):
        private = tmp_path / f"env{n}"
        private.mkdir(mode=0o700)
        env = {**os.environ, "XDG_RUNTIME_DIR": str(private), "TMPDIR": str(private)}
        proc = subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WRITER), str(data_dir), "-", str(n * 100)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env,
        )  # fmt: skip
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        procs.append(proc)
    servers = _servers_of(data_dir)
    acked = []
    for step in range(2):
        for proc in procs:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
            if step == 0:
                acked += [proc.stdout.readline().split()[1] for _ in range(20)]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert len(servers) == 1
    assert _facts(data_dir, "shared", embedder) == sorted(f"Person {i}" for i in acked)
    assert len(acked) == 40


def _open_sockets() -> int:
    """The sockets this process has open."""
    links = []
    for fd in Path("/proc/self/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            links.append(os.readlink(fd))
    return sum(link.startswith("socket:") for link in links)


def _servers_of(data_dir: Path) -> list[int]:
    """The pids of redis-servers running in `data_dir` (their working directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd, title = os.readlink(entry / "cwd"), (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"redis-server" in title and cwd == str(data_dir):
                found.append(int(entry.name))
    return found


# -- a stale pid file ---------------------------------------------------------------------


@pytest.fixture
def bystander() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process whose pid a stale pid file names."""
    proc = subprocess.Popen(["sleep", "120"])
    yield proc
    proc.kill()
    proc.wait()


@pytest.mark.parametrize("recorded", ["pid and start time", "socket only (older version)"])
def test_a_stale_pid_of_another_process_is_never_signalled(
    tmp_path: Path,
    bystander: subprocess.Popen[bytes],
    monkeypatch: pytest.MonkeyPatch,
    recorded: str,
) -> None:
    monkeypatch.setattr(falkordb_server, "_LOAD_TIMEOUT_S", 5.0)  # was 1800 s, then SIGKILL
    data_dir = tmp_path / "data"
    server = EmbeddedServer(data_dir)
    server.ensure_running()
    server.stop_if_unused()
    stale = falkordb_server.socket_path_for(data_dir)
    with socket.socket(socket.AF_UNIX) as dead:  # a socket file no server listens on
        dead.bind(str(stale))
    pid = bystander.pid
    record = ServerRecord(str(stale), pid, "1") if recorded.startswith("pid") else None
    (data_dir / "server.json").write_text(json.dumps({"socket": str(stale), **_fields(record)}))
    (data_dir / "falkordb.pid").write_text(f"{pid}\n")
    started = time.monotonic()
    reopened = EmbeddedServer(data_dir)
    reopened.ensure_running()
    try:
        assert time.monotonic() - started < 5.0
        assert bystander.poll() is None and alive(pid)  # never signalled
        assert reopened._ping()
    finally:
        reopened.stop_if_unused()


def _fields(record: ServerRecord | None) -> dict[str, object]:
    return {} if record is None else {"pid": record.pid, "started": record.started}


# -- processes that exit without close ----------------------------------------------------

LEFT_OPEN = """
    import sys
    from engine import Memory
    from engine.compat.mem0 import Memory as Mem0
    mems = [Memory(data_dir=f"{sys.argv[1]}/m{i}") for i in range(3)]
    for i, mem in enumerate(mems):
        mem.add_facts([("Alice", "LIKES", f"tea {i}")], user_id="a")
        print("searched", i, len(mem.search("what does Alice like?", user_id="a").facts))
    mem0 = Mem0.from_config({"graphmem": {"data_dir": f"{sys.argv[1]}/m0"}})
    print("mem0", len(mem0.get_all(user_id="a")["results"]))
    print("end")  # block-buffered (a pipe): lost if the interpreter aborts
"""


def test_memories_left_open_exit_cleanly_and_stop_their_servers(tmp_path: Path) -> None:
    """Two Memory objects left open crashed the interpreter at exit (a model still compiling
    in a background thread), and each left its redis-server running."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    # the crash came one run in two or three; the two run side by side
    runs = [_start_python(LEFT_OPEN, str(tmp_path / str(run)), env=env) for run in range(2)]
    for run, process in enumerate(runs):
        out, err = process.communicate(timeout=600)
        assert process.returncode == 0, err[-2000:]
        assert out.splitlines() == [
            "searched 0 1", "searched 1 1", "searched 2 1", "mem0 1", "end"
        ]  # fmt: skip
        for i in range(3):
            data_dir = tmp_path / str(run) / f"m{i}"
            assert ServerRecord.read(data_dir) is None
            assert _servers_of(data_dir) == []


def test_a_memory_closed_right_after_a_search_stops_its_server(
    tmp_path: Path, embedder: Embedder
) -> None:
    """With another Memory open in the process, a search's work still running at `close`
    (it stores what it derived, in the background) reconnected, and the server, seeing a
    client, was left running: 6 closes in 8."""
    held = Memory(data_dir=tmp_path / "held", embedder=embedder)
    try:
        for i in range(4):
            data_dir = tmp_path / f"m{i}"
            mem = Memory(data_dir=data_dir, embedder=embedder)
            mem.add_facts([("Kismet", "DIRECTED_BY", "William Dieterle")], user_id="u")
            mem.search("who directed Kismet", user_id="u")
            mem.close()
            assert ServerRecord.read(data_dir) is None
            assert _servers_of(data_dir) == []
    finally:
        held.close()


def test_a_store_opened_and_closed_unwritten_stops_without_a_warning(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    """The compaction before the stop asked an empty graph to drop its vector indexes, and
    every open-then-close of a new store warned that it was not compacted."""
    Memory(data_dir=tmp_path, embedder=embedder).close()
    assert _servers_of(tmp_path) == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_a_store_closed_under_a_reading_thread_stops_its_server(tmp_path: Path) -> None:
    """A read running when the store closed reconnected (the client retries a lost
    connection), and the server, seeing that client, was left running after the process."""
    server = EmbeddedServer(tmp_path)
    store = FalkorDBStore.embedded(server)
    store.setup(4)
    started, ended = threading.Event(), []

    def read_until_closed() -> None:
        while True:
            try:
                store.run("count_all_nodes", {})
            except ClosedError as exc:
                ended.append(exc)
                return
            started.set()

    reader = threading.Thread(target=read_until_closed, daemon=True)
    reader.start()
    assert started.wait(30)
    store.close()
    reader.join(30)
    assert ended and "is closed" in str(ended[0])
    assert ServerRecord.read(tmp_path) is None
    assert _servers_of(tmp_path) == []
    with pytest.raises(ClosedError):
        store.run("count_all_nodes", {})


def test_a_store_closed_unwritten_leaves_no_connection_open(tmp_path: Path) -> None:
    """Closing a graph never written looked it up once more and left that connection open."""
    before = _open_sockets()
    store = FalkorDBStore.embedded(EmbeddedServer(tmp_path))
    store.close()
    assert _servers_of(tmp_path) == []
    assert _open_sockets() == before


def test_closing_a_memory_leaves_a_store_passed_in_to_its_other_users(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    first = Memory(store=store, embedder=embedder, data_dir=tmp_path / "first")
    second = Memory(store=store, embedder=embedder, data_dir=tmp_path / "second")
    first.add_facts([("Alice", "LIKES", "tea")], user_id="alice")
    first.search("what does Alice like", user_id="alice")
    first.close()
    found = second.search("what does Alice like", user_id="alice")
    assert [hit.fact.object for hit in found.facts][:1] == ["tea"]
    second.close()


def test_a_closed_memory_says_so(tmp_path: Path, embedder: Embedder) -> None:
    mem = Memory(data_dir=tmp_path, embedder=embedder)
    mem.add_facts([("Alice", "LIKES", "tea")], user_id="alice")
    mem.close()
    mem.close()  # again: nothing happens
    with pytest.raises(ClosedError) as caught:
        mem.search("tea", user_id="alice")
    assert "this Memory is closed" in str(caught.value)


# -- graphmem stop ------------------------------------------------------------------------


def test_graphmem_stop_stops_an_unused_server_and_names_the_users_of_a_used_one(
    tmp_path: Path, embedder: Embedder, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    with Memory(data_dir=data_dir, embedder=embedder) as mem:
        mem.stats()
        assert cli.main(["--data-dir", str(data_dir), "stop"]) == 1
        assert f"in use by graphmem-{os.getpid()}" in capsys.readouterr().err
        assert mem.stats().facts == 0  # still running
        mem.store._server = None  # type: ignore[attr-defined]  # leave it running at close
    assert EmbeddedServer(data_dir).running()
    assert cli.main(["--data-dir", str(data_dir), "stop"]) == 0
    assert "stopped the server of" in capsys.readouterr().err
    assert not EmbeddedServer(data_dir).running()
    assert _servers_of(data_dir) == []
    assert cli.main(["--data-dir", str(data_dir), "stop"]) == 0
    assert "no server was running" in capsys.readouterr().err
