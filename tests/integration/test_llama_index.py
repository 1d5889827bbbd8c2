"""The LlamaIndex integration through LlamaIndex's own interfaces: Memory, retrievers, graphs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.graph_stores import SimplePropertyGraphStore
from llama_index.core.graph_stores.types import ChunkNode, EntityNode, Relation
from llama_index.core.memory import Memory as ChatMemory
from llama_index.core.schema import QueryBundle
from llama_index.core.storage.chat_store.sql import MessageStatus
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from engine import InvalidInputError, Memory
from engine.integrations.llama_index import (
    GraphMemoryBlock,
    GraphMemRetriever,
    export_to_property_graph,
    import_llama_index_graph,
    property_graph_from_memory,
    triples_from_property_graph,
)
from engine.prompt_block import estimate_tokens

FACTS = [
    ("Alice", "FRIEND_OF", "John"),
    ("John", "OWNS", "Tommy", "John owns a dog named Tommy"),
    ("Alice", "LIKES", "hiking"),
]

ChatMemoryFactory = Callable[..., ChatMemory]


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """The thread's event loop, closed afterwards.

    LlamaIndex's sync wrappers run on `asyncio.get_event_loop()`; owning that loop here keeps
    it (and its sockets) from being dropped unclosed when another test calls `asyncio.run`.
    """
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    loop.close()
    asyncio.set_event_loop(None)


@pytest.fixture
def chat_memory(loop: asyncio.AbstractEventLoop) -> Iterator[ChatMemoryFactory]:
    """LlamaIndex's `Memory.from_defaults` on an in-memory SQLite engine closed afterwards."""
    engines: list[AsyncEngine] = []

    def make(**kwargs: Any) -> ChatMemory:
        engines.append(create_async_engine("sqlite+aiosqlite:///:memory:"))
        return ChatMemory.from_defaults(async_engine=engines[-1], **kwargs)

    yield make
    for engine in engines:
        loop.run_until_complete(engine.dispose())


def valid_triples(memory: Memory, user_id: str) -> set[tuple[str, str, str]]:
    return {f.triple for f in memory.get_all(user_id)}


# -- the memory block through LlamaIndex's Memory ------------------------------------------


def test_flushed_messages_land_in_graphmem_and_come_back_as_context(
    memory: Memory, chat_memory: ChatMemoryFactory
) -> None:
    # the block's context must fit the share of token_limit LlamaIndex gives memory blocks,
    # or LlamaIndex leaves it out: facts and the messages behind them take more than 200
    block = GraphMemoryBlock(memory=memory, user_id="alice", max_tokens=40)
    chat = chat_memory(session_id="s1", token_limit=60, memory_blocks=[block])
    chat.put(
        ChatMessage(role="user", content="My friend is called John, and John has a dog named Tommy")
    )
    chat.put(ChatMessage(role="assistant", content="Tommy sounds lovely."))
    assert chat.get_all(status=MessageStatus.ARCHIVED) == []  # nothing flushed yet
    for i in range(4):
        chat.put(ChatMessage(role="user", content=f"Let us talk about the weather on day {i}."))
        chat.put(ChatMessage(role="assistant", content="It is sunny and warm today."))

    archived = chat.get_all(status=MessageStatus.ARCHIVED)
    assert "Tommy" in (archived[0].content or "")
    assert any("Tommy" in (f.object, f.subject) for f in memory.get_all("alice"))
    messages = chat.get(input="What is the name of John's dog?")
    system = messages[0]
    assert system.role == "system"
    assert "<graph_memory>" in (system.content or "")
    assert "Tommy" in (system.content or "")
    episodes = memory.entity("Tommy", "alice").episodes
    assert episodes and episodes[0].session_id == "s1"


def test_block_answers_for_the_latest_user_message(memory: Memory) -> None:
    memory.add_facts(FACTS, user_id="alice")
    block = GraphMemoryBlock(memory=memory, user_id="alice")
    messages = [
        ChatMessage(role="user", content="I like hiking"),
        ChatMessage(role="assistant", content="Noted."),
        ChatMessage(role="user", content="Who owns Tommy?"),
    ]
    context = asyncio.run(block.aget(messages))
    assert context.startswith("Facts:")
    assert context.splitlines()[1] == "John owns a dog named Tommy"  # undated: no mark
    cost = sum(estimate_tokens(line) for line in context.splitlines())
    shorter = asyncio.run(block.atruncate(context, cost // 2)) or ""
    assert "John owns a dog named Tommy" in shorter and len(shorter) < len(context)  # repacked
    assert asyncio.run(block.aget([ChatMessage(role="assistant", content="hi")])) == ""


def test_block_is_empty_for_a_user_with_no_memory(
    memory: Memory, chat_memory: ChatMemoryFactory
) -> None:
    memory.add_facts(FACTS, user_id="alice")
    chat = chat_memory(
        token_limit=500, memory_blocks=[GraphMemoryBlock(memory=memory, user_id="bob")]
    )
    chat.put(ChatMessage(role="user", content="Who owns Tommy?"))
    messages = chat.get()
    assert [m.role for m in messages] == ["user"]


BAD_BLOCKS = {
    "spaced user": ({"user_id": " alice"}, "not in canonical form"),
    "empty user": ({"user_id": ""}, "user_id"),
    "budget true": ({"max_tokens": True}, "max_tokens"),
    "budget text": ({"max_tokens": "100"}, "max_tokens"),
    "budget 0": ({"max_tokens": 0}, "max_tokens"),
    "limit true": ({"limit": True}, "limit"),
    "limit 10,000": ({"limit": 10_000}, "limit"),
}


@pytest.mark.parametrize("bad, says", BAD_BLOCKS.values(), ids=list(BAD_BLOCKS))
def test_a_block_or_retriever_that_cannot_search_is_refused_when_made(
    memory: Memory, bad: dict[str, Any], says: str
) -> None:
    """A block with a user id `search` refuses answered "" every turn (a warning in the log,
    the agent none the wiser); `max_tokens=True` was a budget of 1, "100" one of 100, where
    `Memory.search` refuses both; a bad budget was pydantic's error, not graphmem's."""
    with pytest.raises(InvalidInputError, match=says):
        GraphMemoryBlock(memory=memory, **({"user_id": "alice"} | bad))
    if "max_tokens" not in bad:
        with pytest.raises(InvalidInputError, match=says):
            GraphMemRetriever(memory, **({"user_id": "alice"} | bad))


def test_block_truncates_from_the_end(memory: Memory) -> None:
    block = GraphMemoryBlock(memory=memory, user_id="alice")
    content = "Facts:\nJohn owns a dog named Tommy\nAlice likes hiking"
    assert asyncio.run(block.atruncate(content, 3)) == "Facts:\nJohn owns a dog named Tommy"
    assert asyncio.run(block.atruncate(content, 100)) is None


# -- the retriever -----------------------------------------------------------------------------


def test_retriever_returns_one_node_per_fact_with_provenance(memory: Memory) -> None:
    added = memory.add_facts(FACTS, user_id="alice")
    retriever = GraphMemRetriever(memory, user_id="alice", limit=5)
    nodes = retriever.retrieve("Who owns Tommy?")
    assert nodes[0].node.get_content() == "John owns a dog named Tommy"
    meta = nodes[0].node.metadata
    assert (meta["subject"], meta["predicate"], meta["object"]) == ("John", "OWNS", "Tommy")
    assert meta["uid"] in added.fact_uids and nodes[0].node.node_id == meta["uid"]
    assert set(meta) == {
        "uid",
        "subject",
        "predicate",
        "object",
        "legs",
        "hop",
        "episodes",
        "valid_at",
        "valid_unit",
    }
    assert meta["legs"] and meta["episodes"] == []
    assert meta["valid_at"] is None and meta["valid_unit"] is None  # given with no time
    scores = [n.score or 0.0 for n in nodes]
    assert scores == sorted(scores, reverse=True)
    assert nodes[0].node.get_content(metadata_mode="llm") == "John owns a dog named Tommy"


def test_retriever_async_matches_sync(memory: Memory) -> None:
    memory.add_facts(FACTS, user_id="alice")
    retriever = GraphMemRetriever(memory, user_id="alice")
    sync = retriever.retrieve(QueryBundle("Who is Alice's friend?"))
    async_ = asyncio.run(retriever.aretrieve("Who is Alice's friend?"))
    assert [n.node.node_id for n in async_] == [n.node.node_id for n in sync]
    assert "Alice friend of John" in [n.node.get_content() for n in sync]


def test_retriever_sees_only_its_user(memory: Memory) -> None:
    memory.add_facts(FACTS, user_id="alice")
    assert GraphMemRetriever(memory, user_id="bob").retrieve("Who owns Tommy?") == []


def test_retriever_carries_episode_provenance(memory: Memory) -> None:
    result = memory.add("My friend is called John, and John has a dog named Tommy", "carol")
    nodes = GraphMemRetriever(memory, user_id="carol").retrieve("John's dog")
    assert nodes and set(nodes[0].node.metadata["episodes"]) <= set(result.episode_uids)
    assert nodes[0].node.metadata["episodes"]


# -- property graph interop -------------------------------------------------------------------


def simple_graph() -> SimplePropertyGraphStore:
    store = SimplePropertyGraphStore()
    alice = EntityNode(name="Alice", label="PERSON")
    john = EntityNode(name="John", label="PERSON")
    tommy = EntityNode(name="Tommy", label="animal")
    chunk = ChunkNode(text="Alice's friend John owns a dog named Tommy.", id_="chunk-1")
    store.upsert_nodes([alice, john, tommy, chunk])
    store.upsert_relations(
        [
            Relation(label="friend of", source_id=alice.id, target_id=john.id),
            Relation(
                label="OWNS",
                source_id=john.id,
                target_id=tommy.id,
                properties={"text": "John owns a dog named Tommy"},
            ),
            Relation(label="MENTIONS", source_id=chunk.id, target_id=alice.id),
        ]
    )
    return store


def test_triples_from_a_simple_property_graph() -> None:
    facts = triples_from_property_graph(simple_graph())
    got = {(f.subject, f.predicate, f.object, f.subject_type, f.object_type, f.text) for f in facts}
    assert got == {
        ("Alice", "friend of", "John", "PERSON", "PERSON", None),
        ("John", "OWNS", "Tommy", "PERSON", "animal", "John owns a dog named Tommy"),
    }


def test_import_a_simple_property_graph(memory: Memory) -> None:
    result = import_llama_index_graph(memory, simple_graph(), "alice")
    assert result.facts_added == 2
    assert valid_triples(memory, "alice") == {
        ("Alice", "FRIEND_OF", "John"),
        ("John", "OWNS", "Tommy"),
    }
    assert memory.entity("Tommy", "alice").entity.type == "Animal"
    assert (
        memory.search("Who owns Tommy?", "alice").facts[0].fact.text
        == "John owns a dog named Tommy"
    )


def test_import_kg_string_triples(memory: Memory) -> None:
    triples = [("Paris", "capital of", "France"), ("France", "member of", "EU")]
    import_llama_index_graph(memory, triples, "dana")
    assert valid_triples(memory, "dana") == {
        ("Paris", "CAPITAL_OF", "France"),
        ("France", "MEMBER_OF", "EU"),
    }


def test_import_error_policy(memory: Memory) -> None:
    triples = [("Paris", "capital of", "France"), ("Paris", "!!", "Seine")]
    with pytest.raises(InvalidInputError):
        import_llama_index_graph(memory, triples, "erin")
    assert memory.get_all("erin") == []
    result = import_llama_index_graph(memory, triples, "erin", on_error="skip")
    assert result.facts_added == 1 and len(result.errors) == 1
    assert "'!!'" in result.errors[0]
    with pytest.raises(InvalidInputError):
        triples_from_property_graph([("only", "two")])


def test_skip_leaves_out_a_malformed_triple(memory: Memory) -> None:
    """`on_error="skip"` skips a triple with an empty or missing part, or an item that is no
    triple, as it skips one graphmem cannot store: the rest is written."""
    triples = [("Paris", "capital of", "France"), ("x", "", "y"), (None, "is", "z"), ("a", "b")]
    result = import_llama_index_graph(memory, triples, "erin", on_error="skip")
    assert result.facts_added == 1 and len(result.errors) == 3
    assert result.errors[0].startswith("skipped invalid triple ('x', '', 'y')")
    assert "('a', 'b')" in result.errors[2]
    assert valid_triples(memory, "erin") == {("Paris", "CAPITAL_OF", "France")}


def test_a_graph_of_text_chunks_alone_says_why_it_gives_no_fact(memory: Memory) -> None:
    store = SimplePropertyGraphStore()
    first, second = ChunkNode(text="Alice met John."), ChunkNode(text="John owns Tommy.")
    store.upsert_nodes([first, second])  # ImplicitPathExtractor's: chunks linked to chunks
    store.upsert_relations([Relation(label="NEXT", source_id=first.id, target_id=second.id)])

    result = import_llama_index_graph(memory, store, "u1")

    assert result.facts_added == 0
    assert result.errors == [
        "no relation between entities to import: the graph holds 2 text chunks and the links "
        "between them, which are no facts (ImplicitPathExtractor's); build it with an extractor "
        "of entities and relations (SimpleLLMPathExtractor, SchemaLLMPathExtractor)"
    ]
    assert import_llama_index_graph(memory, SimplePropertyGraphStore(), "u1").errors == []


@pytest.mark.parametrize(
    ("source", "on_error", "named"),
    [
        (42, "raise", "got int"),
        ("Paris capital of France", "skip", "got str"),
        ({"Paris": "France"}, "skip", "got dict"),
        ([("Paris", "capital of", "France")], "ignore", "got 'ignore'"),
    ],
)
def test_a_wrong_import_argument_is_named(
    memory: Memory, source: Any, on_error: Any, named: str
) -> None:
    """A source that is no graph nor list of triples, or an unknown policy, is refused by name
    before anything is written (a string was read letter by letter, an int raised TypeError,
    "ignore" was taken as "raise")."""
    with pytest.raises(InvalidInputError, match=named):
        import_llama_index_graph(memory, source, "erin", on_error=on_error)
    assert memory.get_all("erin") == []


def test_export_names_a_store_that_is_not_a_property_graph_store(memory: Memory) -> None:
    memory.add_facts(FACTS, user_id="alice")
    with pytest.raises(InvalidInputError, match="PropertyGraphStore, got NoneType"):
        export_to_property_graph(memory, "alice", None)  # type: ignore[arg-type]


def test_export_then_import_round_trips(memory: Memory) -> None:
    memory.add_facts(
        [
            *FACTS,
            {"subject": "Tommy", "predicate": "IS_A", "object": "dog", "subject_type": "animal"},
        ],
        user_id="alice",
    )
    nodes, relations = property_graph_from_memory(memory, "alice")
    assert {n.name for n in nodes} == {"Alice", "John", "Tommy", "hiking", "dog"}
    assert {n.label for n in nodes if n.name == "Tommy"} == {"Animal"}
    assert all(r.properties["user_id"] == "alice" and r.properties["uid"] for r in relations)
    pg = SimplePropertyGraphStore()
    assert export_to_property_graph(memory, "alice", pg) == (5, 4)
    assert {t[2].name for t in pg.get_triplets(entity_names=["John"])} == {"John", "Tommy"}
    import_llama_index_graph(memory, pg, "bob")
    assert valid_triples(memory, "bob") == valid_triples(memory, "alice")
    assert memory.entity("Tommy", "bob").entity.type == "Animal"


def test_import_keeps_when_facts_held_and_leaves_out_those_no_longer_true(
    memory: Memory,
) -> None:
    """An export with `include_invalid=True` imported elsewhere: a fact no longer true came
    back as true (beside the one that replaced it), and every `valid_at` was lost."""
    moved = {"subject": "Alice", "predicate": "LIVES_IN", "object": "Paris"}
    memory.add_facts([{**moved, "valid_at": "2019-01-01T00:00:00+00:00"}], user_id="alice")
    [paris] = memory.get_all("alice")
    memory.update(paris.uid, "alice", invalid_at="2021-06-01T00:00:00+00:00")
    berlin = {**moved, "object": "Berlin", "valid_at": "2021-06-01T00:00:00+00:00"}
    memory.add_facts([berlin], user_id="alice")
    pg = SimplePropertyGraphStore()
    assert export_to_property_graph(memory, "alice", pg, include_invalid=True) == (3, 2)

    result = import_llama_index_graph(memory, pg, "bob")
    [fact] = memory.get_all("bob", include_invalid=True)
    assert fact.triple == ("Alice", "LIVES_IN", "Berlin")
    assert fact.valid_at == datetime(2021, 6, 1, tzinfo=UTC)
    assert result.facts_added == 1 and len(result.errors) == 1
    assert "'Paris'" in result.errors[0] and "no longer true since 2021-06-01" in result.errors[0]
    assert [(f.subject, f.object) for f in triples_from_property_graph(pg)] == [("Alice", "Berlin")]


@pytest.mark.neo4j
def test_export_opens_in_neo4j_property_graph_store(memory: Memory) -> None:
    if not os.environ.get("NEO4J_URI"):
        pytest.skip("NEO4J_URI is not set: needs a Neo4j server with APOC")
    from llama_index.graph_stores.neo4j import Neo4jPropertyGraphStore

    memory.add_facts(FACTS, user_id="alice")
    pg = Neo4jPropertyGraphStore(
        username=os.environ.get("NEO4J_USER", "neo4j"),
        password=os.environ.get("NEO4J_PASSWORD", ""),
        url=os.environ["NEO4J_URI"],
        database=os.environ.get("NEO4J_DATABASE", "neo4j"),
    )
    try:
        export_to_property_graph(memory, "alice", pg)
        found = pg.get_triplets(entity_names=["John"])
        assert ("John", "OWNS", "Tommy") in {(s.name, r.label, t.name) for s, r, t in found}
        assert import_llama_index_graph(memory, pg, "bob").facts_added == 3
    finally:
        pg.close()
