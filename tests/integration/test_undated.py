"""A chat-log message kept without a time stays undated end to end (issue 52, A5): stored with
a marker, shown as "undated" (never as said today) in search results, `context()`, `entity()`
and the CLI, outside every `since` / `until` window, and kept so by export and import."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from engine.cli import read as cli_read
from engine.mcp_server import tools as mcp_tools
from engine.mcp_server.render import render_search
from engine.memory import Memory
from engine.models import Episode

TODAY = f"{datetime.now(UTC):%Y-%m-%d}"
DATED = {"role": "user", "content": "I moved to Lisbon.", "timestamp": "2023-05-01T10:00:00Z"}
UNDATED = {"role": "user", "content": "My sister Clara plays the cello."}


def _ingest(memory: Memory, tmp_path: Path) -> None:
    log = tmp_path / "chat.jsonl"
    log.write_text("\n".join(json.dumps(m) for m in (DATED, UNDATED)) + "\n", encoding="utf-8")
    report = memory.ingest(log, user_id="u")
    assert report.messages_added == 2


def _cello(memory: Memory, mode: str = "episodes", **window: str) -> list[str]:
    found = memory.search("Who plays the cello?", user_id="u", mode=mode, **window)  # type: ignore[arg-type]
    return [h.episode.line() for h in found.episodes if "cello" in h.episode.text]


def test_an_undated_message_is_shown_undated(memory: Memory, tmp_path: Path) -> None:
    _ingest(memory, tmp_path)

    result = memory.search("Who plays the cello?", user_id="u")
    lines = _cello(memory)
    clara = memory.entity("Clara", user_id="u")
    lisbon = _cello(memory) and memory.search("Where did I move?", user_id="u", mode="episodes")

    assert lines == ["[undated] user: My sister Clara plays the cello."]
    assert "[undated] user: My sister Clara plays the cello." in result.context()
    assert TODAY not in result.context()
    assert clara is not None and [e.ts for e in clara.episodes] == [None]
    assert all(h.fact.valid_at is None for h in result.facts if "cello" in h.fact.text)
    assert any(h.episode.ts is not None for h in lisbon.episodes if "Lisbon" in h.episode.text)


def test_a_window_leaves_undated_messages_out(memory: Memory, tmp_path: Path) -> None:
    _ingest(memory, tmp_path)

    assert _cello(memory) != []
    assert _cello(memory, since="2000-01-01") == []
    assert _cello(memory, until="2100-01-01") == []
    # the dual search listed it as the source of its fact, which passes by when it was stored
    assert _cello(memory, "dual") != []
    assert _cello(memory, "dual", since="2000-01-01") == []
    windowed = memory.search("Who plays the cello?", user_id="u", since="2000-01-01")
    assert "user: My sister Clara" not in windowed.context(max_tokens=400)


def test_export_and_import_keep_it_undated(memory: Memory, tmp_path: Path) -> None:
    _ingest(memory, tmp_path)

    document = json.loads(memory.export("u"))
    memory.import_(json.dumps(document), user_id="v")
    clara = memory.entity("Clara", user_id="v")

    marks = {e["content"]: e.get("undated") for e in document["episodes"]}
    assert marks == {DATED["content"]: None, UNDATED["content"]: True}
    assert clara is not None and [e.ts for e in clara.episodes] == [None]


def test_the_cli_and_mcp_say_undated(memory: Memory, tmp_path: Path) -> None:
    _ingest(memory, tmp_path)

    result = memory.search("Who plays the cello?", user_id="u")
    clara = memory.entity("Clara", user_id="u")
    assert clara is not None
    searches = [cli_read.search_text(result), render_search(result)]
    views = [cli_read._entity_text(clara), mcp_tools._entity_text(clara)]
    facts = [line for line in views[0].split("messages:")[0].splitlines() if "cello" in line]

    assert all("undated" in text and TODAY not in text for text in searches)
    assert "[undated] user: My sister Clara plays the cello." in views[0]
    assert '[undated] user: "My sister Clara plays the cello."' in views[1]  # MCP quotes it
    assert facts and all(TODAY not in line for line in facts)  # seen today, not said today
    assert all(line.startswith("  [undated] ") for line in facts)  # the CLI list's date column


def test_a_stored_episode_without_the_marker_keeps_its_time() -> None:
    """Stores written before the marker existed: every episode had a time."""
    props = {"uid": "e", "user_id": "u", "role": "user", "content": "hi", "ts": 1.7e9}

    assert Episode.from_props({**props, "checksum": "c"}).ts == datetime.fromtimestamp(1.7e9, UTC)
    assert Episode.from_props({**props, "checksum": "c", "undated": True}).ts is None
