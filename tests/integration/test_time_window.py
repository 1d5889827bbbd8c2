"""`since` / `until` beyond search (issue 52, M4): the reads behind `get_all` and
`top_entities` keep what became true (facts) or was mentioned (entities) in a window."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from engine.cli import build_parser
from engine.knowledge import top_entities
from engine.mcp_server import tools as mcp_tools
from engine.memory import Memory

MAY = datetime(2023, 5, 1, tzinfo=UTC).timestamp()
JUNE = datetime(2023, 6, 1, tzinfo=UTC).timestamp()
JULY = datetime(2023, 7, 1, tzinfo=UTC).timestamp()


def _said(memory: Memory) -> None:
    memory.add("Maria adopted a puppy called Biscuit.", user_id="u", ts=MAY)
    memory.add("John bought a red kayak.", user_id="u", ts=JULY)


def test_facts_of_a_window(memory: Memory) -> None:
    _said(memory)
    reads = memory.reads

    def texts(since: float | None, until: float | None) -> set[str]:
        page = reads.list_facts("u", include_invalid=False, skip=0, limit=50, window=(since, until))
        return {f.text for f in page}

    every = texts(None, None)
    later, earlier = texts(JUNE, None), texts(None, JUNE)
    assert later and earlier and later | earlier == every and not later & earlier
    assert all("kayak" in t for t in later) and all("kayak" not in t for t in earlier)
    assert texts(JUNE, JUNE + 1) == set()


def test_entities_of_a_window(memory: Memory) -> None:
    """Entities are seen when written (first_seen / last_seen), whatever the message's time."""
    memory.add("Maria adopted a puppy called Biscuit.", user_id="u", ts=MAY)
    between = time.time()
    time.sleep(0.05)
    memory.add("John bought a red kayak.", user_id="u", ts=JULY)

    def names(since: float | None, until: float | None) -> set[str]:
        found = top_entities(memory.reads, "u", 20, "frequency", JULY, 86400.0, (since, until))
        return {s.entity.name for s in found}

    assert "Biscuit" in names(None, between) and "Biscuit" not in names(between, None)
    assert "John" in names(between, None) and "John" not in names(None, between)


def test_get_all_and_top_entities_take_the_window(memory: Memory) -> None:
    _said(memory)

    later = memory.get_all("u", since="2023-06-01")
    earlier = memory.get_all("u", until="2023-06-01")
    named = {s.entity.name for s in memory.top_entities("u", 20, since=time.time() + 60)}

    assert later and all("kayak" in f.text for f in later)
    assert earlier and all("kayak" not in f.text for f in earlier)
    assert named == set()


def test_entity_takes_the_window(memory: Memory) -> None:
    """`entity()` (Python, MCP `get_entity`, CLI `entity`) keeps the facts that became true
    and the messages said in the window (M4)."""
    memory.add("Maria adopted a puppy called Biscuit.", user_id="u", ts=MAY)
    memory.add("Maria bought a red kayak.", user_id="u", ts=JULY)

    every = memory.entity("Maria", "u")
    later = memory.entity("Maria", "u", since="2023-06-01")
    earlier = mcp_tools.get_entity(memory, "u", "Maria", until="2023-06-01").data
    parsed = build_parser().parse_args(["entity", "Maria", "--user", "u", "--since", "2023-06-01"])

    assert len(every.facts) > len(later.facts) > 0 and len(every.episodes) == 2
    assert all("kayak" in f.text for f in later.facts)
    assert [e.content for e in later.episodes] == ["Maria bought a red kayak."]
    assert [e["content"] for e in earlier["episodes"]] == ["Maria adopted a puppy called Biscuit."]
    assert all("kayak" not in f["text"] for f in earlier["facts"])
    assert parsed.since == datetime(2023, 6, 1, tzinfo=UTC) and parsed.until is None


def test_an_instant_window_finds_the_message_of_that_instant(memory: Memory) -> None:
    """`since` equal to `until` is one instant, at every door alike: given the time the
    message was said (to the microsecond, as a Slack `ts` gives it) or the time graphmem
    shows for it (the embedded store gives times back to 15 significant digits)."""
    said = datetime(2024, 6, 1, 9, 0, 5, 123456, tzinfo=UTC)
    memory.add("Maria adopted a puppy called Biscuit.", user_id="u", ts=said)
    shown = memory.entity("Maria", "u").episodes[0].ts
    assert shown is not None

    for instant in (said, shown):
        found = memory.search("Biscuit puppy", user_id="u", since=instant, until=instant)
        entity = memory.entity("Maria", "u", since=instant, until=instant)
        assert [h.episode.text for h in found.episodes] == [
            "Maria adopted a puppy called Biscuit."
        ], instant
        assert found.facts and entity.facts and len(entity.episodes) == 1, instant
