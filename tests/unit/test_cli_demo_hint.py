"""The line `graphmem demo` ends with runs as printed: `make demo` starts .venv/bin/graphmem,
which is on no PATH until the venv is activated, and the line said `graphmem search ...`
(command not found). No store is needed: the demo's `Memory` is a stand-in."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from engine.cli import app, main
from engine.config import build_settings
from engine.models import AddResult, SearchResult


class _DemoMemory:
    """The calls `graphmem demo` makes of a `Memory`, answering with nothing found."""

    def __init__(self, data_dir: Path) -> None:
        self.settings = build_settings(data_dir=data_dir)

    def __enter__(self) -> _DemoMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def delete_all(self, user_id: str) -> int:
        return 0

    def add_facts(self, facts: Any, user_id: str) -> AddResult:
        return AddResult(user_id=user_id, facts_added=len(facts))

    def search(self, query: str, user_id: str, **_: Any) -> SearchResult:
        return SearchResult(query=query, user_id=user_id, timings_ms={"total": 1.0})

    def top_entities(self, user_id: str, k: int) -> list[Any]:
        return []


def _last_line(
    started: Path, path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> str:
    monkeypatch.setattr(app, "open_memory", lambda *a, **k: _DemoMemory(path / "data"))
    monkeypatch.setattr(sys, "argv", [str(started), "demo"])
    monkeypatch.setenv("PATH", str(path / "on-path"))
    assert main(["demo"]) == 0
    return capsys.readouterr().out.splitlines()[-1]


def _program(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "graphmem"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return program


def test_the_demo_names_the_program_by_its_path_when_no_path_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    venv_program = _program(tmp_path / "venv" / "bin")
    _program(tmp_path / "on-path")  # another graphmem comes first on PATH

    line = _last_line(venv_program, tmp_path, monkeypatch, capsys)

    assert line == (
        f"search it yourself: {venv_program} search 'who is Spider-Man?' --user demo-alice"
    )


def test_the_demo_names_the_program_graphmem_when_path_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    line = _last_line(_program(tmp_path / "on-path"), tmp_path, monkeypatch, capsys)

    assert line == "search it yourself: graphmem search 'who is Spider-Man?' --user demo-alice"
