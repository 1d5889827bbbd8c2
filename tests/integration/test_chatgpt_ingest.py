"""A ChatGPT data export through `Memory.ingest` and `graphmem ingest`: exactly the messages of
the branches last shown are stored, in order, with their times, roles and conversations; a
rerun stores nothing new; the unpacked export folder is recognised."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.cli import main
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer.export import read_snapshot
from tests.chatgpt_export import LEFT_OUT, SHOWN, write_export


def stored(store: GraphStore, user: str) -> list[tuple[str | None, str, str, datetime]]:
    """The user's episodes in the order they were written: source, role, text, time."""
    episodes = sorted(read_snapshot(store, user).episodes, key=lambda e: e.created_at or 0.0)
    return [(e.source, e.role, e.content, datetime.fromtimestamp(e.ts, UTC)) for e in episodes]


def test_the_shown_messages_are_stored_in_order_once(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = write_export(tmp_path / "export")
    report = quiet_memory.ingest(path, user_id="ann", concurrency=1)

    assert report.formats == {str(path): "chatgpt"}
    assert (report.records_read, report.messages_added, report.errors) == (7, 7, [])
    assert [(w.location, w.reason) for w in report.warnings] == [("file", LEFT_OUT)]
    assert stored(store, "ann") == SHOWN
    episodes = read_snapshot(store, "ann").episodes
    sessions = {e.source: e.session_id for e in episodes}
    assert sessions == {s[0]: "conv-a" if s[0].startswith("a-") else "conv-b" for s in SHOWN}
    assert {e.speaker for e in episodes} == {None}
    titles = {json.loads(e.metadata or "{}").get("title") for e in episodes}
    assert titles == {"Moving to Lisbon", "Dinner ideas"}

    again = quiet_memory.ingest(path, user_id="ann", concurrency=1)

    assert (again.records_read, again.messages_added, again.messages_skipped) == (7, 0, 7)
    assert len(read_snapshot(store, "ann").episodes) == 7


def test_a_directory_with_an_export_is_detected_and_dry_run_counts(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = tmp_path / "downloads"
    path = write_export(folder / "chatgpt-export")
    report = quiet_memory.ingest(folder, user_id="ann", dry_run=True)

    assert report.formats == {str(path): "chatgpt"}
    assert (report.messages_pending, report.messages_added, report.errors) == (7, 0, [])
    reasons = [w.reason for w in report.warnings]
    assert reasons[1:] == [LEFT_OUT]
    assert reasons[0].startswith("a ChatGPT export: conversations.json is read, its 4 other")
    assert read_snapshot(store, "ann").episodes == []


def test_cli_ingests_an_export_folder(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "export"
    write_export(folder)
    command = ["--data-dir", str(cli_home), "ingest", str(folder), "--user", "ann", "--dry-run"]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "7 messages read from 1 ChatGPT export for user 'ann'" in out
    assert "would add 7, already stored 0, failed 0" in out
    assert f"{folder}/conversations.json: {LEFT_OUT}" in out

    assert main([*command, "--format", "chatgpt", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["formats"] == {f"{folder}/conversations.json": "chatgpt"}
    assert summary["messages_pending"] == 7
