"""An export ingested again after it changed: a message the export identifies by its own id
(a ChatGPT message id, a Claude uuid, a Slack channel and ts) is one message whatever its text.
A renamed user, an edited message or a new title stores nothing new and rewrites nothing
stored, and the report counts the messages that changed; a newer export adds exactly its new
messages; a failed message and an interrupted run are still stored once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.embedding import Embedder
from engine.ingest.report import IngestProgress, summary_text
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, http_error
from engine.transfer.export import read_snapshot
from tests import chatgpt_export, claude_export, slack_export
from tests.integration.test_ingest import llm_memory, mention

CHANGED_2 = (
    "2 messages changed since they were stored (edited, or a name they mention renamed): "
    "kept as stored"
)


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, tmp_path: Path, scripted_llm: ScriptedLLM
) -> Iterator[Memory]:
    scripted_llm.default = mention  # one fact per message: its first word of 4+ letters
    memory = llm_memory(store, embedder, tmp_path, scripted_llm)
    yield memory
    memory.close()


def episodes(store: GraphStore, user: str) -> dict[str | None, tuple[str | None, str, str]]:
    """The user's episodes by source: speaker, text, metadata."""
    return {
        e.source: (e.speaker, e.content, e.metadata or "")
        for e in read_snapshot(store, user).episodes
    }


def mentioned(mem: Memory, user: str) -> set[str]:
    return {f.object for f in mem.get_all(user)}


# -- Slack --------------------------------------------------------------------------------------


def renamed_and_edited(folder: Path, **more: Any) -> Path:
    """The Slack export again: Bob renamed (Ann's thread mentions him), Ann's Alfama message
    edited; `more` adds or replaces files."""
    users = json.loads(json.dumps(slack_export.USERS))
    users[1]["profile"]["display_name"] = "Robert Stone"
    day2 = slack_export.days()["general/2024-05-04.json"]
    day2[1] |= {"text": "Booked the hotel in Graça instead.", "edited": {"user": "U01ANN"}}
    files = {"users.json": users, "general/2024-05-04.json": day2, **more}
    return slack_export.write_export(folder, files)


def test_a_renamed_user_and_an_edited_slack_message_store_nothing_new(
    mem: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = slack_export.write_export(tmp_path / "slack")
    assert mem.ingest(folder, user_id="team", concurrency=1).messages_added == 5
    before, facts = episodes(store, "team"), mentioned(mem, "team")

    again = mem.ingest(renamed_and_edited(folder), user_id="team", concurrency=1)

    assert (again.messages_added, again.messages_skipped, again.messages_changed) == (0, 5, 2)
    assert CHANGED_2 in summary_text(again)
    assert episodes(store, "team") == before  # texts and speakers kept as stored
    assert mentioned(mem, "team") == facts
    original = slack_export.write_export(folder)  # the first export again: nothing changed
    dry = mem.ingest(original, user_id="team", dry_run=True)
    assert (dry.messages_pending, dry.messages_changed) == (0, 0)
    assert "changed since" not in summary_text(dry)


def test_a_newer_slack_export_adds_exactly_its_new_messages(
    mem: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = slack_export.write_export(tmp_path / "slack")
    mem.ingest(folder, user_id="team", concurrency=1)
    later = slack_export.message("U01ANN", "See you in Lisbon!", f"{slack_export.DAY2 + 86400}.5")
    newer = renamed_and_edited(folder, **{"general/2024-05-05.json": [later]})

    report = mem.ingest(newer, user_id="team", concurrency=1)

    assert (report.messages_added, report.messages_skipped, report.messages_changed) == (1, 5, 2)
    stored = episodes(store, "team")
    assert len(stored) == 6
    assert stored[f"C01GEN:{slack_export.DAY2 + 86400}.5"][:2] == ("Ann Lee", "See you in Lisbon!")


def test_a_failed_message_changed_since_is_extracted_again_from_its_stored_text(
    mem: Memory, store: GraphStore, tmp_path: Path, scripted_llm: ScriptedLLM
) -> None:
    folder = slack_export.write_export(tmp_path / "slack")
    scripted_llm.script(http_error(500, "down"))  # the first in time: Ann's thread, naming Bob
    first = mem.ingest(folder, user_id="team", concurrency=1)
    assert (first.messages_added, first.messages_failed) == (4, 1)
    before = episodes(store, "team")

    again = mem.ingest(renamed_and_edited(folder), user_id="team", concurrency=1)

    assert (again.messages_added, again.messages_retried, again.messages_changed) == (1, 1, 2)
    assert (again.messages_failed, again.dead_letters_resolved) == (0, 1)
    assert episodes(store, "team") == before
    assert "stone" in mentioned(mem, "team")  # "Hi @Bob Stone, ...", as stored
    assert "robert" not in mentioned(mem, "team")
    assert not (tmp_path / "dead_letters.jsonl").exists()


def test_a_run_interrupted_then_resumed_on_a_changed_export_stores_each_message_once(
    mem: Memory, store: GraphStore, tmp_path: Path
) -> None:
    folder = slack_export.write_export(tmp_path / "slack")

    def stop_after_two(progress: IngestProgress) -> None:
        if progress.done >= 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        mem.ingest(folder, user_id="team", concurrency=1, progress=stop_after_two)
    assert len(episodes(store, "team")) == 2  # Ann's thread and Bob's reply, the first two
    resumed = mem.ingest(renamed_and_edited(folder), user_id="team", concurrency=1)

    assert (resumed.messages_added, resumed.messages_skipped, resumed.messages_changed) == (3, 2, 1)
    stored = episodes(store, "team")
    assert sorted(stored) == sorted(s[0] for s in slack_export.SHOWN)
    assert stored[f"C01GEN:{slack_export.THREAD}"][1] == slack_export.SHOWN[0][2]  # "@Bob Stone"
    assert (
        stored[f"C01GEN:{slack_export.DAY2 + 30}.000300"][1] == "Booked the hotel in Graça instead."
    )


# -- ChatGPT and Claude -------------------------------------------------------------------------


def chatgpt_edited() -> list[dict[str, Any]]:
    """The ChatGPT export again: a user message edited in place, a conversation renamed, and a
    new message at the end of the other conversation."""
    lisbon, dinner = chatgpt_export.export()
    lisbon["title"] = "Lisbon move"
    lisbon["mapping"]["a-u1"]["message"]["content"]["parts"] = ["I'm moving to Porto instead."]
    new = chatgpt_export.message("b-u3", "user", ["She loves rice."], chatgpt_export.B0 + 120)
    dinner["mapping"]["b-a2"]["children"] = ["b-u3"]
    dinner["mapping"]["b-u3"] = {"id": "b-u3", "message": new, "parent": "b-a2", "children": []}
    dinner["current_node"] = "b-u3"
    return [lisbon, dinner]


def claude_edited() -> list[dict[str, Any]]:
    """The Claude export again: a message edited, a conversation renamed, a new message."""
    kyoto, dentist = claude_export.export()
    kyoto["name"] = "Kyoto, October"
    edited = [claude_export.text("I'm going to Osaka in October.")]
    kyoto["chat_messages"][0] = claude_export.message(
        "k-1", "human", edited, "2024-06-01T09:00:05.123456Z"
    )
    new = [claude_export.text("The dentist moved it to Monday.")]
    dentist["chat_messages"].append(
        claude_export.message("d-4", "human", new, "2024-06-04T10:00:00Z")
    )
    return [kyoto, dentist]


@pytest.mark.parametrize(
    ("export", "edited", "new"),
    [(chatgpt_export, chatgpt_edited, "b-u3"), (claude_export, claude_edited, "d-4")],
    ids=["chatgpt", "claude"],
)
def test_an_edited_message_and_a_new_title_keep_what_is_stored(
    mem: Memory, store: GraphStore, tmp_path: Path, export: Any, edited: Any, new: str
) -> None:
    path = export.write_export(tmp_path / "export")
    shown = len(export.SHOWN)
    assert mem.ingest(path, user_id="ann", concurrency=1).messages_added == shown
    before = episodes(store, "ann")

    again = mem.ingest(export.write_export(tmp_path / "export", edited()), user_id="ann")

    assert (again.messages_added, again.messages_skipped, again.messages_changed) == (1, shown, 1)
    assert "1 message changed since it was stored" in summary_text(again)
    after = episodes(store, "ann")
    assert {source: after[source] for source in before} == before  # text and title as stored
    assert set(after) - set(before) == {new}
