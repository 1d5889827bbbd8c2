"""Which process is the embedded server of a data directory, recorded in the data directory.

`server.json` names the socket the server listens on, its pid and its process start time.
Every process reads the socket from there, whatever its own `TMPDIR` or `XDG_RUNTIME_DIR`,
so one data directory never gets two servers. A pid alone proves nothing (pids are reused):
a process is taken as the server only when its start time is the recorded one and it is a
redis-server listening on the recorded socket; graphmem never signals any other process.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.private_files import write_private

RECORD = "server.json"


@dataclass(frozen=True, slots=True)
class ServerRecord:
    """The server of one data directory: its socket, and once it answered, its process."""

    socket: str
    pid: int | None = None
    started: str | None = None  # the process's start time, as `start_time` reads it

    @classmethod
    def read(cls, data_dir: Path) -> ServerRecord | None:
        """The record in `data_dir`, or None when there is none (or it is unreadable)."""
        try:
            fields = json.loads((data_dir / RECORD).read_text())
            return cls(str(fields["socket"]), fields.get("pid"), fields.get("started"))
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def write(self, data_dir: Path) -> None:
        write_private(data_dir / RECORD, json.dumps(asdict(self)))

    def with_process(self, pid: int) -> ServerRecord:
        return ServerRecord(self.socket, pid, start_time(pid))


def _stat_fields(pid: int) -> list[str]:
    """Fields 3 on of `/proc/<pid>/stat` (field N is at N - 3). Raises OSError (gone, or not
    Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    # the command name (field 2) may hold spaces and parentheses: count after the last ")"
    return stat.rsplit(")", 1)[1].split()


def start_time(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot on Linux), or None if it is gone."""
    try:
        return _stat_fields(pid)[19]
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None  # Linux, and the process is gone
    except (OSError, IndexError):
        return None
    return _ps(pid, "lstart=")


def cpu_ticks(pid: int) -> int | None:
    """The CPU time process `pid` has used (clock ticks; Linux), or None if unknown."""
    try:
        fields = _stat_fields(pid)
        return int(fields[11]) + int(fields[12])  # utime + stime (fields 14 and 15)
    except (OSError, IndexError, ValueError):
        return None


def asleep(pid: int) -> bool:
    """Process `pid`'s main thread sleeps (waits for an event) or is stopped: it is not
    running, nor waiting for the disk (Linux; False when unknown)."""
    try:
        return _stat_fields(pid)[0] in ("S", "T", "t")
    except (OSError, IndexError):
        return False


def _command_line(pid: int) -> str | None:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except FileNotFoundError:
        if Path("/proc/self/stat").exists():
            return None
    except OSError:
        return None
    return _ps(pid, "command=")


def _ps(pid: int, field: str) -> str | None:
    """The `ps` field of `pid` where there is no /proc (macOS)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        done = subprocess.run(
            ["ps", "-o", field, "-p", str(pid)], capture_output=True, text=True, timeout=5
        )
        return done.stdout.strip() or None
    return None


def is_server(record: ServerRecord, pid: int | None = None) -> bool:
    """True when `pid` (default: the recorded one) is alive and is this record's server: a
    redis-server whose title names the recorded socket, started when the record says (a
    record without a start time, written before the server answered, skips that check)."""
    pid = pid if pid is not None else record.pid
    if pid is None or pid <= 0 or not alive(pid):
        return False
    if record.started is not None and pid == record.pid and start_time(pid) != record.started:
        return False
    command = _command_line(pid) or ""
    # redis-server sets its title to "<binary> unixsocket:<path>" just after it writes its pid
    # file; until then the title is its arguments
    names_socket = f"unixsocket:{record.socket}" in command or (
        f"--unixsocket {record.socket} " in command
    )
    return "redis-server" in command and names_socket


def alive(pid: int) -> bool:
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


def kill_server(record: ServerRecord, pid: int | None = None) -> bool:
    """SIGKILL the record's server; False (and no signal) when `pid` is not that server."""
    pid = pid if pid is not None else record.pid
    if pid is None or not is_server(record, pid):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return True
