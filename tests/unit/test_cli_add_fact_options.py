"""`graphmem add --fact ... --ts 2019-01-01` stored the fact undated, dropping the time it
was given without a word (so did `--speaker` and `--session`): an option the chosen form of
`add` does not use is a usage error (status 2) before any store opens, and a fact's time has
its own option, `--valid-at`."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main

FACT = ["add", "--fact", "Dana", "WORKS_AT", "Acme", "--user", "u"]
UNUSED = {
    "fact --ts": ([*FACT, "--ts", "2019-01-01"], "--ts is for a message"),
    "fact --speaker": ([*FACT, "--speaker", "Bob"], "--speaker is for a message"),
    "fact --session": ([*FACT, "--session", "s1"], "--session is for a message"),
    "text --valid-at": (["add", "hi", "--user", "u", "--valid-at", "2019-01-01"], "--valid-at"),
}


@pytest.mark.parametrize("argv, says", UNUSED.values(), ids=list(UNUSED))
def test_an_option_add_would_not_use_is_a_usage_error_naming_it(
    argv: list[str], says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("graphmem: error: add: ") and says in error, error
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened


def test_a_bad_valid_at_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), *FACT, "--valid-at", "someday"]) == 2
    assert "argument --valid-at: 'someday' is no time" in capsys.readouterr().err
