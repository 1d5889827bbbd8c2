"""One bad line never aborts a load: a line nested 100,000 deep (which makes Python's json
raise RecursionError) is reported as `file:line: reason` and every other line loads; the
command's exit status says whether anything failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import cli
from engine.memory import Memory

DEEP = "[" * 100_000 + "]" * 100_000
ROWS = [
    {"subject": "Kismet", "predicate": "directed_by", "object": "William Dieterle"},
    DEEP,
    {"subject": "Kismet", "predicate": "release_year", "object": "1944"},
    '{"subject": ' * 50_000,
    {"subject": "Kismet", "predicate": "starred_actors", "object": "Marlene Dietrich"},
]


def _jsonl(path: Path) -> Path:
    lines = [row if isinstance(row, str) else json.dumps(row) for row in ROWS]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_deeply_nested_line_is_reported_and_the_rest_loads(
    memory: Memory, tmp_path: Path
) -> None:
    path = _jsonl(tmp_path / "kb.jsonl")
    report = memory.load(path, "u1")
    assert (report.facts_added, report.error_count, report.lines_read) == (3, 2, 5)
    assert report.errors[0] == f"{path}:2: JSON nested too deeply (a triple is one flat object)"
    assert report.errors[1].startswith(f"{path}:4: ")
    assert memory.stats("u1").facts == 3


def test_load_exit_codes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = str(tmp_path / "home")
    good = tmp_path / "good.tsv"
    good.write_text("Kismet\tdirected_by\tWilliam Dieterle\n", encoding="utf-8")
    assert cli.main(["--data-dir", home, "load", str(good), "--user", "u1"]) == 0
    assert (
        cli.main(["--data-dir", home, "load", str(_jsonl(tmp_path / "kb.jsonl")), "--user", "u1"])
        == 1
    )
    err_out = capsys.readouterr()
    assert f"{tmp_path / 'kb.jsonl'}:2: JSON nested too deeply" in err_out.out
    assert "kb.jsonl: " not in err_out.out  # one location per error, never two
    assert cli.main(["--data-dir", home, "load", str(good)]) == 2  # no --user

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(Memory, "load", interrupted)
    capsys.readouterr()
    assert cli.main(["--data-dir", home, "load", str(good), "--user", "u1"]) == 130
    assert "run the same command again to resume" in capsys.readouterr().err
