"""What an import reads and for whom: the caller says both, the input chooses neither.

A `str` handed to `import_` is the document itself, never a path (an uploaded "export" saying
/etc/passwd opens nothing and its error tells nothing about the file system); a file is read
only from a `pathlib.Path`. Without `user_id` the import is refused, unless an admin restoring
a backup says `users_from_file=True`. A document larger than the machine can hold is refused
before it is read.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.errors import InvalidInputError, LimitExceededError
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer import import_limits
from engine.transfer.import_limits import ImportLimits


@pytest.fixture
def mem(store: GraphStore, embedder: Embedder, tmp_path: Path) -> Memory:
    return Memory(store=store, embedder=embedder, data_dir=tmp_path)


@pytest.fixture
def document(mem: Memory) -> str:
    """mallory's export (2 entities, 1 fact); her graph is left empty."""
    mem.add_facts([("Mal", "LIKES", "tea")], user_id="mallory")
    text = mem.export("mallory")
    mem.delete_all("mallory")
    return text


def _spy_on_files(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path `import_` asks the file system about from now on."""
    touched: list[str] = []
    for name in ("open", "stat", "read_bytes", "read_text", "exists"):
        real = getattr(Path, name)

        def spy(self: Path, *args: Any, _real: Any = real, **kwargs: Any) -> Any:
            touched.append(str(self))
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(Path, name, spy)
    return touched


def test_a_string_is_never_opened_as_a_path(
    mem: Memory, document: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "mallory.json"
    real.write_text(document, encoding="utf-8")
    touched = _spy_on_files(monkeypatch)
    errors = []
    for text in ("/etc/passwd", "/etc/no-such-file", str(real), "etc/passwd"):
        with pytest.raises(InvalidInputError) as refused:
            mem.import_(text, user_id="bob")
        errors.append(str(refused.value).replace(text, "PATH"))
    assert [t for t in touched if "passwd" in t or "no-such" in t or t == str(real)] == []
    assert len(set(errors)) == 1  # the same answer whether the path exists or not
    assert "No such file" not in errors[0] and "Permission" not in errors[0]
    assert "pathlib.Path" in errors[0]
    assert mem.stats("bob").entities == 0


def test_a_path_is_read_when_the_caller_passes_one(
    mem: Memory, document: str, tmp_path: Path
) -> None:
    real = tmp_path / "mallory.json"
    real.write_text(document, encoding="utf-8")
    assert mem.import_(real, user_id="bob").entities == 2
    with pytest.raises(InvalidInputError, match=r"cannot read .*missing\.json"):
        mem.import_(tmp_path / "missing.json", user_id="bob")


def test_an_import_without_a_user_is_refused(mem: Memory, document: str) -> None:
    with pytest.raises(InvalidInputError) as refused:
        mem.import_(document)
    assert "user_id" in str(refused.value) and "users_from_file=True" in str(refused.value)
    with pytest.raises(InvalidInputError, match="not both"):
        mem.import_(document, user_id="mallory", users_from_file=True)
    assert mem.stats("mallory").entities == 0


def test_users_from_file_restores_the_user_the_file_names(mem: Memory, document: str) -> None:
    report = mem.import_(document, users_from_file=True)
    assert (report.user_id, report.entities, report.facts) == ("mallory", 2, 1)
    assert [f.triple for f in mem.get_all("mallory")] == [("Mal", "LIKES", "tea")]
    assert mem.stats("bob").entities == 0


def test_a_deeply_nested_document_is_a_clear_error(mem: Memory) -> None:
    deep = '{"user_id": "x", "exported_at": 0, "entities": ' + "[" * 100_000 + "]" * 100_000
    with pytest.raises(InvalidInputError, match=r"not a valid graphmem export.*recursion"):
        mem.import_(deep + "}", user_id="bob")


def test_the_size_limit_follows_the_memory_available(
    mem: Memory, document: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    mib = 1024**2
    monkeypatch.setattr(import_limits, "available_memory", lambda: 48 * mib)
    limits = ImportLimits.from_settings(mem.settings)
    assert limits.max_bytes == mib and limits.max_records < 2_000_000
    padded = json.loads(document)
    padded["entities"][0]["aliases"] = ["x" * 500] * 4000  # ~2 MB
    with pytest.raises(LimitExceededError, match="the limit is 1048576 \\(max_import_bytes\\)"):
        mem.import_(json.dumps(padded), user_id="bob")
    assert import_limits.machine_limits(1 << 50) == (2 * 1024**3, 2_000_000)  # the ceilings


class _Endless(io.RawIOBase):
    """A stream that never ends (a pipe fed forever); counts what was read."""

    def __init__(self) -> None:
        self.read_bytes = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        view[:] = b" " * len(view)
        self.read_bytes += len(view)
        return len(view)


def test_standard_input_is_refused_once_over_the_limit() -> None:
    from engine.transfer.document import read_bounded

    limits = ImportLimits(1000, 10, 512, 4000, 32000)
    endless = _Endless()
    with pytest.raises(LimitExceededError, match="more than 1000 bytes; the limit is 1000"):
        read_bounded(io.BufferedReader(endless), limits, "standard input")
    assert endless.read_bytes < 64 * 1024
