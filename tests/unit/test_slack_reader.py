"""The Slack export reader: the messages people wrote, channel by channel and day by day, with
their speakers, times, channels and threads; what is left out and counted; markup made
readable; stable ids; faults located in their day file; auto-detection of the folder."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.errors import InvalidInputError
from engine.ingest import read_chat_log
from engine.ingest.folders import chat_logs
from engine.ingest.readers import resolve_format
from engine.ingest.slack import slack_time
from engine.ingest.slack_text import Names, readable
from tests.slack_export import CHANNELS, DAY1, LEFT_OUT, SHOWN, days, message, write_export


def read(folder: Path, **options: Any) -> Any:
    return read_chat_log(folder, **({"format": "slack", "user_id": "ann"} | options))


def shown(records: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r.source, r.speaker, r.content, r.ts, r.metadata["channel"], r.metadata.get("thread_ts"))
        for r in records
    ]


def test_the_messages_people_wrote_are_read_with_speakers_times_and_channels(
    tmp_path: Path,
) -> None:
    result = read(write_export(tmp_path))

    assert result.errors == []
    assert shown(result.records) == SHOWN
    assert [r.session_id for r in result.records] == ["C01GEN"] * 4 + ["C02TRIP"]
    assert [r.conversation_id for r in result.records] == ["C01GEN"] * 4 + ["C02TRIP"]
    assert {(r.user_id, r.role) for r in result.records} == {("ann", "user")}
    assert not any(r.positional for r in result.records)  # channel and ts: Slack's own id
    assert all(r.exported_id for r in result.records)


def test_system_bot_deleted_and_empty_messages_are_counted_in_one_warning(
    tmp_path: Path,
) -> None:
    folder = write_export(tmp_path)
    [warning] = read(folder).warnings
    assert (warning.path, warning.location, warning.reason) == (str(folder), "file", LEFT_OUT)


def test_the_export_names_no_graphmem_user(tmp_path: Path) -> None:
    result = read_chat_log(write_export(tmp_path), format="slack")
    assert {r.user_id for r in result.records} == {None}


def test_records_keep_their_checksums_when_a_later_export_holds_more_days(
    tmp_path: Path,
) -> None:
    old = read(write_export(tmp_path / "old")).records
    later = {"general/2024-05-05.json": [message("U02BOB", "Train booked.", f"{DAY1 + 2e5:.6f}")]}
    new = read(write_export(tmp_path / "new", later)).records

    assert [r.checksum for r in new[:4] + new[5:]] == [r.checksum for r in old]
    assert new[4].content == "Train booked."
    assert len({r.checksum for r in new}) == len(new)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<@U1> and <@U2|bobby> and <@U9>", "@Ann Lee and @bobby and @U9"),
        ("in <#C1|general> and <#C1> and <#C7>", "in #general and #general and #C7"),
        ("<https://x.org/a|the notes>", "the notes (https://x.org/a)"),
        ("<https://x.org/a> or <https://x.org|x.org>", "https://x.org/a or https://x.org"),
        ("<mailto:ann@x.org|ann@x.org> <mailto:ann@x.org|Ann>", "ann@x.org Ann (mailto:ann@x.org)"),
        ("<!here> <!channel> <!subteam^S1|@design>", "@here @channel @design"),
        ("<!date^1714723200^{date}|May 3rd>", "May 3rd"),
        ("a &lt;b&gt; &amp;amp; c", "a <b> &amp; c"),
        ("no markup <3", "no markup <3"),
    ],
)
def test_markup_is_made_readable(text: str, expected: str) -> None:
    names = Names(users={"U1": "Ann Lee", "U2": ""}, channels={"C1": "general"})
    assert readable(text, names) == expected


def test_a_slack_time_is_read_to_the_microsecond() -> None:
    assert slack_time("1714723260.000100") == datetime(2024, 5, 3, 8, 1, 0, 100, UTC)
    assert slack_time("1714723260") == datetime(2024, 5, 3, 8, 1, tzinfo=UTC)
    with pytest.raises(InvalidInputError) as caught:
        slack_time(1714723260.0001)
    assert "is not a Slack time" in str(caught.value)


def test_a_message_that_cannot_be_read_is_an_error_naming_its_day_file_and_record(
    tmp_path: Path,
) -> None:
    trips = days()["trips/2024-05-03.json"]
    bad = [message("U02BOB", "no time", "yesterday"), message(None, "who?", "1714730000.1")]
    folder = write_export(tmp_path, {"trips/2024-05-03.json": [*bad, *trips]})
    result = read(folder)

    day = str(folder / "trips" / "2024-05-03.json")
    assert [str(e) for e in result.errors] == [
        f"{day}: record 1: ts 'yesterday' is not a Slack time ('1714700000.000100')",
        f"{day}: record 2: no user: who wrote it cannot be told",
    ]
    assert shown(result.records) == SHOWN


def test_an_invalid_day_file_is_one_error_and_the_other_days_read(tmp_path: Path) -> None:
    folder = write_export(tmp_path, {"general/2024-05-04.json": '[{"type": "message", "te'})
    result = read(folder)

    [error] = result.errors
    assert error.path == str(folder / "general" / "2024-05-04.json")
    assert (error.location, error.reason.split(":")[0]) == ("record 1", "invalid JSON")
    assert shown(result.records) == SHOWN[:3] + SHOWN[4:]


def test_a_user_nowhere_named_speaks_under_the_id_with_one_warning(tmp_path: Path) -> None:
    said = [message("U07DAN", "ok", f"{DAY1 + 800}.0"), message("U07DAN", "ok!", f"{DAY1 + 801}.0")]
    result = read(write_export(tmp_path, {"trips/2024-05-04.json": said}))

    assert [(r.speaker, r.content) for r in result.records[-2:]] == [
        ("U07DAN", "ok"),
        ("U07DAN", "ok!"),
    ]
    [warning] = [w for w in result.warnings if w.location != "file"]
    assert warning.path.endswith("2024-05-04.json") and warning.location == "record 1"
    assert "user 'U07DAN' is not in users.json" in warning.reason


def test_a_broken_users_list_is_named_and_speakers_fall_back(tmp_path: Path) -> None:
    folder = write_export(tmp_path, {"users.json": {"members": []}})
    result = read(folder)

    [error] = result.errors
    assert str(error) == f"{folder}/users.json: expected a JSON list of users, got dict"
    speakers = [r.speaker for r in result.records]
    assert speakers == ["U01ANN", "U02BOB", "Cat Diaz", "U01ANN", "U02BOB"]
    assert result.records[0].content.startswith("Hi @U02BOB,")


def test_a_missing_users_list_is_named_and_the_channels_still_read(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "slack")
    (folder / "users.json").unlink()
    assert resolve_format(folder) == "slack"
    assert chat_logs(str(tmp_path), "slack") == ({str(folder): "slack"}, [])
    result = read(folder)

    [error] = result.errors
    assert error.path == str(folder / "users.json")
    assert "not found" in error.reason
    speakers = [r.speaker for r in result.records]
    assert speakers == ["U01ANN", "U02BOB", "Cat Diaz", "U01ANN", "U02BOB"]


@pytest.mark.parametrize("users", [None, {"members": []}])
def test_without_a_users_list_its_one_error_tells_the_fallback_not_a_warning_per_user(
    tmp_path: Path, users: Any
) -> None:
    folder = write_export(tmp_path / "slack", {"users.json": users} if users else {})
    if users is None:
        (folder / "users.json").unlink()
    result = read(folder)

    [error] = result.errors
    assert error.path == str(folder / "users.json") and error.location == "file"
    assert [w.location for w in result.warnings] == ["file"]  # the count of what is left out


def test_dms_and_folders_no_list_names(tmp_path: Path) -> None:
    dms = [{"id": "D01", "members": ["U01ANN", "U02BOB"]}]
    said = [message("U01ANN", "Lunch at noon?", f"{DAY1 + 900}.000000")]
    extra = {"dms.json": dms, "D01/2024-05-03.json": said, "old-stuff/2024-01-01.json": said}
    result = read(write_export(tmp_path, extra))

    last = result.records[-1]
    assert (last.session_id, last.metadata, last.speaker) == ("D01", {"channel": "D01"}, "Ann Lee")
    assert LEFT_OUT.replace("2 channels", "3 channels").replace("5 messages", "6 messages") in [
        w.reason for w in result.warnings
    ]
    assert "folders no channel list names, left out: old-stuff" in [
        w.reason for w in result.warnings
    ]


def test_auto_recognises_the_export_folder(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "slack")
    assert resolve_format(folder) == "slack"
    assert read_chat_log(folder, user_id="ann").format == "slack"
    assert chat_logs(str(folder), "auto") == ({str(folder): "slack"}, [])

    (tmp_path / "notes.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    logs, warnings = chat_logs(str(tmp_path), "auto")
    assert logs == {str(tmp_path / "notes.jsonl"): "openai-jsonl", str(folder): "slack"}
    assert warnings == []


def test_a_slack_format_needs_the_export_folder(tmp_path: Path) -> None:
    folder = write_export(tmp_path / "slack")
    with pytest.raises(InvalidInputError) as as_file:
        read_chat_log(folder / "general" / "2024-05-03.json", format="slack")
    (tmp_path / "other").mkdir()
    with pytest.raises(InvalidInputError) as no_export:
        resolve_format(tmp_path / "other")
    assert "a Slack export is read as its folder" in str(as_file.value)
    assert "is not a file (a folder is read only as a Slack export" in str(no_export.value)


def test_a_channels_list_that_is_no_list_is_no_export(tmp_path: Path) -> None:
    folder = write_export(tmp_path, {"channels.json": {"channels": []}})
    with pytest.raises(InvalidInputError):
        resolve_format(folder)


@pytest.mark.parametrize("name", ["..", "../general", "a/b", "."])
def test_a_channel_name_cannot_lead_out_of_the_export(tmp_path: Path, name: str) -> None:
    outside = {f"{name}/2024-05-03.json": [message("U01ANN", "secret", f"{DAY1}.000001")]}
    channels = [*CHANNELS, {"id": "C03BAD", "name": name}]
    folder = write_export(tmp_path / "export", {"channels.json": channels, **outside})
    result = read(folder)

    [error] = result.errors
    assert (
        str(error)
        == f"{folder}/channels.json: record 3: name {name!r} cannot be a channel's folder"
    )
    assert shown(result.records) == SHOWN


def test_a_link_out_of_the_export_is_not_followed(tmp_path: Path) -> None:
    """A zip unpacks its symbolic links: a channel folder or day file that is a link out of
    the export would read whatever JSON lies there (a shared export turned on its reader)."""
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "2024-05-03.json").write_text(
        json.dumps([message("U01ANN", "the secret", f"{DAY1}.000001")])
    )
    folder = write_export(tmp_path / "export")
    (folder / "trips").rename(tmp_path / "trips-moved")
    (folder / "trips").symlink_to(outside, target_is_directory=True)
    day = sorted((folder / "general").iterdir())[0]
    day.unlink()
    day.symlink_to(outside / "2024-05-03.json")
    result = read(folder)

    assert "the secret" not in [r.content for r in result.records]
    assert sorted(str(e) for e in result.errors) == [
        f"{folder}/general/{day.name}: a link out of the export, not read",
        f"{folder}/trips: a link out of the export, not read",
    ]
