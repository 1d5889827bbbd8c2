"""The LlamaIndex memory block never fails the agent's turn and never loses what LlamaIndex
has already archived: an oversized message is stored in pieces and searched by its end; a
store that cannot take the messages leaves them as dead letters for a replay."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import redis
from llama_index.core.base.llms.types import ChatMessage

from engine.embedding import Embedder
from engine.integrations.llama_index import GraphMemoryBlock
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.transfer.export import read_snapshot
from tests.integration.test_llama_index import ChatMemoryFactory, chat_memory, loop  # noqa: F401

BIG = " ".join(f"word{i:03d}" for i in range(150))  # 1,199 characters


def _stored_words(mem: Memory, user: str) -> set[str]:
    return {w for e in read_snapshot(mem.store, user).episodes for w in e.content.split()}


def test_an_oversized_message_is_kept_whole_and_the_turn_goes_on(
    store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    chat_memory: ChatMemoryFactory,  # noqa: F811
) -> None:
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path, max_message_chars=300)
    block = GraphMemoryBlock(memory=mem, user_id="alice")
    chat = chat_memory(session_id="s1", token_limit=60, memory_blocks=[block])
    chat.put(ChatMessage(role="user", content=BIG))
    chat.put(ChatMessage(role="assistant", content="That is a long list."))
    for i in range(3):
        chat.put(ChatMessage(role="user", content=f"Tell me about day {i}."))
        chat.put(ChatMessage(role="assistant", content="It was sunny."))
    assert _stored_words(mem, "alice") >= set(BIG.split())  # flushed and stored in pieces
    messages = chat.get(input=ChatMessage(role="user", content=BIG + " which word is last?"))
    assert messages  # the search of an oversized question no longer raises out of get()


def test_a_flush_alone_over_the_limit_is_stored_not_raised(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path, max_message_chars=300)
    block = GraphMemoryBlock(memory=mem, user_id="alice")
    asyncio.run(block.aput([ChatMessage(role="user", content=BIG)]))
    assert _stored_words(mem, "alice") == set(BIG.split())


def test_a_message_is_stored_as_written(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """As `Memory.add` stores it, in pieces when oversized: the block wrote the NFKC form
    ("x2" for "x²", "TM" for "™")."""
    mem = Memory(store=store, embedder=embedder, data_dir=tmp_path, max_message_chars=300)
    block = GraphMemoryBlock(memory=mem, user_id="alice")
    said = "Take \u00bd cup of \ufb02our at \uff15 pm, x\u00b2 is fine\u2122"
    long = " ".join([said] * 12)  # over 300 characters: stored in pieces
    messages = [ChatMessage(role="user", content=said), ChatMessage(role="user", content=long)]
    asyncio.run(block.aput(messages))
    stored = [e.content for e in read_snapshot(mem.store, "alice").episodes]
    assert said in stored
    assert sorted(" ".join(stored).split()) == sorted(f"{said} {long}".split())


def test_messages_a_failing_store_cannot_take_are_kept_and_replayed(
    embedder: Embedder, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    mem = Memory(data_dir=data_dir, embedder=embedder)
    mem.search("warm up", user_id="alice")  # schema set up while the server is alive
    socket = mem.store._server.socket_path  # type: ignore[attr-defined]
    redis.Redis(unix_socket_path=str(socket)).shutdown(nosave=True)  # the database goes away
    block = GraphMemoryBlock(memory=mem, user_id="alice")
    flushed = [
        ChatMessage(role="user", content="I like green tea"),
        ChatMessage(role="assistant", content="Green tea it is."),
    ]
    asyncio.run(block.aput(flushed))  # does not raise
    mem.close()

    letters = (data_dir / "dead_letters.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(x)["record"]["content"] for x in letters] == [
        "I like green tea",
        "Green tea it is.",
    ]
    with Memory(data_dir=data_dir, embedder=embedder) as again:
        report = again.ingest([], retry_failed=True)
        contents = sorted(e.content for e in read_snapshot(again.store, "alice").episodes)
    assert report.dead_letters_resolved == 2
    assert contents == ["Green tea it is.", "I like green tea"]
    assert not (data_dir / "dead_letters.jsonl").exists()
