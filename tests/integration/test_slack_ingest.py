"""A Slack workspace export through `Memory.ingest` and `graphmem ingest`: exactly the
messages people wrote are stored, in time order, with their speakers, channels and threads; a
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
from tests.slack_export import LEFT_OUT, SHOWN, days, write_export


def stored(store: GraphStore, user: str) -> list[tuple[str | None, ...]]:
    """The user's episodes in the order they were written: source, speaker, text, time,
    session, channel, thread."""
    episodes = sorted(read_snapshot(store, user).episodes, key=lambda e: e.created_at or 0.0)
    return [
        (
            e.source,
            e.speaker,
            e.content,
            datetime.fromtimestamp(e.ts, UTC).isoformat(),
            e.session_id,
            json.loads(e.metadata or "{}").get("channel"),
            json.loads(e.metadata or "{}").get("thread_ts"),
        )
        for e in episodes
    ]


def expected() -> list[tuple[str | None, ...]]:
    """`SHOWN` as stored: in time order, each in its channel's session."""
    in_time = sorted(SHOWN, key=lambda s: s[3])
    return [
        (source, who, text, ts.isoformat(), source.split(":")[0], channel, thread)
        for source, who, text, ts, channel, thread in in_time
    ]


def test_the_messages_people_wrote_are_stored_in_time_order_once(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = write_export(tmp_path / "slack-export")
    report = quiet_memory.ingest(folder, user_id="team", concurrency=1)

    assert report.formats == {str(folder): "slack"}
    assert (report.records_read, report.messages_added, report.errors) == (5, 5, [])
    assert [(w.path, w.location, w.reason) for w in report.warnings] == [
        (str(folder), "file", LEFT_OUT)
    ]
    assert stored(store, "team") == expected()
    assert {e.role for e in read_snapshot(store, "team").episodes} == {"user"}

    again = quiet_memory.ingest(folder, user_id="team", concurrency=1)

    assert (again.records_read, again.messages_added, again.messages_skipped) == (5, 0, 5)
    assert len(read_snapshot(store, "team").episodes) == 5


def test_a_directory_holding_an_export_is_detected_and_dry_run_counts(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = write_export(tmp_path / "downloads" / "acme-slack")
    report = quiet_memory.ingest(tmp_path / "downloads", user_id="team", dry_run=True)

    assert report.formats == {str(folder): "slack"}
    assert (report.messages_pending, report.messages_added, report.errors) == (5, 0, [])
    assert [w.reason for w in report.warnings] == [LEFT_OUT]
    assert read_snapshot(store, "team").episodes == []


def test_users_from_the_file_is_refused_per_message(quiet_memory: Memory, tmp_path: Path) -> None:
    report = quiet_memory.ingest(write_export(tmp_path / "e"), users_from_file=True, dry_run=True)
    assert report.messages_pending == 0
    assert {e.reason for e in report.errors} == {"the record names no user; pass user_id= (--user)"}


def test_cli_ingests_an_export_folder(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_export(tmp_path / "export")
    command = ["--data-dir", str(cli_home), "ingest", str(folder), "--user", "team", "--dry-run"]
    assert main(command) == 0
    out, err = capsys.readouterr()
    # a dry run shows its reading as a real run does, on stderr
    assert f"ingest: reading {folder}, 0 messages read so far" in err
    assert "ingest: read 5 messages in " in err
    assert "5 messages read from 1 Slack export (3 day files) for user 'team'" in out
    assert "would add 5, already stored 0, failed 0" in out
    assert f"{folder}: {LEFT_OUT}" in out

    assert main([*command, "--format", "slack", "--json"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert "ingest:" not in err
    assert summary["formats"] == {str(folder): "slack"}
    assert (summary["files"], summary["day_files"]) == ([str(folder)], {str(folder): 3})
    assert summary["messages_pending"] == 5


def test_a_message_of_another_channel_at_the_same_ts_is_another_message(
    quiet_memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    """Slack's ts is unique per channel only: a message is its channel and ts (`source`), so
    the same words at the same ts in #trips (a cross-post) are stored beside #general's, and
    a rerun stores neither again."""
    general = days()["general/2024-05-03.json"]
    (cats,) = [m for m in general if m.get("user") == "U03CAT"]
    trips = [*days()["trips/2024-05-03.json"], cats]
    folder = write_export(tmp_path / "e", {"trips/2024-05-03.json": trips})

    report = quiet_memory.ingest(folder, user_id="team", concurrency=1)
    again = quiet_memory.ingest(folder, user_id="team", concurrency=1)

    assert (report.messages_added, report.messages_skipped) == (6, 0)
    assert (again.messages_added, again.messages_skipped) == (0, 6)
    sources = [e.source for e in read_snapshot(store, "team").episodes]
    assert sorted(s for s in sources if s.endswith(cats["ts"])) == [
        f"C01GEN:{cats['ts']}",
        f"C02TRIP:{cats['ts']}",
    ]
