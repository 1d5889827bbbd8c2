"""`ingest` runs as a newcomer and an attacker meet them (issues 48 and 52): the input never
picks the user, exit codes that say what happened, failed messages retried on a rerun, torn
dead-letter lines, long messages split, directories, one error style, `| head`."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.cli import ingest_command as cli_ingest
from engine.cli import main
from engine.embedding import Embedder
from engine.errors import ConfigError, InvalidInputError
from engine.ingest.progress import LineProgress
from engine.ingest.report import IngestProgress, summary_text
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads
from engine.testing.scripted_llm import ScriptedLLM, http_error
from engine.transfer.export import read_snapshot
from tests.integration.test_ingest import llm_memory, mention

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)


def jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def rows(user: str, texts: list[str], start: datetime = T0) -> list[dict[str, Any]]:
    return [
        {
            "user_id": user,
            "session_id": "s1",
            "role": "user",
            "content": text,
            "ts": (start + timedelta(minutes=i)).isoformat(),
        }
        for i, text in enumerate(texts)
    ]


def episodes(store: GraphStore, user: str) -> int:
    return Reads(store).counts(user)["episodes"]


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    home = tmp_path / "home"
    yield home
    if home.exists():
        EmbeddedServer(home).stop_if_unused()


# -- 48 M4: the input does not choose the tenant -----------------------------------------------


def test_without_a_user_the_file_does_not_choose_one(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", rows("victim", ["I like tea."]))
    with pytest.raises(InvalidInputError) as raised:
        memory.ingest(path)
    with pytest.raises(InvalidInputError):
        memory.ingest(rows("victim", ["I like tea."]))  # records and dicts alike
    assert "user_id=" in str(raised.value) and "users_from_file=True" in str(raised.value)
    assert episodes(store, "victim") == 0


def test_a_user_given_wins_and_the_summary_names_who_was_written(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", rows("victim", ["I like tea."]) + rows("b", ["Hi."]))
    report = memory.ingest(path, user_id="alice")
    assert (report.user_ids, episodes(store, "alice"), episodes(store, "victim")) == (
        ["alice"],
        2,
        0,
    )
    assert "for user 'alice'" in summary_text(report)
    both = memory.ingest(path, users_from_file=True, dry_run=True)
    assert "for 2 users: 'b', 'victim'" in summary_text(both)


def test_a_run_that_reads_no_message_names_the_user_given(memory: Memory, tmp_path: Path) -> None:
    """It said "0 messages read from 1 file for no user" after `--user alice`."""
    empty = jsonl(tmp_path / "empty.jsonl", [])
    unreadable = jsonl(tmp_path / "bad.jsonl", ['{"oops": 1}'])

    said = [summary_text(memory.ingest(path, user_id="alice")) for path in (empty, unreadable)]
    from_file = summary_text(memory.ingest(empty, users_from_file=True))

    for text in said:
        assert text.startswith("0 messages read from 1 file for user 'alice' in "), text
    assert from_file.startswith("0 messages read from 1 file for no user in "), from_file


def test_cli_without_a_user_is_a_usage_error_naming_both_options(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", rows("victim", ["I like tea."]))
    assert main(["--data-dir", str(cli_home), "ingest", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--user NAME" in err and "--users-from-file" in err
    assert not cli_home.exists()  # refused before anything started


# -- a configuration that cannot extract stops the run -----------------------------------------

NO_KEY = "needs OPENAI_API_KEY"


def test_an_extractor_that_cannot_be_built_stops_ingest_before_any_message(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path, llm_provider="openai")
    read: list[str] = []

    def records() -> Iterator[dict[str, Any]]:
        for row in rows("alice", ["I like tea.", "I live in Oslo."]):
            read.append(row["content"])
            yield row

    with pytest.raises(ConfigError, match=NO_KEY):
        mem.ingest(records(), user_id="alice")
    with pytest.raises(ConfigError, match=NO_KEY):  # Memory.add: at the first add, as documented
        mem.add("I like tea.", user_id="alice")

    assert read == []
    assert episodes(store, "alice") == 0
    assert not (tmp_path / "dead_letters.jsonl").exists()
    assert mem.ingest(records(), user_id="alice", dry_run=True).messages_pending == 2


def test_cli_ingest_and_add_without_the_key_say_it_in_one_line(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setenv("GRAPHMEM_LLM_PROVIDER", "openai")
    path = jsonl(tmp_path / "chat.jsonl", rows("alice", ["I like tea.", "I live in Oslo."]))
    base = ["--data-dir", str(cli_home)]

    ingested = main([*base, "ingest", str(path), "--user", "alice"])
    ingest_said = capsys.readouterr()
    added = main([*base, "add", "I like tea.", "--user", "alice"])
    add_said = capsys.readouterr()

    for status, said in ((ingested, ingest_said), (added, add_said)):
        assert status == 1
        assert said.err.startswith("graphmem: error: the LLM endpoint https://api.openai.com/v1")
        assert NO_KEY in said.err and said.err.count("\n") == 1 and said.out == ""
    assert not (cli_home / "dead_letters.jsonl").exists()


# -- 48 L3: a torn dead-letter line ------------------------------------------------------------


def test_a_torn_dead_letter_line_is_skipped_with_a_warning(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = mention
    mem = llm_memory(store, embedder, tmp_path, scripted_llm)
    path = jsonl(tmp_path / "chat.jsonl", rows("u1", ["Hiking today.", "Chess later."]))
    scripted_llm.script(http_error(500, "down"), http_error(500, "down"))
    assert mem.ingest(path, user_id="u1", concurrency=1).messages_failed == 2
    letters = tmp_path / "dead_letters.jsonl"
    first, second = letters.read_text(encoding="utf-8").splitlines()
    # a kill mid-append of the first letter, then the second appended to what was left
    letters.write_text(first[: len(first) // 2] + second + "\n" + "not json at all\n")

    other = jsonl(tmp_path / "more.jsonl", rows("u1", ["Tennis soon."], T0 + timedelta(days=1)))
    report = mem.ingest(other, user_id="u1")
    assert report.messages_added == 1
    assert [(w.path, w.location) for w in report.warnings] == [
        (str(letters), "line 1"),
        (str(letters), "line 2"),
    ]
    assert "torn letter" in report.warnings[0].reason
    retried = mem.ingest([], retry_failed=True)
    assert (retried.dead_letters_retried, retried.dead_letters_resolved) == (1, 1)
    assert {f.object for f in mem.get_all("u1")} >= {"chess", "tennis"}


# -- 52 A7: exit codes, failed messages retried on a rerun -------------------------------------


def test_a_rerun_extracts_failed_messages_again_and_counts_them_honestly(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = mention
    mem = llm_memory(store, embedder, tmp_path, scripted_llm)
    path = jsonl(tmp_path / "chat.jsonl", rows("u1", ["Hiking today.", "Chess later."]))
    scripted_llm.script(http_error(500, "down"))
    first = mem.ingest(path, user_id="u1", concurrency=1)
    assert (first.messages_added, first.messages_failed, first.messages_pending) == (1, 1, 2)
    assert f"  {path}:1: " in summary_text(first)  # one location, not "chat.jsonl: chat.jsonl:1"

    dry = mem.ingest(path, user_id="u1", dry_run=True)
    assert (dry.messages_pending, dry.messages_skipped, dry.messages_retried) == (1, 1, 1)
    again = mem.ingest(path, user_id="u1")
    assert (again.messages_added, again.messages_skipped, again.messages_retried) == (1, 1, 1)
    assert again.messages_pending == 1  # the one it tried again
    assert (again.llm_calls, again.dead_letters_resolved) == (1, 1)
    assert "1 had failed in an earlier run: were extracted again" in summary_text(again)
    assert {f.object for f in mem.get_all("u1")} == {"hiking", "chess"}
    assert episodes(store, "u1") == 2
    assert not (tmp_path / "dead_letters.jsonl").exists()


def test_cli_exit_status_says_whether_anything_failed(
    cli_home: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    scripted_llm: ScriptedLLM,
) -> None:
    good = jsonl(tmp_path / "good.jsonl", rows("u1", ["I like tea."]))
    bad = jsonl(tmp_path / "bad.jsonl", [*rows("u1", ["I like rain."]), "{not json"])
    base = ["--data-dir", str(cli_home), "ingest", "--user", "u1", "--concurrency", "1"]
    assert main([*base, str(good)]) == 0
    assert main([*base, str(bad)]) == 1  # one record could not be read; the rest went in
    assert "bad.jsonl:2: invalid JSON" in capsys.readouterr().out
    assert main(["--data-dir", str(cli_home), "ingest"]) == 2

    scripted_llm.default = mention
    scripted_llm.script(http_error(500, "down"))
    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("GRAPHMEM_LLM_MAX_RETRIES", "0")
    later = jsonl(tmp_path / "later.jsonl", rows("u1", ["Chess later."], T0 + timedelta(days=1)))
    assert main([*base, str(later)]) == 1  # its extraction failed
    assert main([*base, str(later)]) == 0  # extracted again, and stored


# -- 52 A15: a directory -------------------------------------------------------------------------


def test_a_directory_means_every_chat_log_under_it(memory: Memory, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "b").mkdir(parents=True)
    (logs / ".git").mkdir()
    jsonl(logs / "b" / "two.jsonl", rows("u1", ["Chess later."]))
    (logs / "a.csv").write_text("role,content\nuser,I like tea.\n")
    jsonl(logs / ".hidden.jsonl", rows("u1", ["secret"]))
    jsonl(logs / ".git" / "x.jsonl", rows("u1", ["secret"]))
    (logs / ".git" / "empty").mkdir()
    (logs / ".git" / "empty" / ".keep").write_text("")
    (logs / "README.md").write_text("# my logs\n")
    report = memory.ingest(logs, user_id="u1", dry_run=True)
    assert report.formats == {str(logs / "a.csv"): "csv", str(logs / "b/two.jsonl"): "openai-jsonl"}
    assert report.messages_pending == 2
    [skipped] = report.warnings
    assert (skipped.path, skipped.location) == (str(logs / "README.md"), "file")
    assert skipped.reason.endswith(": skipped")
    with pytest.raises(InvalidInputError, match="no chat log in directory"):
        memory.ingest(logs / ".git" / "empty", user_id="u1")  # only a hidden file in it


# -- 52 A6: a message over the limit is split, not dropped -------------------------------------


def test_a_long_message_is_split_into_pieces_that_fit(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path, max_message_chars=100)
    text = " ".join(f"word{i:03d}" for i in range(30))  # 239 characters
    path = jsonl(tmp_path / "chat.jsonl", rows("u1", [text, "I like tea."]))
    report = mem.ingest(path, user_id="u1")
    assert (report.messages_added, report.errors) == (4, [])
    [warning] = report.warnings
    assert warning.location == "chat.jsonl:1"
    assert warning.reason.endswith("split into 3 messages")
    kept = sorted(read_snapshot(store, "u1").episodes, key=lambda e: (e.ts, e.source or ""))
    assert " ".join(e.content for e in kept[:3]) == text
    assert [e.source for e in kept[:3]] == [f"chat.jsonl:1 part {i}/3" for i in (1, 2, 3)]


# -- 52 cosmetic: counts, Ctrl-C, | head -------------------------------------------------------


def test_the_progress_line_counts_as_the_summary_does(memory: Memory, tmp_path: Path) -> None:
    stream = io.StringIO()
    path = jsonl(tmp_path / "chat.jsonl", [*rows("u1", ["I like tea."]), "{not json"])
    report = memory.ingest(path, user_id="u1", progress=LineProgress(stream))
    last = stream.getvalue().splitlines()[-1]
    assert last.startswith("ingest: 1/1 messages (added 1, failed 0),")
    assert "  added 1, already stored 0, failed 0" in summary_text(report)
    assert "errors" not in last  # the read error is the summary's, not a failed message


def test_ctrl_c_says_how_to_resume(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def interrupted(args: object, watched: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_ingest, "_run", interrupted)
    chat = tmp_path / "chat.jsonl"
    chat.write_text("")
    assert main(["ingest", str(chat), "--user", "u1"]) == 130
    assert capsys.readouterr().err.splitlines()[-1] == (
        "graphmem: interrupted; this run added no message before it stopped. "
        "Run the same command again to resume (messages already stored are skipped)."
    )


def test_ctrl_c_mid_run_says_how_many_it_added(
    cli_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    shown = LineProgress.__call__

    def ctrl_c_after_two(self: LineProgress, p: IngestProgress) -> None:
        shown(self, p)
        if p.done >= 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(LineProgress, "__call__", ctrl_c_after_two)
    path = jsonl(tmp_path / "chat.jsonl", rows("u1", ["I like tea.", "I like chess.", "Hi."]))
    command = ["--data-dir", str(cli_home), "ingest", str(path), "--user", "u1"]
    assert main([*command, "--concurrency", "1"]) == 130
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("graphmem: interrupted; this run added 2 messages before it stopped.")
    assert last.endswith(
        "Run the same command again to resume (messages already stored are skipped)."
    )


def test_a_reader_that_stops_early_gives_no_traceback() -> None:
    code = "from engine.cli.ingest_command import _write; _write('summary line\\n' * 200000)"
    process = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()  # what `| head` does
    with process.stderr:
        err = process.stderr.read()
    assert (process.wait(timeout=60), err) == (0, b"")


def test_an_unexpected_error_in_a_worker_ends_the_run_with_that_error(
    memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: object, checksum: str) -> bool:
        raise RuntimeError("the dead-letter disk went away")

    monkeypatch.setattr("engine.ingest.deadletters.DeadLetters.resolve", broken)
    path = jsonl(tmp_path / "chat.jsonl", rows("u1", ["I like tea.", "I like chess."]))
    raised: list[BaseException] = []

    def run() -> None:
        try:
            memory.ingest(path, user_id="u1", concurrency=2)
        except BaseException as exc:
            raised.append(exc)

    worker = threading.Thread(target=run, daemon=True)  # a hang must not hold the test session
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "ingest kept waiting for a worker that had died"
    assert [str(e) for e in raised] == ["the dead-letter disk went away"]
