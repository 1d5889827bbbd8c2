"""The embedded FalkorDB: persistence, crash recovery, sharing between processes."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from engine.errors import StoreUnavailableError
from engine.memory import Memory
from engine.store import falkordb as falkordb_module
from engine.store import falkordb_schema, falkordb_server
from engine.store.base import EpisodeRow, WriteBatch
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer, socket_path_for
from engine.store.server_record import asleep

SCRIPT = textwrap.dedent(
    """
    import sys, time
    from engine import Memory
    mem = Memory(data_dir=sys.argv[1])
    user, start, count = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for i in range(start, start + count):
        mem.add_facts([(f"Person {i}", "LIKES", "tea")], user_id=user)
        print(f"acked {i}", flush=True)
    if len(sys.argv) > 5:
        time.sleep(60)  # hold on until killed
    mem.close()
    """
)


def _run(data_dir: Path, user: str, start: int, count: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(data_dir), user, str(start), str(count)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


def _facts(data_dir: Path, user: str) -> list[str]:
    with Memory(data_dir=data_dir) as mem:
        return sorted(f.subject for f in mem.get_all(user))


def test_socket_path_stays_short_for_deep_data_dirs(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 200)
    assert len(str(socket_path_for(deep))) < 108


def test_socket_path_stays_short_under_a_deep_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A notebook kernel run with a long TMPDIR: the fallback folder is too long as well."""
    long_tmp = tmp_path / ("t" * 90)
    long_tmp.mkdir()
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "tempdir", str(long_tmp))
    path = socket_path_for(tmp_path / ("d" * 200))
    assert len(bytes(path)) < 108 and path.name.endswith(".sock")


def test_data_survives_a_clean_restart(tmp_path: Path) -> None:
    _run(tmp_path, "alice", 0, 3)
    server = EmbeddedServer(tmp_path)
    assert not server._ping()  # the last process out stopped it
    assert _facts(tmp_path, "alice") == ["Person 0", "Person 1", "Person 2"]


def test_two_processes_share_one_server(tmp_path: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT, str(tmp_path), "shared", str(i * 10), "5"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert len(_facts(tmp_path, "shared")) == 10


def test_kill_9_of_python_keeps_acknowledged_writes(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, str(tmp_path), "bob", "0", "3", "hold"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    acked = [proc.stdout.readline().strip() for _ in range(3)]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    assert acked == ["acked 0", "acked 1", "acked 2"]
    assert _facts(tmp_path, "bob") == ["Person 0", "Person 1", "Person 2"]


def test_kill_9_of_the_server_recovers_from_the_append_only_file(tmp_path: Path) -> None:
    # the default policy (appendfsync everysec): an acknowledged write has reached the OS, so it
    # survives the death of the server process; only an OS crash can lose its last second
    server = EmbeddedServer(tmp_path)
    server.ensure_running()
    with Memory(data_dir=tmp_path) as mem:
        mem.add_facts([("Carol", "OWNS", "a bike")], user_id="carol")
        pid = int(server.pid_file.read_text(encoding="utf-8"))
        os.kill(pid, signal.SIGKILL)
    with Memory(data_dir=tmp_path) as mem:  # finds a stale socket, restarts, replays the AOF
        assert [f.text for f in mem.get_all("carol")] == ["Carol owns a bike"]
        assert int(server.pid_file.read_text(encoding="utf-8")) != pid


def test_a_server_killed_under_an_open_memory_is_started_again(tmp_path: Path) -> None:
    """A server gone while a `Memory` is open (FalkorDB crashed under concurrent adds, or
    was OOM-killed): every later call failed with "Connection refused" until the app was
    restarted. The call that finds it gone starts it again and says so; the next works, and
    what was acknowledged is there."""
    server = EmbeddedServer(tmp_path)
    with Memory(data_dir=tmp_path) as mem:
        mem.add_facts([("Carol", "OWNS", "a bike")], user_id="carol")
        pid = int(server.pid_file.read_text(encoding="utf-8"))
        os.kill(pid, signal.SIGKILL)
        with pytest.raises(StoreUnavailableError, match=r"had stopped .* started again"):
            mem.get_all("carol")
        assert [f.text for f in mem.get_all("carol")] == ["Carol owns a bike"]
        mem.add_facts([("Carol", "OWNS", "a kayak")], user_id="carol")
        assert int(server.pid_file.read_text(encoding="utf-8")) != pid
    with Memory(data_dir=tmp_path) as mem:
        assert sorted(f.object for f in mem.get_all("carol")) == ["a bike", "a kayak"]


def test_an_acknowledged_write_has_left_the_server_on_a_busy_disk(tmp_path: Path) -> None:
    """With appendfsync everysec, redis answers a write before it writes it to the append-only
    file while a background fsync runs (a busy disk): the write waits in the server's memory,
    where a kill -9 of the server loses it. graphmem acknowledges a write only once the
    server's AOF buffer is empty."""
    with Memory(data_dir=tmp_path) as mem:
        client = redis.Redis(unix_socket_path=str(socket_path_for(tmp_path)))
        blob = os.urandom(1 << 20)
        held = 0
        for i in range(120):
            client.set(f"blob{i % 20}", blob)  # keeps the server's background fsync busy
            mem.add_facts([(f"Person {i}", "KNOWS", "Bob")], user_id="u")
            held += int(client.info("persistence")["aof_buffer_length"] > 0)
        client.close()
    assert held == 0


def test_the_server_keeps_many_statements_compiled(tmp_path: Path) -> None:
    """Each set of relationship types a typed read names is a statement of its own."""
    with Memory(data_dir=tmp_path):
        client = redis.Redis(unix_socket_path=str(socket_path_for(tmp_path)))
        _, size = client.execute_command("GRAPH.CONFIG", "GET", "CACHE_SIZE")
        client.close()
    assert int(size) >= 1000


FREEZE = textwrap.dedent(
    """
    import gc, sys
    from engine import Memory
    before = gc.get_freeze_count()
    asked = {"on": {"freeze_gc": True}, "off": {"freeze_gc": False}}.get(sys.argv[2], {})
    with Memory(data_dir=sys.argv[1], **asked) as mem:
        mem.stats()
        setup = gc.get_freeze_count()
        mem.add("I moved to Lisbon last spring and I work at Acme.", user_id="u")
        print(before, setup, gc.get_freeze_count())
    """
)


def test_the_first_setup_asked_moves_the_process_objects_out_of_the_collectors_view(
    tmp_path: Path,
) -> None:
    """Asked (`freeze_gc=True`): a full collection otherwise walks every imported module's
    objects in some search; the offline extractor's spaCy, loaded at the first `add`, is
    frozen in turn. By default the collector is left alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    procs = {}  # side by side: each loads the model and spaCy
    for setting in ("on", "off", "default"):
        procs[setting] = subprocess.Popen(
            [sys.executable, "-c", FREEZE, str(tmp_path / setting), setting],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
    counts = {}
    for setting, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        before, setup, added = map(int, out.split())
        counts[setting] = (before, setup, added)
    assert counts["on"][0] == 0 and counts["on"][1] > 10_000
    assert counts["on"][2] > counts["on"][1] + 10_000
    assert counts["off"] == counts["default"] == (0, 0, 0)


def test_a_server_silent_during_setup_is_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FalkorDB deadlocked once declaring an index on a fresh graph; setup must not wait
    forever on a server that answers nothing (here: one stopped with SIGSTOP)."""
    monkeypatch.setattr(falkordb_schema, "SCHEMA_PATIENCE_S", 1.0)
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 1.0)  # a stopped one: no reply
    server = EmbeddedServer(tmp_path)
    store = FalkorDBStore.embedded(server)
    with _frozen(server) as frozen, contextlib.closing(store):
        store.setup(384)
        assert int(server.pid_file.read_text(encoding="utf-8")) != frozen
        assert store.run("list_indexes", {})  # the new server has the indexes


def test_a_server_hung_at_any_call_is_restarted_and_the_call_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply that never comes (FalkorDB deadlocked; here SIGSTOP) ends in an error naming
    the restart, not a wait without end; what was stored before is there after it."""
    monkeypatch.setattr(falkordb_module, "REPLY_PATIENCE_S", 1.0)
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 1.0)  # a stopped one: no reply
    server = EmbeddedServer(tmp_path)
    store = FalkorDBStore.embedded(server)
    store.setup(8)
    rows = [EpisodeRow(uid, "s1", "user", "I like tea.", 1.0, None, uid) for uid in ("e1", "e2")]
    store.write("u1", WriteBatch(episodes=rows))
    with _frozen(server) as frozen, contextlib.closing(store):
        with pytest.raises(StoreUnavailableError, match="stopped answering and was restarted"):
            store.run("count_all_nodes", {})
        assert int(server.pid_file.read_text(encoding="utf-8")) != frozen
        assert store.run("count_all_nodes", {})[0][0] == 2


def test_a_server_busy_without_answering_is_not_restarted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write during FalkorDB's build of a vector index over many nodes holds redis's main
    thread for seconds: it answers nothing meanwhile, but works (here a Lua loop holds it).
    Neither a schema statement nor a call that waited past its patience restarts it (a
    restart would build the index again from its start)."""
    monkeypatch.setattr(falkordb_schema, "SCHEMA_PATIENCE_S", 1.0)
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 1.0)
    server = EmbeddedServer(tmp_path)
    store = FalkorDBStore.embedded(server)
    pid = int(server.pid_file.read_text(encoding="utf-8"))
    with contextlib.closing(store):
        with _busy(server, seconds=4.0):
            store.setup(8)  # its first statement waited past its patience
        assert store.run("list_indexes", {})
        monkeypatch.setattr(falkordb_module, "REPLY_PATIENCE_S", 1.0)
        with contextlib.closing(FalkorDBStore.embedded(server)) as impatient:
            with _busy(server, seconds=4.0), pytest.raises(StoreUnavailableError) as cut:
                impatient.run("count_all_nodes", {})
            assert "restarted" not in str(cut.value)
            assert impatient.run("count_all_nodes", {}) == [[0]]
        assert int(server.pid_file.read_text(encoding="utf-8")) == pid


def test_a_busy_server_given_no_cpu_while_asked_is_not_taken_for_hung(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a loaded machine a busy server may get no CPU during the whole wait for its reply
    (a fresh CI run restarted one once): its main thread is runnable, not asleep, and it is
    not restarted. Here no CPU is seen while asked; a stopped server is still hung."""
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 0.5)
    monkeypatch.setattr(falkordb_server, "cpu_ticks", lambda pid: 7)
    server = EmbeddedServer(tmp_path)
    with contextlib.closing(FalkorDBStore.embedded(server)):
        with _busy(server, seconds=2.0):
            assert server.answers()
        with _frozen(server):
            assert not server.answers()


def test_a_server_that_looks_hung_for_one_wait_only_is_not_taken_for_hung(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The end of a busy stretch looked like a hang for one wait (a fresh run restarted a
    server a Lua loop had held): a server is looked at twice before it is taken for hung."""
    server = EmbeddedServer(tmp_path)
    server.ensure_running()
    try:
        monkeypatch.setattr(falkordb_server, "cpu_ticks", lambda pid: 7)  # no CPU used
        monkeypatch.setattr(falkordb_server, "asleep", lambda pid: True)
        states = iter(["down", "ready"])
        monkeypatch.setattr(server, "_state", lambda: next(states))
        assert server.answers()
        monkeypatch.setattr(server, "_state", lambda: "down")
        assert not server.answers()
    finally:
        server.stop_if_unused()


def test_a_server_that_hangs_while_it_loads_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that neither answers nor uses CPU is hung, however long loads may take
    (FalkorDB once deadlocked after decoding a graph on reopen): not waited on for 30 min."""
    monkeypatch.setattr(falkordb_server, "_STALL_S", 1.0)
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 1.0)  # a stopped one: no reply
    _run(tmp_path, "alice", 0, 2)
    first = EmbeddedServer(tmp_path)
    first.ensure_running()
    try:
        with _frozen(first) as frozen:
            EmbeddedServer(tmp_path).ensure_running()
            assert int(first.pid_file.read_text(encoding="utf-8")) != frozen
            assert _facts(tmp_path, "alice") == ["Person 0", "Person 1"]
    finally:
        EmbeddedServer(tmp_path).stop_if_unused()


def test_a_server_asleep_with_no_cpu_is_taken_for_hung_within_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FalkorDB's deadlock while it loads leaves its main thread asleep: the wait for it ends
    after `_ASLEEP_S`, not the 30 s a silent server with no CPU is given otherwise (a CLI
    command waited 35 s for one on 2026-12-05). Here the server is stopped (SIGSTOP)."""
    monkeypatch.setattr(falkordb_server, "_STALL_S", 120.0)
    monkeypatch.setattr(falkordb_server, "_ASLEEP_S", 1.0)
    monkeypatch.setattr(falkordb_server, "_PING_TIMEOUT_S", 1.0)
    _run(tmp_path, "alice", 0, 2)
    first = EmbeddedServer(tmp_path)
    first.ensure_running()
    try:
        with _frozen(first) as frozen:
            started = time.monotonic()
            EmbeddedServer(tmp_path).ensure_running()
            assert time.monotonic() - started < 30
            assert int(first.pid_file.read_text(encoding="utf-8")) != frozen
            assert _facts(tmp_path, "alice") == ["Person 0", "Person 1"]
    finally:
        EmbeddedServer(tmp_path).stop_if_unused()


def test_a_process_waiting_for_an_event_is_asleep_and_a_running_one_is_not() -> None:
    sleeping = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    spinning = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(1.0)  # both started
        assert asleep(sleeping.pid)
        assert not asleep(spinning.pid)  # runnable, on a core or waiting for one
    finally:
        for child in (sleeping, spinning):
            child.kill()
            child.wait()
    assert not asleep(sleeping.pid)  # gone: unknown


def test_a_start_that_hangs_is_tried_once_more(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fresh server that hangs while it loads is killed and started again (here the first
    one is taken to answer nothing and to use no CPU)."""
    monkeypatch.setattr(falkordb_server, "_STALL_S", 0.5)
    monkeypatch.setattr(falkordb_server, "cpu_ticks", lambda pid: 7)
    answers = EmbeddedServer._state
    hung: list[int] = []  # the first server's pid, once its pid file is written

    def state(server: EmbeddedServer) -> str:
        pid = server._read_pid()
        if pid is None:  # the daemon has not written its pid file yet
            return "down"
        hung.append(hung[0] if hung else pid)
        return "down" if pid == hung[0] else answers(server)

    monkeypatch.setattr(EmbeddedServer, "_state", state)
    server = EmbeddedServer(tmp_path)
    try:
        server.ensure_running()
        assert hung and server._read_pid() not in (None, hung[0])
        assert _gone(hung[0])  # the hung one was killed
    finally:
        server.stop_if_unused()


def _gone(pid: int) -> bool:
    """No such process, or only its exit status is left (a zombie nobody reaped yet)."""
    try:
        return (
            Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
            == "Z"
        )
    except FileNotFoundError:
        return True


@contextlib.contextmanager
def _busy(server: EmbeddedServer, seconds: float) -> Iterator[None]:
    """The server's main thread held by a Lua loop for `seconds` of its CPU time (it answers
    nothing and uses a core) while the block runs; the loop has ended when the block is left.
    Not TIME: a script sees it frozen until the busy-reply threshold (5 s), after which redis
    answers every queued command BUSY; the threshold is raised for a loaded machine's sake."""
    loop = """
        local start = os.clock()
        while os.clock() - start < tonumber(ARGV[1]) do end
        return 1"""
    # the loop's own reply comes when it ends: later than redis-py's default read timeout
    # (5 s since 8.0) on a loaded machine, where 4 s of the loop's CPU take longer
    client = redis.Redis(unix_socket_path=str(server.socket_path), socket_timeout=60)
    client.config_set("busy-reply-threshold", 600_000)
    holding = threading.Thread(target=client.eval, args=(loop, 0, seconds))
    holding.start()
    _held(server)
    try:
        yield
    finally:
        holding.join()
        client.close()


def _held(server: EmbeddedServer) -> None:
    """Wait until the server stops answering a PING within 0.1 s (on a loaded machine the
    loop's thread may take a while to send it)."""
    probe = falkordb_server.single_try_client(server.socket_path, 0.1)
    deadline = time.monotonic() + 10
    try:
        while time.monotonic() < deadline:
            probe.ping()
            time.sleep(0.01)
    except redis.TimeoutError:
        return
    finally:
        probe.close()
    raise AssertionError("the server still answers: the loop never began")


@contextlib.contextmanager
def _frozen(server: EmbeddedServer) -> Iterator[int]:
    """The server stopped with SIGSTOP (it answers nothing, uses no CPU: as hung), its pid;
    killed afterwards, whatever graphmem did about it."""
    pid = int(server.pid_file.read_text(encoding="utf-8"))
    os.kill(pid, signal.SIGSTOP)
    try:
        yield pid
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
