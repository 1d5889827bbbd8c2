"""Files only their owner may read: the data directory, the database, logs, dead letters,
exports. A memory holds what people told an agent, so nothing graphmem writes is readable by
another local user, whatever the process umask is.

- directories graphmem creates are 0700, files 0600 (`private_dir`, `open_private`);
- a file is written only when it is ours: never through a symbolic link, never one another
  account owns (it would read what we write);
- a data directory is used only when it is ours and no one else can write into it
  (`prepare_data_dir`), and a directory another user could have prepared (the socket
  directory under the shared temp dir) only when it is ours alone (`check_private_dir`).
"""

from __future__ import annotations

import errno
import grp
import os
import pwd
import stat
from pathlib import Path
from typing import IO, Literal, NoReturn

from engine.errors import StoreUnavailableError

DIR_MODE = 0o700
FILE_MODE = 0o600
# what the embedded server and the ingest write into a data directory
DATA_FILES = (
    "falkordb.pid",
    "falkordb.log",
    "server.json",
    "server.lock",
    "dump.rdb",
    "dead_letters.jsonl",
)
AOF_DIR = "appendonlydir"
# what only a data directory holds: the append-only files, the dump an older version saved,
# the record of a server started there
STORE_FILES = (AOF_DIR, "dump.rdb", "server.json")


def private_dir(path: Path) -> Path:
    """Create `path` (and missing parents) as 0700; an existing one of ours loses any group
    and other bits. A directory owned by someone else is left as it is."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    _tighten(path, DIR_MODE)
    return path


def open_private(path: Path, mode: Literal["a", "w"]) -> IO[str]:
    """`path` opened for appending or writing as UTF-8 text, created 0600 (an existing file of
    ours is made 0600 too).

    Raises:
        PermissionError: `path` is a symbolic link, not a regular file, or another account's
            file (the message says which; nothing was written or truncated).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | (os.O_APPEND if mode == "a" else 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _refused(path, "it is a symbolic link") from exc
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(path, "it is not a regular file")
        if info.st_uid != os.getuid():
            raise _refused(path, f"it belongs to uid {info.st_uid}, not to you ({os.getuid()})")
        os.fchmod(fd, FILE_MODE)
        if mode == "w":
            os.ftruncate(fd, 0)
        return os.fdopen(fd, mode, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _refused(path: Path, problem: str) -> PermissionError:
    return PermissionError(errno.EPERM, f"refusing to write {str(path)!r}: {problem}")


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` as a 0600 file."""
    with open_private(path, "w") as handle:
        handle.write(text)


def prepare_data_dir(data_dir: Path) -> None:
    """Create `data_dir` (0700), or check that an existing one is usable: a directory of
    ours that no other account can write into (then made 0700), and writable by us.

    Raises:
        StoreUnavailableError: naming the directory and what is wrong with it.
    """
    try:
        data_dir.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    except FileExistsError:
        _unusable(data_dir, "it is not a directory")
    except OSError as exc:
        _unusable(data_dir, f"it cannot be created ({exc.strerror or exc})")
    info = os.stat(data_dir)
    if not stat.S_ISDIR(info.st_mode):
        _unusable(data_dir, "it is not a directory")
    if info.st_uid != os.getuid():
        _unusable(data_dir, f"it belongs to uid {info.st_uid}, not to you (uid {os.getuid()})")
    loose = info.st_mode & (0o022 if not _own_group(info.st_gid) else 0o002)
    if loose:
        who = "others" if loose & 0o002 else "the group"
        mode = f"{stat.S_IMODE(info.st_mode):04o}"
        _unusable(data_dir, f"its mode is {mode}: {who} can write into it")
    if not os.access(data_dir, os.W_OK | os.X_OK):
        _unusable(data_dir, "it is read-only for you")
    tighten_data_dir(data_dir)


def holds_store(data_dir: Path) -> bool:
    """True when `data_dir` holds an embedded store (`STORE_FILES`): an empty folder, or one
    of other files, is no data directory. One that cannot be looked into counts, so that
    opening it says what is wrong with it (`prepare_data_dir`)."""
    try:
        return any((data_dir / name).exists() for name in STORE_FILES)
    except PermissionError:
        return True


def _own_group(gid: int) -> bool:
    """True for the user's private group (Debian/Ubuntu give each user a group of their own
    and a umask that makes new directories group-writable)."""
    try:
        group, user = grp.getgrgid(gid), pwd.getpwuid(os.getuid())
    except KeyError:
        return False
    return (
        gid == os.getgid()
        and group.gr_name == user.pw_name
        and not set(group.gr_mem) - {user.pw_name}
    )


def _unusable(data_dir: Path, problem: str) -> NoReturn:
    raise StoreUnavailableError(
        f"cannot use the data directory {str(data_dir)!r}: {problem}. Choose another one "
        "(--data-dir, GRAPHMEM_HOME or GRAPHMEM_DATA_DIR) or fix this one."
    )


def tighten_data_dir(data_dir: Path) -> None:
    """Make what graphmem keeps in `data_dir` private, including files an older version left
    readable: the directory 0700, the server's files and the append-only files 0600."""
    private_dir(data_dir)
    for name in DATA_FILES:
        _tighten(data_dir / name, FILE_MODE)
    aof = data_dir / AOF_DIR
    if aof.is_dir() and not aof.is_symlink():
        _tighten(aof, DIR_MODE)
        for child in aof.iterdir():
            _tighten(child, FILE_MODE)


def check_private_dir(path: Path, purpose: str) -> None:
    """Refuse a directory that is not ours alone: a symlink, not a directory, owned by another
    user, or open to group or others.

    Raises:
        StoreUnavailableError: naming the directory and what is wrong with it.
    """
    info = os.lstat(path)
    problem = None
    if stat.S_ISLNK(info.st_mode):
        problem = "it is a symbolic link"
    elif not stat.S_ISDIR(info.st_mode):
        problem = "it is not a directory"
    elif info.st_uid != os.getuid():
        problem = f"it belongs to uid {info.st_uid}, not to you (uid {os.getuid()})"
    elif info.st_mode & 0o077:
        problem = f"its mode is {stat.S_IMODE(info.st_mode):04o}: group or others have access"
    if problem is not None:
        raise StoreUnavailableError(
            f"refusing {purpose} {str(path)!r}: {problem}. Another local user could stand in "
            "a server of their own there. Remove it (or set XDG_RUNTIME_DIR to a private "
            "directory) and try again."
        )


def _tighten(path: Path, mode: int) -> None:
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid():
        return
    if stat.S_IMODE(info.st_mode) & ~mode:
        os.chmod(path, stat.S_IMODE(info.st_mode) & mode)
