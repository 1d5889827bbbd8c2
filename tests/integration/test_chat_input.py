"""Chat logs as people write them, through `Memory.ingest` and the CLI: speakers, dates that
cannot be read, image-only turns, duplicates, mixed languages; warnings in the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.embedding import Embedder
from engine.extraction.offline import OfflineExtractor
from engine.ingest.report import summary_text
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.store.falkordb_server import EmbeddedServer
from engine.store.reads import Reads
from engine.transfer.export import read_snapshot

pytestmark = pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Memory:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return Memory(store=store, embedder=embedder, data_dir=tmp_path)


def jsonl(path: Path, rows: list[dict[str, Any] | str]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def locomo(path: Path, turns: list[dict[str, Any]], date: str = "29.12.2023, 22:42:04") -> Path:
    conversation = {"speaker_a": "Ann", "speaker_b": "Bob", "session_1": turns}
    data = [{"sample_id": "conv-q", "conversation": conversation | {"session_1_date_time": date}}]
    path.write_text(json.dumps(data))
    return path


def episode_texts(store: GraphStore, user: str) -> list[str]:
    return sorted(e.content for e in read_snapshot(store, user).episodes)


def test_an_unreadable_time_is_a_warning_and_the_message_keeps_its_place(
    mem: Memory, tmp_path: Path
) -> None:
    rows = [
        {"user_id": "u1", "role": "user", "content": "I live in Paris.", "ts": "2024-03-01T10:00"},
        {"user_id": "u1", "role": "user", "content": "I live in Berlin.", "ts": "at tea time"},
        {"user_id": "u1", "role": "user", "content": "I live in Madrid.", "ts": "2024-03-01T10:02"},
    ]
    path = jsonl(tmp_path / "chat.jsonl", rows)
    report = mem.ingest(path, concurrency=1, users_from_file=True)

    assert (report.messages_added, report.errors) == (3, [])
    [warning] = report.warnings
    assert (warning.path, warning.location) == (str(path), "line 2")
    assert warning.reason.startswith("unparseable timestamp 'at tea time'")
    places = {f.object: f.is_valid for f in mem.get_all("u1", include_invalid=True)}
    assert places == {"Paris": False, "Berlin": False, "Madrid": True}  # applied in file order
    text = summary_text(report)
    assert "warnings (kept or skipped as said) (1):" in text
    assert f"{path}:2: unparseable timestamp 'at tea time'" in text


def test_a_locomo_log_gives_one_entity_per_speaker(
    mem: Memory, store: GraphStore, tmp_path: Path
) -> None:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog named Rex."},
        {"speaker": "Bob", "dia_id": "D1:2", "text": "I love hiking."},
        {"speaker": "Ann", "dia_id": "D1:3", "text": "I went to Lisbon yesterday."},
    ]
    report = mem.ingest(locomo(tmp_path / "lc.json", turns), users_from_file=True)
    assert (report.messages_added, report.warnings) == (3, [])
    facts = {(f.subject, f.predicate, f.object): f for f in mem.get_all("conv-q")}
    assert set(facts) >= {("Ann", "ADOPTS", "Rex"), ("Bob", "LOVES", "hiking")}
    lisbon = facts[("Ann", "GOES_TO", "Lisbon")]
    assert lisbon.valid_at == datetime(2023, 12, 28, tzinfo=UTC)  # the day before the session
    assert Reads(store).counts("conv-q")["entities"] == 5  # Ann, Bob, Rex, hiking, Lisbon: no USER
    assert report.facts_per_message == pytest.approx(3 / 3)


def test_bad_turns_are_kept_or_reported_through_ingest(
    mem: Memory, store: GraphStore, tmp_path: Path
) -> None:
    turns = [
        {"speaker": "Ann", "dia_id": "D1:1", "img_url": ["x"], "blip_caption": "a dog on a beach"},
        {"speaker": "Ann", "dia_id": "D1:2", "text": " "},
        {"dia_id": "D1:3", "text": "I like tea."},
        {"speaker": "Zed", "dia_id": "D1:4", "text": "I like jazz."},
        {"speaker": "Bob", "dia_id": "D1:5", "text": "我喜欢徒步旅行"},
        {"speaker": "Bob", "dia_id": "D1:6", "text": "J'adore Lisbonne, and I love Porto."},
        {"speaker": "Bob", "dia_id": "D1:6", "text": "J'adore Lisbonne, and I love Porto."},
    ]
    report = mem.ingest(locomo(tmp_path / "lc.json", turns), users_from_file=True)

    assert report.messages_added == 5
    assert [(e.location, e.reason) for e in report.errors] == [("conv-q D1:2", "content is empty")]
    assert [w.location for w in report.warnings] == [
        "conv-q D1:1", "conv-q D1:3", "conv-q D1:4", "conv-q D1:6",
    ]  # fmt: skip
    assert episode_texts(store, "conv-q") == sorted(
        [
            "[image: a dog on a beach]",
            "I like tea.",
            "I like jazz.",
            "我喜欢徒步旅行",
            "J'adore Lisbonne, and I love Porto.",
        ]
    )
    facts = {(f.subject, f.predicate, f.object) for f in mem.get_all("conv-q")}
    wanted = {("conv-q", "LIKES", "tea"), ("Zed", "LIKES", "jazz"), ("Bob", "LOVES", "Porto")}
    assert wanted <= facts


def test_the_same_file_twice_warns_about_each_duplicate(mem: Memory, tmp_path: Path) -> None:
    path = jsonl(tmp_path / "chat.jsonl", [{"user_id": "u1", "role": "user", "content": "Hi."}])
    report = mem.ingest([path, path], users_from_file=True)
    [warning] = report.warnings
    assert (report.messages_added, report.messages_skipped) == (1, 1)
    assert warning.reason == f"the same message as {path}: chat.jsonl:1 (same checksum): skipped"


@pytest.fixture
def cli_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    home = tmp_path / "home"
    yield home
    EmbeddedServer(home).stop_if_unused()


def test_cli_summary_shows_facts_per_message_and_warnings(
    cli_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [
        {"user_id": "u1", "role": "user", "content": "I like tea and I love chess."},
        {"user_id": "u1", "role": "user", "content": "Hello there.", "ts": "soon"},
    ]
    path = jsonl(tmp_path / "chat.jsonl", rows)
    assert main(["--data-dir", str(cli_home), "ingest", str(path), "--user", "u1"]) == 0
    out = capsys.readouterr().out
    assert "facts: 2 added, 0 updated, 0 invalidated; 1.00 per message added" in out
    assert f"{path}:2: unparseable timestamp 'soon'" in out
    assert main(["--data-dir", str(cli_home), "ingest", str(path), "--user", "u1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["messages_skipped"], report["facts_per_message"]) == (2, 0.0)
    assert [w["location"] for w in report["warnings"]] == ["line 2"]
