"""`engine.compat.mem0.Memory` runs Mem0's documented examples (quick start, graph memory,
multiple agents) as written, with `mem0` resolving to graphmem's facade."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import engine.compat.mem0 as facade
import engine.compat.mem0_reads as mem0_reads
from engine.embedding import Embedder
from engine.errors import (
    ExtractionError,
    InvalidInputError,
    NotFoundError,
    StoreUnavailableError,
)
from engine.memory import Memory as GraphMemory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, http_error, tool_call
from tests.integration.test_ingest import llm_memory

MOVIE_CHAT = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about a thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant",
     "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies."},
]  # fmt: skip
MOVIE_EXTRACTION = {
    "entities": [
        {"name": "USER", "type": "Person"},
        {"name": "movie night", "type": "Activity"},
        {"name": "thriller movies", "type": "Thing"},
        {"name": "sci-fi movies", "type": "Thing"},
    ],
    "facts": [
        {"source": "USER", "predicate": "PLANS", "target": "movie night",
         "fact": "User is planning to watch a movie tonight."},
        {"source": "USER", "predicate": "DISLIKES", "target": "thriller movies",
         "fact": "User is not a big fan of thriller movies."},
        {"source": "USER", "predicate": "LOVES", "target": "sci-fi movies",
         "fact": "User loves sci-fi movies."},
    ],
}  # fmt: skip


@pytest.fixture
def mem0_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """`import mem0` gives graphmem's facade; its store lives in a temporary data dir."""
    monkeypatch.setitem(sys.modules, "mem0", facade)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    yield


def test_the_python_quickstart_runs_as_documented(
    mem0_module: None, scripted_llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    from mem0 import Memory  # type: ignore[import-not-found]

    monkeypatch.setenv("OPENAI_BASE_URL", scripted_llm.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "")  # restored after the test, as the doc's line is not
    os.environ["OPENAI_API_KEY"] = "your-api-key"
    scripted_llm.script(tool_call(MOVIE_EXTRACTION))
    m = Memory()
    try:
        _quickstart(m)
    finally:
        m.close()


def _quickstart(m: Any) -> None:
    result = m.add(MOVIE_CHAT, user_id="alice", metadata={"category": "movie_recommendations"})
    added = {r["memory"]: r for r in result["results"]}
    assert set(added) == {
        "User is planning to watch a movie tonight.",
        "User is not a big fan of thriller movies.",
        "User loves sci-fi movies.",
    }
    assert {r["event"] for r in added.values()} == {"ADD"}
    assert all(r["metadata"] == {"category": "movie_recommendations"} for r in added.values())
    memory_id = added["User is planning to watch a movie tonight."]["id"]

    all_memories = m.get_all(user_id="alice")
    assert len(all_memories["results"]) == 3
    assert {r["user_id"] for r in all_memories["results"]} == {"alice"}
    assert {"source": "alice", "relationship": "loves", "target": "sci-fi movies"} in all_memories[
        "relations"
    ]
    specific_memory = m.get(memory_id)
    assert specific_memory["memory"] == "User is planning to watch a movie tonight."
    assert m.get("892db2ae-06d9-49e5-8b3e-585ef9b85b8e") is None  # an id of another store

    related_memories = m.search(query="What do you know about me?", user_id="alice")
    assert len(related_memories["results"]) == 3
    assert all(r["score"] > 0.0 for r in related_memories["results"])
    newer = m.search("What movies does the user love?", filters={"user_id": "alice"}, limit=1)
    assert [r["memory"] for r in newer["results"]] == ["User loves sci-fi movies."]

    result = m.update(memory_id=memory_id, data="I love India, it is my favorite country.")
    assert result == {"message": "Memory updated successfully!"}
    assert m.get(memory_id)["memory"] == "I love India, it is my favorite country."
    by_meaning = m.graph.search("India is my favourite country", "alice", 1, mode="semantic")
    assert by_meaning.facts[0].fact.text == "I love India, it is my favorite country."
    history = m.history(memory_id=memory_id)
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, "User is planning to watch a movie tonight."),
        ("UPDATE", "User is planning to watch a movie tonight.",
         "I love India, it is my favorite country."),
    ]  # fmt: skip

    m.delete(memory_id=memory_id)
    assert m.get(memory_id) is None
    m.delete_all(user_id="alice")
    assert m.get_all(user_id="alice")["results"] == []
    m.reset()


GRAPH_DOC_MESSAGES = [
    "I like going to hikes",
    "I love to play badminton",
    "I hate playing badminton",
    "My friend name is john and john has a dog named tommy",
    "My name is Alice",
    "John loves to hike and Harry loves to hike as well",
    "My friend peter is the spiderman",
]


def test_the_graph_memory_walkthrough_runs_as_documented(mem0_module: None) -> None:
    from mem0 import Memory

    m = Memory()
    try:
        added = [m.add(text, user_id="alice123") for text in GRAPH_DOC_MESSAGES]
        name = m.search("What is my name?", user_id="alice123")
        spiderman = m.search("Who is spiderman?", user_id="alice123")
        everything = m.get_all(user_id="alice123")
    finally:
        m.close()
    assert sum(len(a["results"]) for a in added) >= len(GRAPH_DOC_MESSAGES)
    assert name["relations"]
    assert {"source": "peter", "relationship": "is", "destination": "spiderman"} in spiderman[
        "relations"
    ]
    assert {r["source"] for r in everything["relations"]} >= {"Alice", "peter"}


def test_memories_of_several_agents_are_told_apart(memory: GraphMemory) -> None:
    m = facade.Memory(memory=memory)
    m.add("I prefer Italian cuisine", user_id="bob", agent_id="food-assistant")
    m.add("I'm allergic to peanuts", user_id="bob", agent_id="health-assistant")
    m.add("I live in Seattle", user_id="bob")
    food = m.search("What food do I like?", user_id="bob", agent_id="food-assistant")
    health = m.get_all(user_id="bob", agent_id="health-assistant")
    everywhere = m.search("Where do I live?", user_id="bob")
    assert [r["memory"] for r in food["results"]] == ["bob prefers Italian cuisine"]
    assert food["results"][0]["agent_id"] == "food-assistant"
    assert [r["memory"] for r in health["results"]] == ["bob is allergic to peanuts"]
    assert len(everywhere["results"]) == 3
    assert everywhere["results"][0]["memory"] == "bob lives in Seattle"
    assert m.get_all(agent_id="food-assistant")["results"] == []  # bob's, not the agent's own


def test_closing_the_facade_leaves_a_memory_it_was_given_open(memory: GraphMemory) -> None:
    """What a library is given it does not close (as `AsyncMemory(memory=...)`)."""
    with facade.Memory(memory=memory) as m:
        m.add("I live in Seattle", user_id="bob")
    assert memory.stats("bob").facts == 1  # still open


def test_calls_graphmem_cannot_honour_are_refused(memory: GraphMemory) -> None:
    m = facade.Memory(memory=memory)
    m.add("I live in Seattle", user_id="bob")
    with pytest.raises(InvalidInputError, match="at least one of user_id"):
        m.add("I like tea")
    with pytest.raises(InvalidInputError, match="infer=False"):
        m.add("I like tea", user_id="bob", infer=False)
    with pytest.raises(InvalidInputError, match="metadata must be a dict, got str"):
        m.add("I like tea", user_id="bob", metadata="tea")
    with pytest.raises(InvalidInputError, match="delete more than asked"):
        m.delete_all(user_id="bob", agent_id="food-assistant")
    with pytest.raises(InvalidInputError, match="filters: 'OR' is not supported"):
        m.search("tea", filters={"user_id": "bob", "OR": [{"category": "food"}]})
    with pytest.raises(InvalidInputError, match="only one of eq, ne, in, nin"):
        m.search("tea", filters={"user_id": "bob", "rating": {"gte": 3}})
    with pytest.raises(InvalidInputError, match="not a memory id"):
        m.update("not-an-id", "x")
    with pytest.raises(NotFoundError):
        m.update("892db2ae-06d9-49e5-8b3e-585ef9b85b8e", "x")
    with pytest.raises(InvalidInputError, match="earlier graphmem"):
        m.delete(f"{'0' * 32}@bob")
    with pytest.raises(NotFoundError):
        m.delete(f"{'0' * 32}@bob", user_id="bob")
    with pytest.raises(InvalidInputError, match="canonical form"):
        m.get_all(user_id=" bob")
    with pytest.raises(InvalidInputError, match="limit must be an integer of at least 1, got '3'"):
        m.search("tea", user_id="bob", limit="3")
    with pytest.raises(InvalidInputError, match="limit must be an integer of at least 1, got 0"):
        m.get_all(user_id="bob", limit=0)
    assert len(m.get_all(user_id="bob")["results"]) == 1  # nothing was lost


def test_from_config_with_a_neo4j_graph_store_builds_a_neo4j_memory(tmp_path: Path) -> None:
    """Mem0's graph_store config opens graphmem's Neo4j store at that URL: with nothing
    listening there, it says so at once, naming the URL and not the password."""
    url = f"bolt://127.0.0.1:{_free_port()}"
    config = {
        "graph_store": {
            "provider": "neo4j",
            "config": {"url": url, "username": "neo4j", "password": "pw-not-shown"},
        },
        "graphmem": {"data_dir": str(tmp_path)},
    }
    with pytest.raises(StoreUnavailableError, match=f"Neo4j is unreachable at {url}") as info:
        facade.Memory.from_config(config_dict=config)
    assert "pw-not-shown" not in str(info.value)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_score_is_a_similarity_and_threshold_applies_to_it(memory: GraphMemory) -> None:
    memory.add_facts(
        [("Alice", "LIVES_IN", "Paris"), ("Peter", "PLAYS", "chess")], user_id="u-alice"
    )
    m = facade.Memory(memory=memory)
    everything = m.search("Where does Alice live?", user_id="u-alice")
    scores = {r["memory"]: r["score"] for r in everything["results"]}
    assert len(scores) == 2 and all(0.0 <= s <= 1.0 for s in scores.values())
    kept = m.search("Where does Alice live?", user_id="u-alice", threshold=0.5)
    assert [r["memory"] for r in kept["results"]] == ["Alice lives in Paris"]
    assert kept["relations"] == [
        {"source": "Alice", "relationship": "lives_in", "destination": "Paris"}
    ]
    with pytest.raises(InvalidInputError, match="threshold must be a number from 0 to 1"):
        m.search("Where does Alice live?", user_id="u-alice", threshold=50)
    assert m.search("Where does Bob live?", user_id="u-alice")["results"] == []


def test_metadata_filters_narrow_search_and_get_all(memory: GraphMemory) -> None:
    m = facade.Memory(memory=memory)
    m.add("I prefer Italian cuisine", user_id="bob", metadata={"category": "food"})
    m.add("I live in Seattle", user_id="bob", metadata={"category": "home", "floor": 3})
    food = m.search("What do I like?", user_id="bob", filters={"category": "food"})
    assert [r["memory"] for r in food["results"]] == ["bob prefers Italian cuisine"]
    assert food["results"][0]["metadata"] == {"category": "food"}
    home = m.get_all(filters={"user_id": "bob", "category": {"in": ["home", "work"]}})
    assert [r["memory"] for r in home["results"]] == ["bob lives in Seattle"]
    assert m.get_all(user_id="bob", filters={"floor": {"ne": 3}})["results"][0]["memory"] == (
        "bob prefers Italian cuisine"
    )
    assert m.search("Seattle", user_id="bob", filters={"category": "travel"})["results"] == []


def test_get_all_narrowed_reads_past_the_users_first_facts(
    memory: GraphMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's, a run's or a metadata filter's memories are found however many of the
    user's other facts are older (they were looked for in the first 4 x limit only)."""
    monkeypatch.setattr(mem0_reads, "PAGE", 5)  # several pages of the user's facts
    memory.add_facts([(f"Thing{i}", "IS_NEAR", f"Place{i}") for i in range(12)], user_id="bob")
    m = facade.Memory(memory=memory)
    m.add("I like tea", user_id="bob", agent_id="a1", run_id="r1", metadata={"kind": "drink"})
    m.add("I like coffee", user_id="bob", agent_id="a1", run_id="r1", metadata={"kind": "drink"})
    by_agent = m.get_all(user_id="bob", agent_id="a1", limit=1)
    by_run = m.get_all(user_id="bob", run_id="r1", limit=2)
    by_meta = m.get_all(filters={"user_id": "bob", "kind": "drink"})
    assert [r["memory"] for r in by_agent["results"]] == ["bob likes tea"]
    assert [r["memory"] for r in by_run["results"]] == ["bob likes tea", "bob likes coffee"]
    assert by_meta["relations"] == [
        {"source": "bob", "relationship": "likes", "target": "tea"},
        {"source": "bob", "relationship": "likes", "target": "coffee"},
    ]
    assert len(m.get_all(user_id="bob", limit=1000)["results"]) == 14


def test_add_raises_when_extraction_fails_and_keeps_the_message(
    store: GraphStore, embedder: Embedder, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    """Mem0's `add` raises when its LLM fails; the facade answered `{"results": []}`, as
    for a message with nothing to remember, and the failure went unseen."""
    graph = llm_memory(store, embedder, tmp_path, scripted_llm)
    m = facade.Memory(memory=graph)
    scripted_llm.script(http_error(400, "model not found"))
    with pytest.raises(ExtractionError, match="model not found") as caught:
        m.add("I live in Seattle", user_id="bob")
    assert "kept" in str(caught.value) and "add them again" in str(caught.value)
    assert (tmp_path / "dead_letters.jsonl").exists()
    assert graph.stats("bob").episodes == 1  # the message is kept (as failed)
    scripted_llm.script(tool_call(MOVIE_EXTRACTION))
    assert len(m.add("I live in Seattle", user_id="bob")["results"]) == 3  # the retry


def test_update_moves_updated_at_as_mem0_does(memory: GraphMemory) -> None:
    m = facade.Memory(memory=memory)
    [added] = m.add("I live in Seattle", user_id="bob")["results"]
    m.update(added["id"], "bob has lived in Seattle since 2020")
    got = m.get(added["id"])
    assert got is not None and got["created_at"] == added["created_at"]
    assert got["updated_at"] > added["updated_at"]
    [listed] = m.get_all(user_id="bob")["results"]
    [found] = m.search("Where does bob live?", user_id="bob")["results"]
    assert listed["updated_at"] == found["updated_at"] == got["updated_at"]
    assert memory.get_all("bob")[0].updated_at is not None


def test_items_carry_their_agent_and_run_as_mem0_does(memory: GraphMemory) -> None:
    """The agent went into the memory's metadata, and a listing of the user's memories said
    neither agent_id nor run_id; a DELETE item showed the metadata of the add that replaced it."""
    m = facade.Memory(memory=memory)
    meta = {"category": "food"}
    [added] = m.add("I love pizza", user_id="bob", agent_id="chef", run_id="r1", metadata=meta)[
        "results"
    ]
    [listed] = m.get_all(user_id="bob")["results"]
    [found] = m.search("What does bob love?", user_id="bob")["results"]
    got = m.get(added["id"])
    for item in (added, listed, found, got):
        assert item is not None
        assert (item["metadata"], item["agent_id"], item["run_id"]) == (meta, "chef", "r1")
    m.add("I live in Paris", user_id="bob", metadata={"category": "home"})
    moved = m.add("I live in Berlin", user_id="bob", metadata={"category": "travel"})["results"]
    events = {r["memory"]: (r["event"], r["metadata"]) for r in moved}
    assert events == {
        "bob lives in Berlin": ("ADD", {"category": "travel"}),
        "bob lives in Paris": ("DELETE", {"category": "home"}),
    }


def test_an_older_message_added_late_is_an_add_of_a_memory_that_is_not_current(
    memory: GraphMemory,
) -> None:
    """'I live in Oslo' said in 2023, added after 'I live in Berlin' of 2024, is stored as
    history. `add` reported it as Mem0's DELETE (of a memory nobody had seen, which `get`
    still returns); it is an ADD whose item says when it stopped being true."""
    m = facade.Memory(memory=memory)
    m.add("I live in Berlin", user_id="bob", timestamp="2024-06-01")
    added = m.add("I live in Oslo", user_id="bob", timestamp="2023-01-01")
    [oslo] = added["results"]
    assert (oslo["memory"], oslo["event"]) == ("bob lives in Oslo", "ADD")
    assert oslo["invalid_at"] == "2024-06-01T00:00:00+00:00"
    assert added["relations"]["deleted_entities"] == []
    assert m.get(oslo["id"])["invalid_at"] == oslo["invalid_at"]
    assert [r["memory"] for r in m.get_all(user_id="bob")["results"]] == ["bob lives in Berlin"]


def test_a_memory_deleted_and_added_again_starts_a_new_history(memory: GraphMemory) -> None:
    """Its id is the same (it names the same fact), and its history showed the deleted
    memory's ADD and UPDATE, text and all; Mem0 gives a memory added again a history of its own."""
    m = facade.Memory(memory=memory)
    [first] = m.add("I live in Paris", user_id="bob")["results"]
    m.update(first["id"], "bob's address is 12 Rue Secrète")
    m.delete(first["id"])
    with pytest.raises(NotFoundError):
        m.history(first["id"])
    [again] = m.add("I live in Paris", user_id="bob")["results"]
    assert again["id"] == first["id"] and again["event"] == "ADD"
    history = m.history(again["id"])
    assert [(h["event"], h["new_memory"]) for h in history] == [("ADD", "bob lives in Paris")]


def test_a_contradicted_memory_has_mem0s_delete_entry_in_its_history(memory: GraphMemory) -> None:
    """Mem0's DELETE entry has no new memory and is_deleted 1; it repeated the old text, 0."""
    m = facade.Memory(memory=memory)
    [paris] = m.add("I live in Paris", user_id="bob")["results"]
    m.add("I live in Berlin", user_id="bob")
    history = m.history(paris["id"])
    assert [(h["event"], h["old_memory"], h["new_memory"], h["is_deleted"]) for h in history] == [
        ("ADD", None, "bob lives in Paris", 0),
        ("DELETE", "bob lives in Paris", None, 1),
    ]


def test_search_narrowed_to_an_agent_finds_its_memory_below_others(memory: GraphMemory) -> None:
    """The scope's memories were looked for among the user's 4 x limit best hits only: an
    agent's memory ranked below them was not found, though it was the agent's only one."""
    m = facade.Memory(memory=memory)
    for drink in ("tea", "coffee", "orange juice", "lemonade", "green tea", "cola"):
        m.add(f"I like {drink}", user_id="bob", agent_id="barista")
    m.add("I like pizza", user_id="bob", agent_id="chef")
    found = m.search("Which drinks does bob like?", user_id="bob", agent_id="chef", limit=1)
    assert [r["memory"] for r in found["results"]] == ["bob likes pizza"]
    assert found["results"][0]["agent_id"] == "chef"


def test_search_takes_the_keywords_of_mem0s_current_api(memory: GraphMemory) -> None:
    """Newer Mem0 versions call `search(..., rerank=...)` (and `top_k`, `explain`,
    `reference_date`): the facade raised TypeError. `rerank` has nothing to run in graphmem
    and changes nothing; `top_k` is `limit`; what graphmem cannot honour is refused by name."""
    memory.add_facts(
        [("Alice", "LIVES_IN", "Paris"), ("Alice", "PLAYS", "chess")], user_id="u-alice"
    )
    memory.add_facts([("Bob", "LIVES_IN", "Rome")], user_id="u-bob")
    m = facade.Memory(memory=memory)
    query = "Where does Alice live?"
    plain = m.search(query, user_id="u-alice")
    assert m.search(query, user_id="u-alice", rerank=True) == plain
    assert m.search(query, user_id="u-alice", threshold=0.1, rerank=False) == plain
    newest = m.search(
        query, top_k=1, filters={"user_id": "u-alice"}, threshold=0.1, rerank=False,
        explain=False, reference_date=None,
    )  # fmt: skip
    assert [r["memory"] for r in newest["results"]] == ["Alice lives in Paris"]
    assert len(m.get_all(filters={"user_id": "u-alice"}, top_k=1)["results"]) == 1
    bobs = m.search("Where does Bob live?", filters={"user_id": "u-bob"}, top_k=5, rerank=True)
    assert [r["memory"] for r in bobs["results"]] == ["Bob lives in Rome"]  # none of alice's
    assert m.search(query, filters={"user_id": "u-bob"}, top_k=5, rerank=True)["results"] == []
    with pytest.raises(InvalidInputError, match="rerank must be True or False, got 'yes'"):
        m.search(query, user_id="u-alice", rerank="yes")
    with pytest.raises(InvalidInputError, match="explain=True is not supported"):
        m.search(query, user_id="u-alice", explain=True)
    with pytest.raises(InvalidInputError, match="reference_date is not supported"):
        m.search(query, user_id="u-alice", reference_date="2024-01-01")
    with pytest.raises(InvalidInputError, match="limit=5 and top_k=2"):
        m.search(query, user_id="u-alice", limit=5, top_k=2)
    with pytest.raises(InvalidInputError, match="top_k must be an integer of at least 1, got 0"):
        m.get_all(user_id="u-alice", top_k=0)


def test_search_names_whom_no_memory_holds(memory: GraphMemory) -> None:
    """The facade dropped `unknown_names`: a Mem0 user asking about Bob got no word that
    nothing stored mentions him (another user's Bob included)."""
    memory.add_facts([("Alice", "LIVES_IN", "Paris"), ("Peter", "LIVES_IN", "Oslo")], "u-alice")
    memory.add_facts([("Bob", "LIVES_IN", "Rome")], user_id="u-bob")
    m = facade.Memory(memory=memory)
    strangers = m.search("Where does Bob live?", user_id="u-alice")
    assert strangers["unknown_names"] == ["Bob"]
    assert strangers["results"] == []  # not Peter's or Alice's home
    known = m.search("Where does Peter live?", user_id="u-alice")
    assert known["unknown_names"] == []
    assert [r["memory"] for r in known["results"]][:1] == ["Peter lives in Oslo"]
    assert m.search("Where does Bob live?", user_id="u-bob")["unknown_names"] == []


def test_add_reports_relations_in_mem0s_nested_lists(memory: GraphMemory) -> None:
    """Mem0's graph `add` answers one list of rows per relationship it wrote or deleted
    (`[[{"source", "relationship", "target"}], ...]`); the facade gave the rows in one flat
    list, so Mem0 code reading `added_entities[0][0]["source"]` failed."""
    m = facade.Memory(memory=memory)
    m.add("I live in Paris", user_id="bob")
    moved = m.add("I live in Berlin", user_id="bob")["relations"]
    assert moved == {
        "added_entities": [[{"source": "bob", "relationship": "lives_in", "target": "Berlin"}]],
        "deleted_entities": [[{"source": "bob", "relationship": "lives_in", "target": "Paris"}]],
    }


def test_add_dates_its_messages_with_mem0s_timestamp(memory: GraphMemory) -> None:
    """`timestamp=` (Mem0 Platform's epoch seconds) was refused as an unsupported argument,
    though graphmem dates messages itself (`ts`): now the facts are valid from that time."""
    m = facade.Memory(memory=memory)
    [added] = m.add("I live in Seattle", user_id="bob", timestamp=1700000000)["results"]
    [fact] = memory.get_all("bob")
    assert fact.valid_at == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)
    assert added["event"] == "ADD"
    with pytest.raises(InvalidInputError, match=r"timestamp .soon. is not a time"):
        m.add("I live in Oslo", user_id="bob", timestamp="soon")


def test_arguments_graphmem_lacks_are_refused_saying_what_to_do(memory: GraphMemory) -> None:
    """`update(id, data, metadata=...)` (Mem0's) raised TypeError; `add(..., prompt=...)` and
    `memory_type=` said only "unsupported arguments"."""
    m = facade.Memory(memory=memory)
    [added] = m.add("I live in Seattle", user_id="bob", metadata={"category": "home"})["results"]
    with pytest.raises(InvalidInputError, match=r"metadata.*kept with the messages"):
        m.update(added["id"], "bob lives in Tacoma", metadata={"category": "work"})
    with pytest.raises(InvalidInputError, match=r"prompt.*extraction prompt is fixed"):
        m.add("I like tea", user_id="bob", prompt="Only extract food")
    with pytest.raises(InvalidInputError, match=r"memory_type.*procedural"):
        m.add("Step one: open the door", agent_id="bot", memory_type="procedural_memory")
    with pytest.raises(InvalidInputError, match="unsupported arguments: colour"):
        m.add("I like tea", user_id="bob", colour="red")
    got = m.get(added["id"])
    assert got is not None
    assert (got["memory"], got["metadata"]) == ("bob lives in Seattle", {"category": "home"})
    assert len(m.get_all(user_id="bob")["results"]) == 1  # nothing was written


def test_a_memory_mentioned_again_is_an_update_with_its_previous_memory(
    memory: GraphMemory,
) -> None:
    """Mem0's UPDATE items carry `previous_memory`; the facade's (a memory mentioned again)
    had none, so Mem0 code reading it on every UPDATE raised KeyError."""
    m = facade.Memory(memory=memory)
    [first] = m.add("I live in Seattle", user_id="bob")["results"]
    [again] = m.add("I live in Seattle", user_id="bob")["results"]
    assert (again["id"], again["event"]) == (first["id"], "UPDATE")
    assert again["previous_memory"] == again["memory"] == "bob lives in Seattle"
    assert "previous_memory" not in first


def test_an_agents_memories_name_the_agent_not_its_graph(memory: GraphMemory) -> None:
    """`add(..., agent_id="chef")` alone stored "agent:chef prefers tea": the key of the
    agent's graph was its owner's name. The owner is named by the id the caller gave."""
    m = facade.Memory(memory=memory)
    m.add("I prefer tea", agent_id="chef")
    m.add("I like coffee", run_id="r9")
    m.add("I like cocoa", user_id="chef")

    listed = m.get_all(agent_id="chef")
    found = m.search("tea", agent_id="chef")["results"]
    run = m.get_all(run_id="r9")["results"]
    user = m.get_all(user_id="chef")["results"]

    assert [r["memory"] for r in listed["results"]] == ["chef prefers tea"]
    assert [r["memory"] for r in found] == ["chef prefers tea"]
    assert listed["relations"] == [{"source": "chef", "relationship": "prefers", "target": "tea"}]
    assert [r["memory"] for r in run] == ["r9 likes coffee"]
    assert [r["memory"] for r in user] == ["chef likes cocoa"]  # the user chef: another graph
    assert memory.stats("agent:chef").facts == memory.stats("chef").facts == 1


def test_a_user_name_names_the_users_own_entity_only_when_the_add_creates_it(
    memory: GraphMemory,
) -> None:
    memory.add("I prefer tea", "u-17", user_name="Ann")
    memory.add("I like coffee", "u-17", user_name="Bea")  # stored already: stays Ann

    assert sorted(f.text for f in memory.get_all("u-17")) == ["Ann likes coffee", "Ann prefers tea"]
