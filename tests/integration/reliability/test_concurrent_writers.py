"""Writers that race on one message: two processes ingesting one chat log at once, or two
adds of the same dated message, each looked the message up before the other stored it. The
message is stored once and what it says is counted once (mentions exact), and the messages
of a clashing add that are still new are written. The dead-letter file one process rewrites
keeps the letters other processes appended."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.ingest.chat_records import ChatRecord
from engine.ingest.deadletters import DeadLetter, DeadLetters
from engine.memory import Memory
from tests.integration.reliability.conftest import Tally

USER = "racer"
T0 = 1_700_000_000
NAMES = ["Alice", "Bob", "Carol", "Dave", "Erin", "Frank"]
ROOT = str(Path(__file__).resolve().parents[3])
USER_ARGS = ("--user", USER)
_ENV = {**os.environ, "PYTHONPATH": ROOT}


def said(i: int) -> str:
    return f"{NAMES[i % 6]} works with {NAMES[(i + 1) % 6]} on project X{i}."


def counts(mem: Memory, user: str) -> tuple[int, int, int]:
    """Episodes, the facts' mentions and the entities' mentions of `user`."""
    facts = mem.get_all(user)
    entities = mem.top_entities(user, 1000)
    return (
        mem.stats(user).episodes,
        sum(f.mentions for f in facts),
        sum(e.entity.mentions for e in entities),
    )


def test_a_message_stored_by_another_writer_after_its_lookup_counts_once(
    memory: Memory, tally: Tally
) -> None:
    once = memory.add(said(0), "alone", ts=T0)
    first = memory.prepare_add(said(0), USER, ts=T0)
    second = memory.prepare_add(said(0), USER, ts=T0)  # both found the message new
    assert first.episodes and second.episodes
    memory.apply_add(first)
    late = memory.apply_add(second)
    assert late.episode_uids == [] and late.episodes_skipped == 1 and late.facts_added == 0
    assert counts(memory, USER) == counts(memory, "alone")
    assert counts(memory, USER)[0] == 1 and once.facts_added > 0
    tally.cases += 1


def test_an_add_that_clashes_writes_its_messages_still_new(memory: Memory, tally: Tally) -> None:
    def messages(*indexes: int) -> list[dict[str, str]]:
        return [{"role": "user", "content": said(i)} for i in indexes]

    # message 1 opens both adds at T0 (the next message of an add is 1 ms later)
    memory.add(messages(1, 0), "alone", ts=T0)
    memory.add(messages(2), "alone", ts=T0 + 0.001)
    first = memory.prepare_add(messages(1, 0), USER, ts=T0)
    second = memory.prepare_add(messages(1, 2), USER, ts=T0)
    assert len(first.episodes) == len(second.episodes) == 2
    memory.apply_add(first)
    late = memory.apply_add(second)  # message 1 is stored now; message 2 is not
    assert len(late.episode_uids) == 1 and late.episodes_skipped == 1
    assert counts(memory, USER) == counts(memory, "alone")
    assert counts(memory, USER)[0] == 3
    tally.cases += 3


def test_two_ingests_of_one_log_at_once_store_each_message_once(
    tmp_path: Path, tally: Tally
) -> None:
    log = tmp_path / "chat.jsonl"
    lines = [{"role": "user", "content": said(i), "timestamp": T0 + 60 * i} for i in range(24)]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    reports = _twice_at_once(tmp_path / "data", ["ingest", str(log), *USER_ARGS, "--json"])
    assert sum(r["messages_added"] for r in reports) == len(lines)
    with Memory(data_dir=tmp_path / "data", embedding_preload=False) as mem:
        together = counts(mem, USER)
    solo = tmp_path / "solo"
    done = subprocess.run(
        _command(solo, ["ingest", str(log), *USER_ARGS]),
        capture_output=True,
        text=True,
        env=_ENV,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with Memory(data_dir=solo, embedding_preload=False) as mem:
        assert together == counts(mem, USER)
    tally.cases += len(lines)


def _letter(i: int, user: str) -> DeadLetter:
    record = ChatRecord(user_id=user, role="user", content=said(i), source=f"chat.jsonl:{i}")
    return DeadLetter(
        record=record,
        user_id=user,
        checksum=f"c{i}",
        path="chat.jsonl",
        location=str(i),
        stage="extract",
        reason="outage",
    )


def test_a_rewrite_of_the_dead_letters_keeps_the_letters_of_other_processes(
    tmp_path: Path, tally: Tally
) -> None:
    path = tmp_path / "dead_letters.jsonl"
    earlier = DeadLetters(path)  # a run whose messages 0 and 1 failed
    earlier.add(_letter(0, "r"))
    earlier.add(_letter(1, "r"))
    earlier.close()
    retry = DeadLetters(path)  # an `ingest --retry-failed` reads them ...
    app = DeadLetters(path)  # ... while another process's adds fail
    app.add(_letter(2, "app"))
    retry.resolve("c0")
    retry.resolve("c1")
    app.add(_letter(1, "r"))  # failed again, after the retry stored it
    retry.close()  # the retry rewrites the file without what it resolved
    app.add(_letter(3, "app"))
    app.close()
    assert {letter.checksum for letter in DeadLetters(path).letters()} == {"c1", "c2", "c3"}
    tally.cases += 4


def test_two_loads_of_one_file_at_once_write_it_once(tmp_path: Path, tally: Tally) -> None:
    triples = tmp_path / "triples.tsv"
    triples.write_text("".join(f"E{i % 200}\tKNOWS\tF{i}\n" for i in range(2000)))
    args = ["load", str(triples), *USER_ARGS, "--chunk-size", "500", "--json"]
    reports = _twice_at_once(tmp_path / "data", args)
    assert sorted(r["facts_added"] for r in reports) == [0, 2000]
    with Memory(data_dir=tmp_path / "data", embedding_preload=False) as mem:
        entities = mem.top_entities(USER, 5000)
        assert sum(e.entity.mentions for e in entities) == 4000  # each fact's two ends, once
        assert mem.stats(USER).facts == 2000
    tally.cases += 2000


def _twice_at_once(data_dir: Path, args: list[str]) -> list[dict[str, Any]]:
    """The JSON reports of two `graphmem` processes running `args` on `data_dir` at once."""
    runs = [
        subprocess.Popen(
            _command(data_dir, args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_ENV,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    reports = []
    for run in runs:
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        reports.append(json.loads(out))
    return reports


def _command(data_dir: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "engine.cli", "--data-dir", str(data_dir), *args]
