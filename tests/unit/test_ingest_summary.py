"""The summary says what was read as the user knows it: files, and exports with their parts."""

from __future__ import annotations

from pathlib import Path

from engine.ingest.chat_records import ChatRecord
from engine.ingest.report import IngestReport, summary_text
from engine.ingest.sources import collect
from tests.slack_export import write_export


def source_key(record: ChatRecord, user: str) -> tuple[str, ...]:
    return (f"{user}:{record.source}",)


def test_a_slack_export_is_counted_with_its_day_files(tmp_path: Path) -> None:
    folder = str(write_export(tmp_path / "export"))
    collected = collect(folder, "auto", "team", source_key)
    assert (collected.files, collected.day_files) == ([folder], {folder: 3})


def test_the_summary_names_exports_and_files() -> None:
    slack = IngestReport(
        files=["export"], formats={"export": "slack"}, day_files={"export": 180}, records_read=9
    )
    mixed = IngestReport(
        files=["a.jsonl", "b.csv", "gpt/conversations.json"],
        formats={"a.jsonl": "openai-jsonl", "b.csv": "csv", "gpt/conversations.json": "chatgpt"},
    )
    first = summary_text(slack).splitlines()[0]
    assert first.startswith("9 messages read from 1 Slack export (180 day files) for no user")
    assert "read from 2 files and 1 ChatGPT export for" in summary_text(mixed)
    assert "read from 0 files for" in summary_text(IngestReport())


def test_one_changed_message_is_said_in_the_singular() -> None:
    one = summary_text(IngestReport(records_read=7, messages_skipped=7, messages_changed=1))
    three = summary_text(IngestReport(records_read=7, messages_skipped=7, messages_changed=3))
    assert (
        "1 message changed since it was stored (edited, or a name it mentions renamed): "
        "kept as stored" in one
    )
    assert (
        "3 messages changed since they were stored (edited, or a name they mention renamed): "
        "kept as stored" in three
    )


def test_one_message_read_is_said_in_the_singular() -> None:
    one = IngestReport(files=["a.jsonl"], formats={"a.jsonl": "openai-jsonl"}, records_read=1)
    assert summary_text(one).startswith("1 message read from 1 file for")


def test_messages_pending_says_what_it_is_after_a_real_run() -> None:
    """It said "dry run: messages a real run would add", yet a real run fills it too (6 after
    ingesting 6 new messages): the messages it set out to add, each added or failed."""
    said = IngestReport.model_fields["messages_pending"].description or ""

    assert not said.startswith("dry run:")
    assert "a real run tried each (messages_added + messages_failed" in said
