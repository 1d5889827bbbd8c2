"""The MCP tools that correct and forget memory, and the user listing a connection may see."""

from __future__ import annotations

import pytest

from engine.errors import NotFoundError
from engine.mcp_server import tools
from engine.memory import Memory


def _fact_id(memory: Memory, user: str, text: str) -> str:
    return next(f.uid for f in memory.get_all(user) if f.text == text)


def test_update_then_history_of_a_fact(memory: Memory) -> None:
    memory.add_facts([("Alice", "LIVES_IN", "Paris", "Alice lives in Paris")], "alice")
    uid = _fact_id(memory, "alice", "Alice lives in Paris")

    out = tools.update_memory(memory, "alice", uid, invalid_at="2024-05-01")
    history = tools.memory_history(memory, "alice", uid)

    assert out.data["invalid_at"].startswith("2024-05-01")
    assert [e["event"] for e in history.data["events"]] == ["ADD", "INVALIDATE"]
    with pytest.raises(NotFoundError):
        tools.update_memory(memory, "bob", uid, text="Bob lives in Rome")


def test_delete_memory_with_messages_forgets_what_was_said(memory: Memory) -> None:
    memory.add("My password hint is my cat Felix", "alice")
    fact = memory.get_all("alice")[0]

    out = tools.delete_memory(memory, "alice", fact.uid, with_messages=True)
    found = memory.search("password hint cat", "alice")

    assert out.data["episodes"], "the message behind the fact is deleted too"
    assert not found.episodes
    assert fact.uid not in {hit.fact.uid for hit in found.facts}


def test_delete_message_by_the_id_search_shows(memory: Memory) -> None:
    memory.add("I bought a red kayak", "alice")
    message = memory.search("kayak", "alice").episodes[0].episode

    assert f"message id {message.uid}" in tools.search_memory(memory, "alice", "kayak").text
    with pytest.raises(NotFoundError):
        tools.delete_message(memory, "bob", message.uid)
    tools.delete_message(memory, "alice", message.uid)
    assert not memory.search("kayak", "alice").episodes


def test_a_bound_connection_lists_only_its_own_user(memory: Memory) -> None:
    memory.add_facts([("Alice", "LIKES", "Tea")], "alice")
    memory.add_facts([("Bob", "LIKES", "Coffee")], "bob")

    bound = tools.list_users(memory, "alice")
    every = tools.list_users(memory, None)

    assert [u["user_id"] for u in bound.data["users"]] == ["alice"]
    assert "bob" not in bound.text
    assert {"alice", "bob"} <= {u["user_id"] for u in every.data["users"]}


def test_export_pages_skip_no_record_when_one_is_deleted_between_pages(memory: Memory) -> None:
    memory.add_facts([(f"S{i}", "LIKES", f"O{i}") for i in range(6)], "alice")
    paged: list[str] = []
    cursor = None
    while True:
        page = tools.export_graph(memory, "alice", limit=3, cursor=cursor).data
        if page["facts"] and not paged:  # the first page of facts read: one of them goes
            memory.delete(page["facts"][0]["uid"], "alice")
        paged += [f["uid"] for f in page["facts"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break

    assert {f.uid for f in memory.get_all("alice")} <= set(paged)


def test_export_pages_give_times_as_epoch_seconds(memory: Memory) -> None:
    """The export's reads give a time as whole seconds and parts of 2**-52 s (FalkorDB
    rounds a float in a reply): a page gives the seconds, exactly."""
    fact = {"subject": "Alice", "predicate": "LIVES_IN", "object": "Lisbon"}
    memory.add_facts([{**fact, "valid_at": 1_690_000_000.123456}], "alice")

    page = tools.export_graph(memory, "alice", limit=50).data

    assert [f["valid_at"] for f in page["facts"]] == [1_690_000_000.123456]
    assert [f["relationship"]["valid_at"] for f in page["facts"]] == [1_690_000_000.123456]
    assert all(isinstance(e["created_at"], float) for e in page["entities"])
    assert all(isinstance(h["ts"], float) for h in page["history"])
