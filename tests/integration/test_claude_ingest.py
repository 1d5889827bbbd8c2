"""A Claude.ai data export through `Memory.ingest` and `graphmem ingest`: exactly the messages
with text are stored, in order, with their times, roles and conversations; a rerun stores
nothing new; the unpacked export folder is recognised beside a ChatGPT one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli import main
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer.export import read_snapshot
from tests import chatgpt_export
from tests.claude_export import LEFT_OUT, SHOWN, write_export


def stored(store: GraphStore, user: str) -> list[tuple[str | None, str, str, float, str]]:
    """The user's episodes in the order they were written: source, role, text, time (to the
    millisecond: FalkorDB gives an epoch time back to 15 digits, 10 µs), session."""
    episodes = sorted(read_snapshot(store, user).episodes, key=lambda e: e.created_at or 0.0)
    return [(e.source, e.role, e.content, round(e.ts, 3), e.session_id) for e in episodes]


def shown() -> list[tuple[str, str, str, float, str]]:
    return [(m, role, text, round(ts.timestamp(), 3), s) for m, role, text, ts, s in SHOWN]


def test_the_messages_with_text_are_stored_in_order_once(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = write_export(tmp_path / "export")
    report = quiet_memory.ingest(path, user_id="ann", concurrency=1)

    assert report.formats == {str(path): "claude"}
    assert (report.records_read, report.messages_added, report.errors) == (5, 5, [])
    assert [(w.location, w.reason) for w in report.warnings] == [("file", LEFT_OUT)]
    assert stored(store, "ann") == shown()
    episodes = read_snapshot(store, "ann").episodes
    assert {e.speaker for e in episodes} == {None}
    titles = {e.source: json.loads(e.metadata or "{}").get("title") for e in episodes}
    assert titles == {s[0]: "Trip to Kyoto" if s[0].startswith("k-") else None for s in SHOWN}

    again = quiet_memory.ingest(path, user_id="ann", concurrency=1)

    assert (again.records_read, again.messages_added, again.messages_skipped) == (5, 0, 5)
    assert len(read_snapshot(store, "ann").episodes) == 5


def test_a_directory_with_a_claude_and_a_chatgpt_export_reads_both(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = tmp_path / "downloads"
    claude = write_export(folder / "claude")
    chatgpt = chatgpt_export.write_export(folder / "chatgpt")
    report = quiet_memory.ingest(folder, user_id="ann", dry_run=True)

    assert report.formats == {str(chatgpt): "chatgpt", str(claude): "claude"}
    pending = len(SHOWN) + len(chatgpt_export.SHOWN)
    assert (report.messages_pending, report.messages_added, report.errors) == (pending, 0, [])
    assert LEFT_OUT in [w.reason for w in report.warnings]
    assert read_snapshot(store, "ann").episodes == []


def test_cli_ingests_an_export_folder(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "export"
    write_export(folder)
    command = ["--data-dir", str(cli_home), "ingest", str(folder), "--user", "ann", "--dry-run"]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "5 messages read from 1 Claude export for user 'ann'" in out
    assert "would add 5, already stored 0, failed 0" in out
    assert f"{folder}/conversations.json: {LEFT_OUT}" in out
    assert "a Claude export: conversations.json is read, its 2 other files" in out

    assert main([*command, "--format", "claude", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["formats"] == {f"{folder}/conversations.json": "claude"}
    assert summary["messages_pending"] == 5
