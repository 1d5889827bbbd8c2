"""`graphmem ingest` names the command line's options in what it says (`--user`, `--format`),
where the Python API's errors name its own keywords (`user_id=`, `format=`). No store is
opened: the ingest itself is replaced by one that answers as the engine would."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from engine.cli import ingest_command, main
from engine.errors import InvalidInputError
from engine.ingest import CHAT_FORMATS
from engine.ingest.readers import resolve_format
from engine.ingest.report import IngestError, IngestProgress, IngestReport, IngestWarning
from engine.ingest.sources import check_user_choice


def _unknown_format(tmp_path: Path) -> str:
    """The engine's own error for a file of no format it can tell."""
    notes = tmp_path / "logs" / "notes.md"
    notes.parent.mkdir()
    notes.write_text("# my notes\n")
    with pytest.raises(InvalidInputError) as raised:
        resolve_format(notes)
    return str(raised.value)


def test_the_python_api_keeps_its_own_words(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError) as raised:
        check_user_choice(None, False, True)

    assert "user_id= (--user NAME)" in str(raised.value)
    assert "pass format= one of" in _unknown_format(tmp_path)


def test_ingest_without_a_user_names_the_cli_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It said "say whose memory...: user_id= (--user NAME) ... users_from_file=True"."""
    assert main(["--data-dir", str(tmp_path), "ingest", "chats.jsonl"]) == 2
    said = capsys.readouterr().err

    assert "--user NAME adds every message" in said and "; --users-from-file takes" in said
    assert "user_id=" not in said and "users_from_file=" not in said


def test_a_skipped_file_of_a_directory_names_the_format_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """It said "pass format= one of (...)" in the summary's warnings."""
    reason = f"{_unknown_format(tmp_path)}: skipped"
    report = IngestReport(warnings=[IngestWarning(path="notes.md", location="file", reason=reason)])
    monkeypatch.setattr(ingest_command, "_run", lambda args, watched: report)

    logs = str(tmp_path / "logs")
    assert main(["--data-dir", str(tmp_path), "ingest", logs, "--user", "u"]) == 0
    said = capsys.readouterr().out
    assert main(["--data-dir", str(tmp_path), "ingest", logs, "--user", "u", "--json"]) == 0
    as_json = capsys.readouterr().out

    assert "pass --format one of ('openai-jsonl'" in said and "format=" not in said
    assert "pass --format one of" in as_json and "format=" not in as_json
    assert "pass format= one of" in report.warnings[0].reason  # the API's report is its own


def test_a_file_of_no_known_format_names_the_format_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    message = _unknown_format(tmp_path)

    def refuse(args: argparse.Namespace, watched: object) -> IngestReport:
        raise InvalidInputError(message)

    monkeypatch.setattr(ingest_command, "_run", refuse)

    notes = str(tmp_path / "logs" / "notes.md")
    assert main(["--data-dir", str(tmp_path), "ingest", notes, "--user", "u"]) == 1
    said = capsys.readouterr().err.strip()
    assert said.startswith("graphmem: error: cannot tell the chat-log format of")
    assert said.endswith(f"pass --format one of {CHAT_FORMATS}")
    assert "'discord')" in said  # every format, the last one too


def test_a_path_that_does_not_exist_is_named_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It opened the store (a data dir made, a server started) and said that extraction was
    offline before it said the file was not there."""
    home, missing = tmp_path / "home", tmp_path / "nope.jsonl"

    status = main(["--data-dir", str(home), "ingest", str(missing), "--user", "u"])

    said = capsys.readouterr()
    assert (status, said.out) == (1, "")
    assert said.err.splitlines() == [f"graphmem: error: chat log {str(missing)!r} does not exist"]
    assert not home.exists()


def test_a_reader_of_the_progress_that_stops_does_not_stop_the_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`graphmem ingest ... 2>&1 | head -1`: the first progress line after the reader left
    raised BrokenPipeError out of the ingest, which stopped, stored nothing and exited 0."""
    error = IngestError(path="chat.csv", location="line 7", reason="content is empty", stage="read")

    def show(p: IngestProgress) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    def run(args: argparse.Namespace, watched: ingest_command._Watched) -> IngestReport:
        watched.show = show
        for n in range(1, 4):  # as the engine tells it, the ingest going on after the first
            watched(IngestProgress(total=3, done=n, messages_added=n, elapsed_s=n))
        return IngestReport(messages_added=watched.added, errors=[error])

    monkeypatch.setattr(ingest_command, "_run", run)
    chat = tmp_path / "chat.csv"
    chat.write_text("role,content\nuser,hi\n")

    assert main(["--data-dir", str(tmp_path), "ingest", str(chat), "--user", "u"]) == 1
    assert "added 3" in capsys.readouterr().out
