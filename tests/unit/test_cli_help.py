"""What `graphmem --help` and each command's `--help` say: every argument of every command
has a help string, `--version` answers, and a server takes no `--json` (it prints no result).
No store is opened."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path

import pytest

from engine.cli import build_parser, main


def _arguments(
    parser: argparse.ArgumentParser, path: str = "graphmem"
) -> Iterator[tuple[str, argparse.Action]]:
    """Every action of `parser` and of its commands, each with the command it belongs to."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from ((path, command) for command in action._choices_actions)
            for name, command_parser in action.choices.items():
                yield from _arguments(command_parser, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


def test_every_argument_of_every_command_says_what_it_is() -> None:
    """`search`'s query, --user, --limit and --mode, `merge`'s KEEP and MERGE, `add --fact`
    and others showed no help at all."""
    silent = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, action in _arguments(build_parser())
        if not (action.help or "").strip()
    ]

    assert silent == []


def test_search_help_states_the_default_limit_and_what_each_mode_is(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["search", "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())

    assert "(default 10)" in said
    for mode in ("dual, the two below", "expansion, the graph walk", "semantic, the facts"):
        assert mode in said
    assert "episodes, none: messages only" in said


def test_add_ts_help_says_epoch_milliseconds_are_read_too(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["add", "--help"]) == 0

    assert "epoch seconds or milliseconds" in " ".join(capsys.readouterr().out.split())


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`graphmem --version` said "the following arguments are required: COMMAND"."""
    assert main(["--version"]) == 0

    assert capsys.readouterr().out.strip() == f"graphmem {version('graphmem')}"


def test_mcp_offers_no_json_option(capsys: pytest.CaptureFixture[str]) -> None:
    """A server prints no result to put in JSON: `graphmem mcp --help` listed a --json that
    did nothing."""
    assert main(["mcp", "--help"]) == 0
    assert "--json" not in capsys.readouterr().out

    assert main(["mcp", "--user", "u", "--json"]) == 2
    assert "unrecognized arguments: --json" in capsys.readouterr().err


def test_help_names_both_data_dir_variables(capsys: pytest.CaptureFixture[str]) -> None:
    """`GRAPHMEM_DATA_DIR` worked but only `GRAPHMEM_HOME` was named."""
    assert main(["--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert main(["users", "--help"]) == 0
    command = " ".join(capsys.readouterr().out.split())

    assert "GRAPHMEM_HOME (or GRAPHMEM_DATA_DIR)" in said
    assert "default ~/.graphmem, or GRAPHMEM_HOME or GRAPHMEM_DATA_DIR when set" in command


def test_every_command_help_says_what_the_command_does(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`graphmem search --help` (and demo, entities, entity, history, stats, users, stop,
    update, merge) listed the options with no word of what the command does: the line
    `graphmem --help` shows for it was said there only."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    unsaid = []
    for name, parser in commands.choices.items():
        assert main([name, "--help"]) == 0
        said = " ".join(capsys.readouterr().out.split())
        if not parser.description or " ".join(parser.description.split()) not in said:
            unsaid.append(name)

    assert unsaid == []
    assert main(["search", "--help"]) == 0
    assert "Search one user's memory." in capsys.readouterr().out


@pytest.mark.parametrize(
    ("command", "flags"),
    [
        ("search", ["--since", "--until"]),
        ("entity", ["--since", "--until"]),
        ("update", ["--valid-at", "--invalid-at"]),
        ("add", ["--ts"]),
    ],
)
def test_every_time_option_says_which_times_it_reads(command: str, flags: list[str]) -> None:
    """`search --since`, `entity --since` and `update --valid-at` did not say what a time is
    (`yesterday` is refused); only `add --ts` did."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    helps = {o: a.help or "" for a in commands.choices[command]._actions for o in a.option_strings}

    assert [f for f in flags if "ISO 8601, epoch seconds or milliseconds" not in helps[f]] == []


def _helps(command: str) -> dict[str, str]:
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    actions = commands.choices[command]._actions
    return {o: " ".join((a.help or "").split()) for a in actions for o in a.option_strings}


def test_import_json_says_it_shows_no_progress_as_load_and_ingest_say() -> None:
    """`import --json` turns its progress lines off, as `load --json` and `ingest --json`
    do and say; its help said only "machine-readable output"."""
    assert _helps("import")["--json"] == "print the report as JSON (no progress lines)"


def test_export_json_says_what_it_changes() -> None:
    """`export --json` was listed as "machine-readable output" and changed nothing: the
    document went out as --format said, and the line naming the file written stayed text."""
    said = _helps("export")["--json"]

    assert said.startswith("with -o: what was written, as JSON on standard output")


def test_the_global_json_is_refused_by_the_server_as_its_own_is(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`graphmem --json mcp` started the server, the --json said nothing; `graphmem mcp
    --json` is a usage error."""
    args = ["--data-dir", str(tmp_path / "home"), "--json", "mcp", "--user", "u"]
    assert main([*args, "--print-token"]) == 2

    said = capsys.readouterr()
    assert said.out == "" and "--json: graphmem mcp prints no result" in said.err
    assert not (tmp_path / "home").exists()
    assert "every command but mcp" in _global_help("--json")


def _global_help(flag: str) -> str:
    return next(" ".join((a.help or "").split()) for a in build_parser()._actions
                if flag in a.option_strings)  # fmt: skip


def test_demo_help_says_whose_memory_it_replaces(capsys: pytest.CaptureFixture[str]) -> None:
    """`graphmem demo` deletes user demo-alice's memory before it stores the example; its
    help said only "store a small example graph and search it"."""
    assert main(["demo", "--help"]) == 0
    said = " ".join(capsys.readouterr().out.split())

    assert "user demo-alice" in said and "replaced" in said


def test_commands_are_listed_in_the_order_a_newcomer_uses_them() -> None:
    """First the demo and remembering, then reading, changing, bulk work and serving; `add`
    came next to last, after the server and the bulk loaders."""
    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    listed = [action.dest for action in commands._choices_actions]

    assert listed[:3] == ["demo", "add", "search"]
    assert listed.index("mcp") > listed.index("ingest") > listed.index("merge")
    assert listed[-1] == "stop"
