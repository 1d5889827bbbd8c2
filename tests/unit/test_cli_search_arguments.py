"""A search's own arguments are checked where the command line is read: a blank query, a
time no door reads, a window whose `--since` is later than its `--until` and a user id no
door takes are usage errors (status 2) in one line, before any store opens, as a bad
`--limit` or `--mode` is (they were status 1, said by the store's `Memory`, or, for `--since
1e400`, a time the CLI took and the engine then refused). So is blank text any command needs
(a message, an id, a name, a file): `add "   "` was status 1 where `search ""` was 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cli import main
from engine.cli.arg_types import when

BAD = {
    "empty query": (["search", "", "--user", "u"], "argument query", "empty"),
    "blank query": (["search", " \t\n", "--user", "u"], "argument query", "empty"),
    "infinite since": (["search", "q", "--user", "u", "--since", "1e400"], "--since", "1e400"),
    "nan until": (["search", "q", "--user", "u", "--until", "nan"], "--until", "nan"),
    "empty user": (["search", "q", "--user", ""], "argument --user", "empty"),
    "spaced user": (["search", "q", "--user", " u"], "argument --user", "canonical"),
    "entity spaced user": (["entity", "John", "--user", "u "], "argument --user", "canonical"),
    "entity nan since": (["entity", "John", "--user", "u", "--since", "nan"], "--since", "nan"),
    "swapped window": (
        ["search", "q", "--user", "u", "--since", "2024-05-02", "--until", "2024-05-01"],
        "since (2024-05-02T00:00:00Z)",
        "is later than until (2024-05-01T00:00:00Z)",
    ),
    "near in semantic mode": (
        ["search", "q", "--user", "u", "--near", "Kate", "--mode", "semantic"],
        "search: --near anchors the graph walk",
        "not with --mode semantic",
    ),
    "entity swapped window": (
        ["entity", "John", "--user", "u", "--since", "1714608000", "--until", "2024-05-01"],
        "since (2024-05-02T00:00:00Z)",
        "is later than until (2024-05-01T00:00:00Z)",
    ),
}


@pytest.mark.parametrize("argv, names, says", BAD.values(), ids=list(BAD))
def test_a_bad_search_argument_is_a_usage_error_before_any_store_opens(
    argv: list[str], names: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert names in error and says in error, error
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened


BLANK = {
    "add text": (["add", "   ", "--user", "u"], "argument TEXT"),
    "add fact": (["add", "--fact", "Ann", "", "Oslo", "--user", "u"], "argument --fact"),
    "update": (["update", " ", "--text", "x", "--user", "u"], "argument FACT_UID"),
    "delete fact": (["delete", "fact", "", "--user", "u"], "argument ID"),
    "delete entity": (["delete", "entity", "", "--user", "u"], "argument ID"),
    "merge keep": (["merge", "", "Bob", "--user", "u"], "argument KEEP"),
    "merge merge": (["merge", "Bob", "\t", "--user", "u"], "argument MERGE"),
    "entity": (["entity", " ", "--user", "u"], "argument NAME"),
    "history": (["history", "", "--user", "u"], "argument UID"),
    "load": (["load", "", "--user", "u"], "argument FILE"),
    "import": (["import", "", "--user", "u"], "argument FILE"),
    "ingest": (["ingest", "", "--user", "u"], "argument PATH"),
    "search": (["search", "", "--user", "u"], "argument query"),
}


@pytest.mark.parametrize("argv, names", BLANK.values(), ids=list(BLANK))
def test_blank_text_a_command_needs_is_a_usage_error_naming_the_argument(
    argv: list[str], names: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), *argv]) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{names}: " in error and "is empty or only whitespace" in error, error
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened


BLANK_OPTION = {
    "add --speaker": (["add", "hi", "--user", "u", "--speaker", ""], "argument --speaker"),
    "add --session": (["add", "hi", "--user", "u", "--session", " "], "argument --session"),
    "update --text": (["update", "f1", "--user", "u", "--text", ""], "argument --text"),
    "browse --entity": (["browse", "--user", "u", "--entity", "\t"], "argument --entity"),
    "export --output": (["export", "--user", "u", "-o", ""], "argument -o/--output"),
    "--data-dir first": (["--data-dir", "", "users"], "argument --data-dir"),
    "--data-dir after": (["users", "--data-dir", " "], "argument --data-dir"),
    "mcp --host": (["mcp", "--user", "u", "--host", ""], "argument --host"),
}


@pytest.mark.parametrize("argv, names", BLANK_OPTION.values(), ids=list(BLANK_OPTION))
def test_a_blank_optional_text_given_is_a_usage_error_naming_the_option(
    argv: list[str],
    names: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An option left out is fine; one given blank was taken as left out (`--data-dir ""`: the
    default data dir; `mcp --http --host ""`: every interface) or refused with status 1, most
    after the store opened, in the engine's words (`add --session " "`: "session_id is
    empty")."""
    monkeypatch.setenv("GRAPHMEM_DATA_DIR", str(tmp_path))
    assert main(argv) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{names}: " in error and "is empty or only whitespace" in error, error
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened


def test_every_time_the_engine_reads_is_read_on_the_command_line_too() -> None:
    """The CLI read ISO 8601 and epoch seconds only; the API and MCP read more forms."""
    assert when("29.12.2023, 22:42:04") == when("2023-12-29T22:42:04Z")
    assert when("1714550400000") == when("1714550400")


def test_merging_a_name_into_itself_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", str(tmp_path), "merge", "Ann", "ann", "--user", "u"]) == 2
    assert "KEEP and MERGE name one entity" in capsys.readouterr().err
    assert not (tmp_path / "falkordb.sock").exists()  # refused before any store was opened
