"""A rerun over a changed chat log adds only what is new: a timed message is the same message
wherever its file puts it (a line added at the top, a renamed file, another order), an untimed
one keeps its line, a LoCoMo turn its dia_id; stores written with the older checksums (which
held the file position) are read, failed episodes and dead letters included."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.ingest.chat_records import ChatRecord
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, http_error
from engine.transfer.export import read_snapshot
from tests.integration.test_ingest import T0, _locomo, episodes, jsonl, llm_memory, mention

TEXTS = ["Hiking today.", "Chess later.", "Tennis soon.", "Piano lessons.", "Garden work."]


def lines(texts: list[str], start_minute: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "session_id": "s1",
            "role": "user",
            "content": text,
            "ts": (T0 + timedelta(minutes=start_minute + i)).isoformat(),
        }
        for i, text in enumerate(texts)
    ]


def mentions(memory: Memory, user: str) -> list[int]:
    return sorted(e.entity.mentions for e in memory.top_entities(user, 50, "frequency"))


def legacy_checksum(user: str, row: dict[str, Any], source: str) -> str:
    """The checksum a store written before this change holds for a JSONL line, computed here
    the old way: user, session, role, text, epoch time and the line's `name:line` source."""
    ts = repr(float(T0.timestamp() + 60 * TEXTS.index(row["content"])))
    parts = [user, row["session_id"], row["role"], row["content"], ts, source]
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def old_checksums(patch: pytest.MonkeyPatch) -> None:
    """Ingest as the code before this change did: every record keyed with its source."""
    patch.setattr(ChatRecord, "identified_by_time", property(lambda self: False))


def stored_checksums(store: GraphStore, user: str) -> set[str]:
    return {e.checksum for e in read_snapshot(store, user).episodes}


def test_a_line_added_at_the_top_of_a_timed_log_adds_only_it(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", lines(TEXTS, start_minute=1))
    first = memory.ingest(path, user_id="t")
    jsonl(path, lines(["Morning run."]) + lines(TEXTS, start_minute=1))
    again = memory.ingest(path, user_id="t")
    assert (first.messages_added, again.messages_added, again.messages_skipped) == (5, 1, 5)
    assert episodes(store, "t") == 6
    memory.ingest(path, user_id="fresh")  # the grown file, read once
    assert mentions(memory, "t") == mentions(memory, "fresh")  # no mention counted twice


@pytest.mark.parametrize("change", ["renamed", "reordered", "as csv rows moved down"])
def test_a_renamed_or_reordered_log_adds_nothing(
    memory: Memory, store: GraphStore, tmp_path: Path, change: str
) -> None:
    rows = lines(TEXTS)
    if change == "as csv rows moved down":
        header = "session,role,content,timestamp\n"
        path = tmp_path / "chat.csv"
        path.write_text(header + "".join(f"s1,user,{r['content']},{r['ts']}\n" for r in rows))
        memory.ingest(path, user_id="t")
        path.write_text(
            header + "\n\n" + "".join(f"s1,user,{r['content']},{r['ts']}\n" for r in rows[::-1])
        )
    else:
        path = jsonl(tmp_path / "chat.jsonl", rows)
        memory.ingest(path, user_id="t")
        if change == "renamed":
            path = path.rename(tmp_path / "chat-export-2.jsonl")
        else:
            jsonl(path, rows[::-1])
    again = memory.ingest(path, user_id="t")
    assert (again.messages_added, again.messages_skipped, again.llm_calls) == (0, 5, 0)
    assert episodes(store, "t") == 5


def test_two_identical_untimed_lines_stay_two_messages(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = jsonl(tmp_path / "chat.jsonl", [{"role": "user", "content": "ok"}] * 2)
    first = memory.ingest(path, user_id="t")
    again = memory.ingest(path, user_id="t")
    assert (first.messages_added, first.warnings) == (2, [])
    assert (again.messages_added, again.messages_skipped) == (0, 2)
    assert episodes(store, "t") == 2


def test_a_store_written_with_the_old_checksums_adds_nothing_on_a_rerun(
    memory: Memory, store: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = lines(TEXTS)
    path = jsonl(tmp_path / "chat.jsonl", rows)
    with monkeypatch.context() as old:
        old_checksums(old)
        assert memory.ingest(path, user_id="t").messages_added == 5
    legacy = {legacy_checksum("t", row, f"chat.jsonl:{n}") for n, row in enumerate(rows, 1)}
    assert stored_checksums(store, "t") == legacy  # what the old code stored

    again = memory.ingest(path, user_id="t")
    assert (again.messages_added, again.messages_skipped, again.llm_calls) == (0, 5, 0)
    assert episodes(store, "t") == 5


def test_a_message_that_failed_under_the_old_checksum_is_retried_in_its_episode(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    scripted_llm.default = mention
    mem = llm_memory(store, embedder, tmp_path, scripted_llm)
    path = jsonl(tmp_path / "chat.jsonl", lines(TEXTS[:2]))
    letters = tmp_path / "dead_letters.jsonl"
    for replay in ("rerun", "retry_failed"):
        mem.delete_all(user_id="t")
        scripted_llm.script(http_error(500, "down"))
        with monkeypatch.context() as old:
            old_checksums(old)
            assert mem.ingest(path, user_id="t", concurrency=1).messages_failed == 1
        failed = stored_checksums(store, "t")
        # a letter as the old code wrote it: its record has no `positional`
        [letter] = [json.loads(line) for line in letters.read_text(encoding="utf-8").splitlines()]
        del letter["record"]["positional"]
        letters.write_text(json.dumps(letter) + "\n")

        inputs = path if replay == "rerun" else []
        again = mem.ingest(inputs, user_id="t", retry_failed=replay == "retry_failed")
        assert (again.messages_added, again.messages_failed, again.dead_letters_resolved) == (
            1,
            0,
            1,
        )
        assert stored_checksums(store, "t") == failed  # the failed episode became good, in place
        assert {f.object for f in mem.get_all("t")} == {"hiking", "chess"}
        assert not letters.exists()


def test_a_locomo_rerun_adds_nothing_and_keeps_the_dia_id_in_the_checksum(
    memory: Memory, store: GraphStore, tmp_path: Path
) -> None:
    path = _locomo(tmp_path / "locomo.json")
    first = memory.ingest(path, users_from_file=True)
    again = memory.ingest(path, users_from_file=True)
    assert (first.messages_added, again.messages_added, again.messages_skipped) == (3, 0, 3)
    assert episodes(store, "conv-x") == 3
    for turn in read_snapshot(store, "conv-x").episodes:  # as the code before this change did
        parts = ["conv-x", "session_1", "user", turn.content, repr(turn.ts), turn.source or ""]
        assert turn.checksum == hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
