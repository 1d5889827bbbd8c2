"""Numbers on the command line are checked where they are read: a count below 1 is a usage
error in one line (status 2), never a validation dump or a database's complaint."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main

BAD_COUNTS = [
    ["ingest", "chat.jsonl", "--user", "u", "--concurrency", "0"],
    ["ingest", "chat.jsonl", "--user", "u", "--concurrency", "100000"],
    ["search", "q", "--user", "u", "--limit", "0"],
    ["entities", "--user", "u", "--limit", "-1"],
    ["entity", "John", "--user", "u", "--limit", "-1"],
    ["load", "kb.tsv", "--user", "u", "--chunk-size", "0"],
    ["demo", "--limit", "two"],
]


@pytest.mark.parametrize("argv", BAD_COUNTS, ids=lambda argv: " ".join(argv[:1] + argv[-2:]))
def test_a_count_out_of_range_is_a_usage_error_in_one_line(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"argument {argv[-2]}" in error and "pydantic" not in error
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened


def test_update_with_nothing_to_change_is_a_usage_error_naming_the_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`graphmem update UID --user u` with no change asked is a wrong command line (2), said
    in the CLI's option names, before any store opens (it said `text, valid_at or invalid_at`,
    the Python names, with status 1)."""
    assert main(["--data-dir", str(tmp_path), "update", "f1", "--user", "u"]) == 2
    error = capsys.readouterr().err.strip()
    assert error == "graphmem: error: update: give --text, --valid-at or --invalid-at"
    assert not (tmp_path / "falkordb.sock").exists()


@pytest.mark.parametrize("delimiter", [";;", "", '"'])
def test_a_bad_csv_delimiter_is_a_usage_error_before_any_store_opens(
    delimiter: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/ingest.md, Exit status: a bad option is 2. `--delimiter ';;'` opened the store and
    failed with status 1."""
    chat = tmp_path / "chat.csv"
    chat.write_text("role;content\nuser;hi\n")
    home = tmp_path / "home"
    argv = ["ingest", str(chat), "--user", "u", "--delimiter", delimiter, "--dry-run"]
    assert main(["--data-dir", str(home), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "argument --delimiter: the CSV delimiter must be one character" in error
    assert not home.exists()
