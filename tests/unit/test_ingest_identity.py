"""Which records are placed by their time (JSONL, CSV, ShareGPT lines with a time) and which
keep their source in their identity (an undated line, a LoCoMo dia_id, a caller's own source);
a job found stored under an older checksum takes it, and twins meet on any checksum."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from engine.add.messages import checksum, id_checksum, record_checksums
from engine.ingest import ChatRecord, read_chat_log
from engine.ingest.sources import Job, collect, plan
from engine.ingest.stored import as_stored

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)


def record(**changes: object) -> ChatRecord:
    fields: dict[str, object] = {
        "session_id": "s", "role": "user", "content": "hello", "ts": T0,
        "source": "chat.jsonl:1", "positional": True,
    }  # fmt: skip
    return ChatRecord.model_validate(fields | changes)


def test_file_readers_mark_their_sources_as_positions(tmp_path: Path) -> None:
    jsonl = tmp_path / "chat.jsonl"
    jsonl.write_text(json.dumps({"role": "user", "content": "hi"}) + "\n")
    csv = tmp_path / "chat.csv"
    csv.write_text("role,content\nuser,hi\n")
    sharegpt = tmp_path / "chat.json"
    sharegpt.write_text(
        json.dumps([{"id": "c", "conversations": [{"from": "human", "value": "hi"}]}])
    )
    for path in (jsonl, csv, sharegpt):
        assert [r.positional for r in read_chat_log(path, user_id="u").records] == [True]


def test_locomo_and_a_callers_own_source_keep_the_source_in_the_identity(tmp_path: Path) -> None:
    turns = [{"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog."}]
    conversation = {"speaker_a": "Ann", "session_1": turns, "session_1_date_time": "8 May, 2023"}
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([{"sample_id": "x", "qa": [], "conversation": conversation}]))
    [turn] = read_chat_log(path).records
    assert (turn.positional, turn.identified_by_time) == (False, False)
    said = {"role": "user", "content": "a", "ts": T0.isoformat()}
    found = collect([said | {"source": "m-7"}, said], "auto", "u", lambda r, u: (r.source,))
    assert [j.record.identified_by_time for j in found.jobs] == [False, True]


def test_a_timed_record_has_its_time_checksum_then_the_one_stores_held() -> None:
    timed, legacy = record_checksums(record(), "u", 100)
    assert legacy == checksum("u", "s", "user", "hello", T0.timestamp(), "chat.jsonl:1")
    assert record_checksums(record(source="renamed.jsonl:7"), "u", 100)[0] == timed
    untimed = checksum("u", "s", "user", "hello", None, "chat.jsonl:1")
    assert record_checksums(record(ts=None), "u", 100) == (untimed,)
    assert record_checksums(record(positional=False), "u", 100) == (legacy,)


def test_an_exported_id_keys_the_message_whatever_its_text_then_the_one_stores_held() -> None:
    exported = record(positional=False, exported_id=True, source="C1:1700000000.000100")
    by_id, legacy = record_checksums(exported, "u", 100)
    assert by_id == id_checksum("u", "s", "C1:1700000000.000100")
    assert legacy == checksum("u", "s", "user", "hello", T0.timestamp(), "C1:1700000000.000100")
    edited = exported.model_copy(update={"content": "hello @Ann", "speaker": "Ann Lee"})
    assert record_checksums(edited, "u", 100)[0] == by_id
    assert record_checksums(edited.model_copy(update={"ts": None}), "u", 100)[0] == by_id
    assert exported.checksum == edited.checksum != record().checksum
    other = exported.model_copy(update={"session_id": "C2"})
    assert record_checksums(other, "u", 100)[0] != by_id
    # tagged: never the checksum a message of that text and source would have otherwise
    assert by_id not in record_checksums(
        exported.model_copy(update={"exported_id": False}), "u", 100
    )


def test_a_job_found_under_an_older_checksum_takes_it_and_twins_meet_on_any() -> None:
    job = Job.of(record(), "u", "chat.jsonl", ("new", "old"))
    assert job.as_stored(set()) is job
    assert job.as_stored({"old"}).checksum == "old" and job.as_stored({"old"}).keys == (
        "old",
        "new",
    )
    assert job.as_stored({"new", "old"}).checksum == "new"
    letter = Job.of(record(), "u", "add", ("old",))
    lanes, duplicates = plan([letter, job])
    assert (lanes, duplicates) == ({"u": [letter]}, [(job, letter)])


def test_an_exported_message_stored_with_another_text_is_counted_and_keeps_that_text() -> None:
    exported = record(positional=False, exported_id=True, source="m-1")
    edited = Job.of(exported.model_copy(update={"content": "hello, edited"}), "u", "a", ("id",))
    twin = Job.of(edited.record, "u", "b", ("id",))  # the same message in a second file
    spaced = Job.of(exported.model_copy(update={"content": " hello "}), "u", "a", ("id2",))
    placed = Job.of(record(content="other"), "u", "a", ("timed", "legacy"))
    texts = {"id": "hello", "id2": "hello", "legacy": "not compared"}

    asked: set[str] = set()

    def question(user: str, checksums: list[str], wanted: list[str]) -> dict[str, str | None]:
        asked.update(wanted)
        return {key: texts[key] if key in wanted else None for key in checksums if key in texts}

    jobs, found, changed = as_stored(question, [edited, twin, spaced, placed])

    assert changed == 1  # one message, read twice; spaces are no change
    assert [job.record.content for job in jobs] == ["hello", "hello", " hello ", "other"]
    assert jobs[3].checksum == "legacy"
    assert found == {"u": {"id", "id2", "legacy"}}
    assert asked == {"id", "id2"}  # a message no export keys by id needs no text read
