"""Batch ingest: every reader through `Memory.ingest`, bad records, idempotence, dead letters and
retry, per-user ordering, the CLI, and resume after `kill -9` of a real `graphmem ingest`."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.embedding import Embedder
from engine.errors import QueryError
from engine.ingest.report import summary_text
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads
from engine.testing.scripted_llm import (
    EMPTY_EXTRACTION,
    Content,
    Delay,
    Reply,
    ScriptedLLM,
    ToolCall,
    echo_schema,
    http_error,
)

T0 = datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
_CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.S)


def said(body: dict[str, Any]) -> str:
    """The new message text of an extraction request."""
    prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
    match = _CONVERSATION.search(prompt)
    lines = match[1].splitlines() if match else []
    return "\n".join(line.partition(": ")[2] for line in lines)  # drop "USER: "


def fact(subject: str, predicate: str, target: str) -> dict[str, Any]:
    return {
        "source": subject,
        "predicate": predicate,
        "target": target,
        "fact": f"{subject} {predicate.lower().replace('_', ' ')} {target}",
    }


def extraction(*facts: dict[str, Any]) -> ToolCall:
    names = {f["source"] for f in facts} | {f["target"] for f in facts}
    return ToolCall(
        {
            "entities": [{"name": n, "type": "Thing"} for n in sorted(names)],
            "facts": list(facts),
            "invalidations": [],
        }
    )


def mention(body: dict[str, Any]) -> Reply:
    """One fact per message: USER MENTIONED <the message's first word of 4+ letters>."""
    words = re.findall(r"[A-Za-z]{4,}", said(body)) or ["nothing"]
    return extraction(fact("USER", "MENTIONED", words[0].lower()))


def llm_memory(
    store: GraphStore, embedder: Embedder, tmp_path: Path, llm: ScriptedLLM, **settings: Any
) -> Memory:
    return Memory(
        store=store,
        embedder=embedder,
        data_dir=tmp_path,
        openai_base_url=llm.base_url,
        openai_api_key="test",
        llm_max_retries=0,
        **settings,
    )


def jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def messages(user: str, texts: list[str], start: datetime = T0) -> list[dict[str, Any]]:
    return [
        {
            "user_id": user,
            "session_id": "s1",
            "role": "user",
            "content": text,
            "timestamp": (start + timedelta(minutes=i)).isoformat(),
        }
        for i, text in enumerate(texts)
    ]


def episodes(store: GraphStore, user: str) -> int:
    return Reads(store).counts(user)["episodes"]


# -- each reader through ingest --------------------------------------------------------------------


def _sharegpt(path: Path) -> Path:
    data = [
        {
            "id": "c1",
            "conversations": [
                {"from": "human", "value": "I like hiking."},
                {"from": "gpt", "value": "Nice."},
                {"from": "human", "value": "My sister Anna lives in Rome."},
            ],
        }
    ]
    path.write_text(json.dumps(data))
    return path


def _locomo(path: Path) -> Path:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog named Rex."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "Rex is a great name."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "I love hiking with Rex."},
    ]
    data = [
        {
            "sample_id": "conv-x",
            "qa": [],
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1": turns,
                "session_1_date_time": "1:56 pm on 8 May, 2023",
            },
        }
    ]
    path.write_text(json.dumps(data))
    return path


def _csv(path: Path) -> Path:
    path.write_text(
        "user,session,role,content,timestamp\n"
        "u1,s1,user,I like hiking.,2024-03-01T10:00:00Z\n"
        "u1,s1,assistant,Great.,2024-03-01T10:01:00Z\n"
        "u1,s1,user,My sister Anna lives in Rome.,2024-03-01T10:02:00Z\n"
    )
    return path


def _openai(path: Path) -> Path:
    return jsonl(
        path,
        [
            {
                "user_id": "u1",
                "messages": [
                    {"role": "user", "content": "I like hiking."},
                    {"role": "assistant", "content": "Great."},
                    {"role": "user", "content": "My sister Anna lives in Rome."},
                ],
            }
        ],
    )


@pytest.mark.parametrize(
    ("name", "make", "fmt", "user"),
    [
        ("chat.jsonl", _openai, "openai-jsonl", "u1"),
        ("chat.json", _sharegpt, "sharegpt", None),
        ("locomo.json", _locomo, "locomo", "conv-x"),
        ("chat.csv", _csv, "csv", "u1"),
    ],
)
def test_each_reader_ingests_every_message(
    memory: Memory,
    store: GraphStore,
    tmp_path: Path,
    name: str,
    make: Any,
    fmt: str,
    user: str | None,
) -> None:
    path = make(tmp_path / name)
    report = memory.ingest(path, user_id=None if user else "u9", users_from_file=bool(user))
    owner = user or "u9"
    assert report.formats == {str(path): fmt}
    assert (report.records_read, report.messages_added, report.messages_failed) == (3, 3, 0)
    assert report.errors == []
    assert episodes(store, owner) == 3
    assert report.facts_added >= 1  # the offline extractor reads "I like hiking" / "I love ..."


def test_locomo_keeps_dia_id_as_source(memory: Memory, store: GraphStore, tmp_path: Path) -> None:
    memory.ingest(_locomo(tmp_path / "locomo.json"), users_from_file=True)
    facts = memory.get_all("conv-x")
    uids = sorted({uid for f in facts for uid in f.episodes})
    sources = {e.source for e in Reads(store).episodes_by_uids("conv-x", uids)}
    assert facts
    assert sources <= {"D1:1", "D1:2", "D1:3"}
    assert sources


def test_in_memory_records_and_dicts(memory: Memory, store: GraphStore) -> None:
    rows = messages("u2", ["I like tea.", "I like chess."])
    inputs = [*rows, {"role": "user", "content": "no user"}, 42]
    report = memory.ingest(inputs, users_from_file=True)
    assert report.messages_added == 2
    assert [e.location for e in report.errors] == ["<iterable>:3", "record 4"]
    assert "names no user" in report.errors[0].reason
    assert episodes(store, "u2") == 2


# -- bad records, idempotence ----------------------------------------------------------------------


def test_bad_records_are_reported_and_the_rest_ingests(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    good = messages("u1", ["I like tea.", "I like chess.", "I like rain."])
    path = jsonl(
        tmp_path / "chat.jsonl",
        [good[0], "{not json", good[1], {"user_id": "u1", "role": "user"}, good[2]],
    )
    report = memory.ingest(path, users_from_file=True)
    assert report.messages_added == 3
    assert [(e.path, e.location, e.stage) for e in report.errors] == [
        (str(path), "line 2", "read"),
        (str(path), "line 4", "read"),
    ]
    assert "invalid JSON" in report.errors[0].reason
    assert "content is missing" in report.errors[1].reason
    assert episodes(store, "u1") == 3


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("content", "I like \ud800 tea.", "message content is not valid Unicode text"),
        ("name", "\udc00", "message name is not valid Unicode text"),
        ("name", "An\ud800n", "message name is not valid Unicode text"),
        ("user_id", "\ud800", "user_id is not valid Unicode text"),
        ("session_id", "s\udbff", "session_id is not valid Unicode text"),
    ],
)
def test_a_lone_surrogate_in_a_chat_log_is_refused_naming_the_field(
    memory: Memory, store: GraphStore, tmp_path: Path, field: str, value: str, says: str
) -> None:
    """A JSON escape (`"\\ud800"`) gives one. Only in the content was it refused so: a name or
    session of one alone was "empty or only whitespace", one inside was a space ("An
    n")."""
    good, bad = messages("u1", ["I like chess.", "I like tea."])
    path = jsonl(tmp_path / "chat.jsonl", [good, {**bad, field: value}])
    report = memory.ingest(path, users_from_file=True)
    found = [(e.location, e.reason.split(" (")[0]) for e in report.errors]
    assert found == [("chat.jsonl:2", says)]
    assert "(a lone surrogate at " in report.errors[0].reason
    assert report.messages_added == 1 and episodes(store, "u1") == 1


def test_on_error_raise_stops_before_writing(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", [*messages("u1", ["I like tea."]), "{not json"])
    with pytest.raises(Exception, match=r"chat\.jsonl:2: invalid JSON") as raised:
        memory.ingest(path, on_error="raise", users_from_file=True)
    assert type(raised.value).__name__ == "InvalidInputError"
    assert episodes(store, "u1") == 0


def test_rerun_adds_nothing(memory: Memory, store: GraphStore, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "chat.jsonl", messages("u1", ["I like tea.", "I hate rain."]))
    first = memory.ingest(path, users_from_file=True)
    facts = {f.uid for f in memory.get_all("u1", include_invalid=True)}
    second = memory.ingest(path, concurrency=2, users_from_file=True)
    assert (first.messages_added, first.messages_skipped) == (2, 0)
    assert (second.messages_added, second.messages_skipped) == (0, 2)
    assert (second.facts_added, second.facts_updated, second.llm_calls) == (0, 0, 0)
    assert episodes(store, "u1") == 2
    assert {f.uid for f in memory.get_all("u1", include_invalid=True)} == facts


def test_dry_run_reads_and_counts_only(memory: Memory, store: GraphStore, tmp_path: Path) -> None:
    rows = messages("u1", ["I like tea.", "I like rain."])
    memory.ingest(jsonl(tmp_path / "chat.jsonl", rows[:1]), user_id="u1")
    report = memory.ingest(jsonl(tmp_path / "chat.jsonl", rows), dry_run=True, user_id="u1")
    assert (report.messages_pending, report.messages_skipped, report.messages_added) == (1, 1, 0)
    assert report.llm_calls == 0
    assert episodes(store, "u1") == 1


# -- dead letters and retry ------------------------------------------------------------------------


def test_failed_messages_become_dead_letters_and_retry_replays_them(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = mention
    mem = llm_memory(store, embedder, tmp_path, scripted_llm)
    path = jsonl(tmp_path / "chat.jsonl", messages("u1", ["Hiking today.", "Chess later."]))
    scripted_llm.script(http_error(500, "model overloaded"))  # the first call fails for good
    report = mem.ingest(path, concurrency=1, user_id="u1")
    letters_file = tmp_path / "dead_letters.jsonl"
    letters = [json.loads(line) for line in letters_file.read_text(encoding="utf-8").splitlines()]
    assert (report.messages_added, report.messages_failed) == (1, 1)
    assert report.errors[0].stage == "extract"
    assert "model overloaded" in report.errors[0].reason
    assert [(d["record"]["content"], d["stage"]) for d in letters] == [("Hiking today.", "extract")]
    assert "model overloaded" in letters[0]["reason"]

    retried = mem.ingest([], retry_failed=True)
    assert (retried.dead_letters_retried, retried.dead_letters_resolved) == (1, 1)
    assert retried.messages_added == 1
    assert not letters_file.exists()
    mentioned = {f.object for f in mem.get_all("u1")}
    assert mentioned == {"hiking", "chess"}
    assert episodes(store, "u1") == 2


def _json_mention(body: dict[str, Any]) -> Reply:
    """`mention` as JSON content, except that a message about chess gets the schema echoed."""
    if "Chess" in said(body):
        return echo_schema(body)
    arguments = mention(body)
    assert isinstance(arguments, ToolCall) and isinstance(arguments.arguments, dict)
    return Content(json.dumps(arguments.arguments))


def test_summary_names_the_mode_and_a_schema_echo_fails_the_message(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    with ScriptedLLM(default=_json_mention, owned_by="llamacpp") as llm:
        mem = llm_memory(store, embedder, tmp_path, llm)
        rows = messages("u9", ["Hiking today.", "Chess later.", "Tennis tomorrow."])
        report = mem.ingest(jsonl(tmp_path / "chat.jsonl", rows), concurrency=2, user_id="u9")
    assert (report.messages_added, report.messages_failed, report.llm_calls) == (2, 1, 3)
    assert report.llm_modes == {"json_schema": 3} and llm.model_lists == 1
    [error] = report.errors
    assert error.stage == "extract" and "a JSON schema" in error.reason
    assert "structured output: json_schema (3)" in summary_text(report)
    assert {f.object for f in mem.get_all("u9")} == {"hiking", "tennis"}
    assert episodes(store, "u9") == 3  # the failed message is kept, as a failed episode


# -- ordering per user -----------------------------------------------------------------------------


def _lives_in(body: dict[str, Any]) -> Reply:
    text = said(body)
    for city in ("Paris", "Berlin", "Madrid"):
        if city in text:
            reply = extraction(fact("USER", "LIVES_IN", city))
            # the oldest message answers last: only a sequencer keeps it first
            return Delay(0.6, reply) if city == "Paris" else reply
    return ToolCall(EMPTY_EXTRACTION)


def test_one_users_messages_apply_in_timestamp_order(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = _lives_in
    mem = llm_memory(store, embedder, tmp_path, scripted_llm)
    rows = messages("u1", ["I live in Paris.", "I moved, I live in Berlin now."])
    rows += messages("u2", ["I live in Madrid."])
    path = jsonl(tmp_path / "chat.jsonl", [rows[1], rows[2], rows[0]])  # file order != time
    report = mem.ingest(path, concurrency=4, users_from_file=True)
    facts = {f.object: f for f in mem.get_all("u1", include_invalid=True)}
    assert report.messages_added == 3
    assert set(facts) == {"Paris", "Berlin"}
    assert facts["Berlin"].is_valid
    assert not facts["Paris"].is_valid
    assert [f.object for f in mem.get_all("u2")] == ["Madrid"]


def test_a_message_ends_what_the_one_just_before_it_said(memory: Memory) -> None:
    """An ingest prepares several of one user's messages at once: the offline extractor's
    contradictions are found when each message is written, after the one before it."""
    sports = ["tennis", "golf", "chess", "skiing"]
    texts = [text for sport in sports for text in (f"I like {sport}.", f"I hate {sport}.")]
    report = memory.ingest(messages("u1", texts), users_from_file=True, concurrency=4)
    facts = memory.get_all("u1", include_invalid=True)
    assert report.messages_added == len(texts) and report.facts_invalidated == len(sports)
    assert {(f.predicate, f.object) for f in facts if f.is_valid} == {
        ("HATES", sport) for sport in sports
    }


# -- the CLI ---------------------------------------------------------------------------------------


def test_cli_ingest_json_summary_and_progress_lines(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", messages("u1", ["I like tea.", "I like chess."]))
    command = ["--data-dir", str(cli_home), "ingest", str(path), "--users-from-file", "--json"]
    assert main(command) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["messages_added"], report["files"]) == (2, [str(path)])
    assert report["messages_per_s"] > 0

    more = jsonl(tmp_path / "more.jsonl", messages("u7", ["I like rain."]))
    assert main(["--data-dir", str(cli_home), "ingest", str(path), str(more), "--user", "u1"]) == 0
    out, err = capsys.readouterr()
    assert "ingest: 1/1 messages" in err  # stderr is not a terminal: plain lines, no bar
    assert "added 1, already stored 2, failed 0" in out  # --user u1: more.jsonl joins u1


def test_cli_one_line_errors(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "notes.txt"
    odd.write_text("hello\n")
    missing = tmp_path / "missing.jsonl"
    assert main(["--data-dir", str(cli_home), "ingest", str(missing), "--user", "u1"]) == 1
    first = capsys.readouterr().err
    assert main(["--data-dir", str(cli_home), "ingest", str(odd), "--user", "u1"]) == 1
    second = capsys.readouterr().err
    # the last line: loading the embedding model may print its own progress first
    assert first.splitlines()[-1] == f"graphmem: error: chat log {str(missing)!r} does not exist"
    assert second.splitlines()[-1].startswith("graphmem: error: cannot tell the chat-log format")
    assert second.count("graphmem:") == 1


# -- resume after kill -9 -------------------------------------------------------------------------


def _ingest_command(path: Path) -> list[str]:
    command = [sys.executable, "-m", "engine.cli", "ingest", str(path), "--user", "u1"]
    return [*command, "--concurrency", "4", "--json"]


def _ingest_env(home: Path, llm: ScriptedLLM) -> dict[str, str]:
    return os.environ | {
        "GRAPHMEM_HOME": str(home),
        "OPENAI_BASE_URL": llm.base_url,
        "OPENAI_API_KEY": "test",
        "HF_HUB_OFFLINE": "1",
    }


@pytest.mark.slow
def test_resume_after_kill_9(tmp_path: Path, scripted_llm: ScriptedLLM) -> None:
    scripted_llm.default = mention
    scripted_llm.latency_s = 0.15  # slow enough to kill it mid-run
    home, total = tmp_path / "home", 80
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    texts = [f"{words[i % len(words)].title()} is message number {i}." for i in range(total)]
    path = jsonl(tmp_path / "chat.jsonl", messages("u1", texts))
    process = subprocess.Popen(
        _ingest_command(path),
        env=_ingest_env(home, scripted_llm),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    store = FalkorDBStore.embedded(EmbeddedServer(home), "graphmem")
    try:
        _wait_for_episodes(store, process, at_least=12)
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
        at_kill = episodes(store, "u1")
        rerun = subprocess.run(
            _ingest_command(path),
            env=_ingest_env(home, scripted_llm),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert rerun.returncode == 0, rerun.stderr
        report = json.loads(rerun.stdout)
        facts = Reads(store).list_facts("u1", include_invalid=True, skip=0, limit=1000)
        assert 12 <= at_kill < total
        assert (report["messages_skipped"], report["messages_added"]) == (at_kill, total - at_kill)
        assert episodes(store, "u1") == total
        assert sorted(f.object for f in facts) == sorted(words)  # no duplicate facts
        assert sum(f.mentions for f in facts) == total  # no message counted twice
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
        store.close()
        EmbeddedServer(home).stop_if_unused()


def _wait_for_episodes(store: GraphStore, process: subprocess.Popen[str], at_least: int) -> None:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1]
        try:
            if episodes(store, "u1") >= at_least:
                return
        except QueryError:
            pass  # the graph does not exist until the process has set it up
        time.sleep(0.1)
    raise AssertionError(f"the ingest process stored fewer than {at_least} messages in time")


def test_cli_retry_failed_with_no_dead_letters_says_so(
    cli_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`graphmem ingest --retry-failed` with nothing to replay printed only "0 messages read
    from 0 files for no user": whether it had looked for dead letters, it did not say."""
    assert main(["--data-dir", str(cli_home), "ingest", "--retry-failed", "--user", "u1"]) == 0
    out = capsys.readouterr().out
    letters = cli_home / "dead_letters.jsonl"
    assert out.splitlines()[-1] == f"  no dead letters of user 'u1' to replay in {letters}"
