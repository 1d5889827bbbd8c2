"""Where an interrupted load resumes: a small JSON file per (file, user) in the data dir.

Counting needs no checkpoint: a rerun reads which facts are stored and skips them, and an
entity that holds the load's mark gets no mentions twice (`engine.load.plan`), so a rerun
without its checkpoint (the file touched since, `--restart`, another chunk size) writes the
entities again without counting them again. The checkpoint saves that work: the file is
replaced atomically after every committed chunk of entities, and marked done when the whole
load is stored. A load holds its checkpoint's lock from start to end, so a second load of the
same file for the same user (another process) waits for it and then finds it done.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from engine.private_files import open_private, private_dir, write_private

_HEAD_BYTES = 1 << 16


@dataclass(slots=True)
class LoadState:
    identity: str  # the file's size, time, first 64 KiB and how it is read: another starts afresh
    user_id: str
    entity_chunk: int
    entities_done: int = 0  # chunks of entities committed
    entities_complete: bool = False
    done: bool = False


def file_identity(path: Path, reading: str) -> str:
    """What a finished load of `path` read as `reading` (its format and separator) is known
    by: the same file read another way (the separator its bad lines named) is another load."""
    stat = path.stat()
    digest = hashlib.sha256(f"{stat.st_size} {stat.st_mtime_ns}\x1f{reading}".encode())
    with path.open("rb") as handle:
        digest.update(handle.read(_HEAD_BYTES))
    return digest.hexdigest()


def state_path(data_dir: Path, path: Path, user_id: str) -> Path:
    key = hashlib.sha256(f"{path.resolve()}\x1f{user_id}".encode()).hexdigest()[:24]
    return data_dir / "loads" / f"{key}.json"


def read_state(where: Path, identity: str, user_id: str, entity_chunk: int) -> LoadState | None:
    """The saved state of this load, or None when there is none or it is of another file."""
    try:
        saved = LoadState(**json.loads(where.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    same = (saved.identity, saved.user_id, saved.entity_chunk) == (identity, user_id, entity_chunk)
    return saved if same else None


def save_state(where: Path, state: LoadState) -> None:
    """Replace the saved state atomically; the file is 0600 in a 0700 directory (a
    checkpoint names the file loaded and the user)."""
    private_dir(where.parent)
    temporary = where.with_suffix(".tmp")
    write_private(temporary, json.dumps(asdict(state)))
    os.replace(temporary, where)


@contextlib.contextmanager
def one_load_at_a_time(where: Path) -> Iterator[None]:
    """Held around a whole load of the checkpoint `where`: two loads of one file for one user
    at once both found no checkpoint and wrote every entity twice (their mentions doubled)."""
    private_dir(where.parent)
    with open_private(where.with_suffix(".lock"), "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
