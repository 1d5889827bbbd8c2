"""The WhatsApp reader: Android and iOS exports in several locales, a message's further lines,
what is left out (notices, media, deleted messages), messages of one minute kept apart, and the
date order told from the file. No store is needed: the files are only read."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from engine.ingest import ChatRecord, read_chat_log
from engine.ingest.chat_records import ReadResult
from engine.ingest.whatsapp_dates import date_order

FLAT = "The flat has a view of the river."
NOTICE = "Messages and calls are end-to-end encrypted. No one outside of this chat can read them."
ANDROID_US = f"""\
12/30/23, 9:15\u202fPM - {NOTICE}
12/30/23, 9:15\u202fPM - Ann Lee: I moved to Lisbon last week!
12/30/23, 9:15\u202fPM - Bob: ok
12/30/23, 9:15\u202fPM - Bob: ok
12/30/23, 9:16\u202fPM - Bob: <Media omitted>
12/31/23, 10:02\u202fAM - Ann Lee: {FLAT}
And a balcony. <This message was edited>
12/31/23, 10:05\u202fAM - Bob: This message was deleted
"""  # fmt: skip
IOS_UK = """\
\u200e[31/12/2023, 21:15:03] Ann: \u200eimage omitted
[31/12/2023, 21:15:09] Ann: My sister Eva lives in Porto.
[01/01/2024, 00:00:01] Bob: Happy new year
"""
CHAT = "WhatsApp Chat with Bob"
GERMAN = "31.12.23, 21:15 - Ann: Ich wohne in Berlin.\n"


def _read(tmp_path: Path, text: str, name: str = f"{CHAT}.txt") -> ReadResult:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return read_chat_log(path, user_id="ann")


def _rows(records: list[ChatRecord]) -> list[tuple[str | None, str, str, str]]:
    return [(r.speaker, r.content, r.ts.isoformat() if r.ts else "", r.source) for r in records]


def test_an_android_export_keeps_what_people_wrote(tmp_path: Path) -> None:
    result = _read(tmp_path, ANDROID_US)

    assert result.format == "whatsapp" and result.errors == []
    assert _rows(result.records) == [
        ("Ann Lee", "I moved to Lisbon last week!", "2023-12-30T21:15:01+00:00", f"{CHAT}.txt:2"),
        ("Bob", "ok", "2023-12-30T21:15:02+00:00", f"{CHAT}.txt:3"),
        ("Bob", "ok", "2023-12-30T21:15:03+00:00", f"{CHAT}.txt:4"),
        ("Ann Lee", f"{FLAT}\nAnd a balcony.", "2023-12-31T10:02:00+00:00", f"{CHAT}.txt:6"),
    ]  # fmt: skip
    record = result.records[0]
    assert (record.role, record.user_id, record.session_id) == ("user", "ann", CHAT)
    assert [w.reason for w in result.warnings] == [
        "4 messages read from 1 chat; left out 3: 1 naming no one, 1 media, 1 deleted"
    ]


def test_an_ios_export_reads_day_first_dates_and_its_folder_names_the_chat(
    tmp_path: Path,
) -> None:
    result = _read(tmp_path, IOS_UK, "WhatsApp Chat - Ann/_chat.txt")

    assert _rows(result.records) == [
        ("Ann", "My sister Eva lives in Porto.", "2023-12-31T21:15:09+00:00", "_chat.txt:2"),
        ("Bob", "Happy new year", "2024-01-01T00:00:01+00:00", "_chat.txt:3"),
    ]
    assert result.records[0].session_id == "WhatsApp Chat - Ann"


def test_a_dotted_date_is_day_first(tmp_path: Path) -> None:
    result = _read(tmp_path, GERMAN)
    assert _rows(result.records) == [
        ("Ann", "Ich wohne in Berlin.", "2023-12-31T21:15:00+00:00", f"{CHAT}.txt:1")
    ]


def test_dates_that_read_both_ways_take_the_order_that_runs_forward(tmp_path: Path) -> None:
    text = "1/12/24, 10:00 - Ann: one\n2/1/24, 10:00 - Ann: two\n"  # Dec 1, Jan 2 runs back
    result = _read(tmp_path, text)

    assert [r.ts for r in result.records] == [
        datetime(2024, 1, 12, 10, tzinfo=UTC),
        datetime(2024, 2, 1, 10, tzinfo=UTC),
    ]
    assert "read month first, the one order in which the messages run forward" in (
        result.warnings[0].reason
    )


def test_dates_of_both_orders_in_one_file_are_refused() -> None:
    with pytest.raises(ValueError, match="neither day first nor month first"):
        date_order(["31/12/23", "12/31/23"])


def test_a_file_that_starts_with_no_header_says_so(tmp_path: Path) -> None:
    text = "exported by a script\n" + GERMAN
    path = tmp_path / "chat.txt"
    path.write_text(text, encoding="utf-8")

    result = read_chat_log(path, format="whatsapp", user_id="ann")

    assert [(e.location, e.reason) for e in result.errors] == [
        ("line 1", "no WhatsApp message header (date, time and name)")
    ]
    assert [r.content for r in result.records] == ["Ich wohne in Berlin."]


def test_a_time_that_does_not_exist_is_an_error_of_its_line(tmp_path: Path) -> None:
    result = _read(tmp_path, "31.02.23, 21:15 - Ann: hi\n" + GERMAN)
    assert [e.location for e in result.errors] == ["line 1"]
    assert [r.content for r in result.records] == ["Ich wohne in Berlin."]


def test_an_ios_export_that_starts_with_its_bracket_is_recognised(tmp_path: Path) -> None:
    text = f"[31/12/2023, 21:15:03] Ann: {NOTICE}\n[31/12/2023, 21:15:09] Ann: Hi\n"
    path = tmp_path / "WhatsApp Chat - Ann" / "_chat.txt"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")

    result = read_chat_log(path, user_id="ann")

    assert result.format == "whatsapp"
    assert [r.content for r in result.records][-1] == "Hi"


def test_a_notice_quoting_a_colon_names_no_one(tmp_path: Path) -> None:
    text = (
        '12/31/23, 9:15 PM - Ann created group "Trip: Paris"\n'
        '12/31/23, 9:16 PM - Ann changed the subject from "Trip" to "Trip: Paris 2024"\n'
        "12/31/23, 9:17 PM - Ann changed the group name to \u201cTrip: Rome\u201d\n"
        '12/31/23, 9:18 PM - Bob "B" Lee: We land at CDG\n'
    )
    result = _read(tmp_path, text)

    assert [(r.speaker, r.content) for r in result.records] == [('Bob "B" Lee', "We land at CDG")]


def test_an_ios_notice_under_the_chats_name_is_no_message(tmp_path: Path) -> None:
    text = (
        f"[31/12/2023, 21:15:03] Trip Paris: \u200e{NOTICE}\n"
        "[31/12/2023, 21:15:04] Trip Paris: \u200eAnn added Bob\n"
        "[31/12/2023, 21:16:10] Ann: We land at CDG\n"
    )
    result = _read(tmp_path, text, "Trip Paris/_chat.txt")

    assert [(r.speaker, r.content) for r in result.records] == [("Ann", "We land at CDG")]
    assert [w.reason for w in result.warnings] == [
        "1 message read from 1 chat; left out 2: 2 naming no one"
    ]


def test_a_header_with_a_word_between_date_and_time_is_read(tmp_path: Path) -> None:
    text = "31/12/2023 à 21:15 - Luc: Je déménage à Lyon\n[1.1.2024 klo 9.05.10] Eva: Hyvää\n"
    result = _read(tmp_path, text)

    assert result.format == "whatsapp" and result.errors == []
    assert [(r.speaker, r.ts.isoformat() if r.ts else "") for r in result.records] == [
        ("Luc", "2023-12-31T21:15:00+00:00"),
        ("Eva", "2024-01-01T09:05:10+00:00"),
    ]


def test_media_and_deleted_messages_are_left_out_in_other_languages(tmp_path: Path) -> None:
    said = [
        "<Medien ausgeschlossen>", "Diese Nachricht wurde gelöscht.", "<Médias omis>",
        "Ce message a été supprimé", "<Multimedia omitido>", "Se eliminó este mensaje.",
        "<Mídia oculta>", "Mensagem apagada", "IMG-20240101-WA0001.jpg (Datei angehängt)",
        "\u200e<Anhang: 00000012-PHOTO-2024-01-01-09-00-00.jpg>", "Ich wohne in Berlin.",
    ]  # fmt: skip
    text = "".join(f"01.01.24, 09:{n:02} - Ann: {line}\n" for n, line in enumerate(said))
    result = _read(tmp_path, text)

    assert [r.content for r in result.records] == ["Ich wohne in Berlin."]
    assert [w.reason for w in result.warnings] == [
        "1 message read from 1 chat; left out 10: 6 media, 4 deleted"
    ]


def test_an_iphones_edit_mark_leaves_no_invisible_mark_behind(tmp_path: Path) -> None:
    text = "[31/12/2023, 21:18:00] Bob: I love Montmartre\u200e <This message was edited>\n"
    result = _read(tmp_path, text)
    assert [r.content for r in result.records] == ["I love Montmartre"]
