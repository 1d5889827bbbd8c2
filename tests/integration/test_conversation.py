"""`Memory.add` end to end: the real embedded FalkorDB, the real embedder, and the real openai
client talking to a scripted OpenAI-compatible server (or the offline extractor)."""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import openai
import pytest

from engine.components import say_offline
from engine.embedding import Embedder
from engine.errors import LimitExceededError
from engine.extraction.llm import LLMExtractor
from engine.extraction.offline import OfflineExtractor
from engine.extraction.prompts import extraction_json_schema
from engine.memory import Memory
from engine.models import Fact
from engine.store.base import GraphStore
from engine.store.falkordb import FalkorDBStore
from engine.testing.scripted_llm import (
    Reply,
    ScriptedLLM,
    content,
    delay,
    http_error,
    tool_call,
)

USER = "alice123"
ENGLISH = [
    "I like hiking",
    "I like playing badminton",
    "I hate playing badminton",
    "My friend is called John, and John has a dog named Tommy",
    "My name is Alice",
    "John likes hiking, and Harry likes hiking too",
    "My friend Peter is Spider-Man",
]
CHINESE = [
    "我喜欢去徒步旅行",
    "我喜欢打羽毛球",
    "我讨厌打羽毛球",
    "我的朋友叫约翰，约翰有一只叫汤米的狗",  # noqa: RUF001 (real Chinese punctuation)
    "我叫爱丽丝",
    "约翰喜欢徒步旅行，哈利也喜欢徒步旅行",  # noqa: RUF001
    "我的朋友彼得是蜘蛛侠",
]
_KNOWN = re.compile(r"^\[([0-9a-f]+)\] (.*) \((.+?) -([A-Z0-9_]+)-> (.+)\)$", re.M)
Known = list[tuple[str, str, str, str, str]]  # id, text, source, predicate, target


# -- a plausible LLM: reads the prompt, answers with the tool call a model would make ------------


def ent(name: str, kind: str) -> dict[str, Any]:
    return {"name": name, "type": kind, "aliases": []}


def fact(source: str, predicate: str, target: str, text: str) -> dict[str, Any]:
    return {"source": source, "predicate": predicate, "target": target, "fact": text}


def find(known: Known, predicate: str, target: str) -> str:
    return next(k[0] for k in known if k[3] == predicate and k[4] == target)


def parse_prompt(body: dict[str, Any]) -> tuple[str, str, Known]:
    """(the new message, the self entity's name, the KNOWN facts) from an extraction request."""
    prompt = body["messages"][-1]["content"]
    conversation = prompt.split("<conversation>\n")[1].split("\n</conversation>")[0]
    me = re.search(r"map to the entity '(.+?)'", prompt)
    assert me is not None
    return conversation.split(": ", 1)[1], me.group(1), _KNOWN.findall(prompt)


def english_answer(message: str, me: str, known: Known) -> dict[str, Any]:
    answers: dict[str, Callable[[], dict[str, Any]]] = {
        ENGLISH[0]: lambda: extraction(
            [ent(me, "Person"), ent("hiking", "Activity")],
            [fact(me, "LIKES", "hiking", f"{me} likes hiking")],
        ),
        ENGLISH[1]: lambda: extraction(
            [ent(me, "Person"), ent("badminton", "Activity")],
            [fact(me, "LIKES", "badminton", f"{me} likes playing badminton")],
        ),
        ENGLISH[2]: lambda: extraction(
            [ent(me, "Person"), ent("badminton", "Activity")],
            [fact(me, "HATES", "badminton", f"{me} hates playing badminton")],
            [{"fact_id": find(known, "LIKES", "badminton"), "reason": "now hates it"}],
        ),
        ENGLISH[3]: lambda: extraction(
            [ent(me, "Person"), ent("John", "Person"), ent("Tommy", "Animal")],
            [
                fact(me, "FRIEND_OF", "John", f"John is {me}'s friend"),
                fact("John", "HAS_PET", "Tommy", "John has a dog named Tommy"),
            ],
        ),
        ENGLISH[4]: lambda: extraction(
            [ent(me, "Person"), ent("Alice", "Person")],
            [fact(me, "HAS_NAME", "Alice", "The user's name is Alice")],
        ),
        ENGLISH[5]: lambda: extraction(
            [ent("John", "Person"), ent("Harry", "Person"), ent("hiking", "Activity")],
            [
                fact("John", "LIKES", "hiking", "John likes hiking"),
                fact("Harry", "LIKES", "hiking", "Harry likes hiking"),
            ],
        ),
        ENGLISH[6]: lambda: extraction(
            [ent(me, "Person"), ent("Peter", "Person"), ent("Spider-Man", "Character")],
            [
                fact(me, "FRIEND_OF", "Peter", f"Peter is {me}'s friend"),
                fact("Peter", "IS", "Spider-Man", "Peter is Spider-Man"),
            ],
        ),
    }
    return answers[message]()


def chinese_answer(message: str, me: str, known: Known) -> dict[str, Any]:
    answers: dict[str, Callable[[], dict[str, Any]]] = {
        CHINESE[0]: lambda: extraction(
            [ent(me, "Person"), ent("徒步旅行", "Activity")],
            [fact(me, "LIKES", "徒步旅行", "用户喜欢徒步旅行")],
        ),
        CHINESE[1]: lambda: extraction(
            [ent(me, "Person"), ent("羽毛球", "Activity")],
            [fact(me, "LIKES", "羽毛球", "用户喜欢打羽毛球")],
        ),
        CHINESE[2]: lambda: extraction(
            [ent(me, "Person"), ent("羽毛球", "Activity")],
            [fact(me, "HATES", "羽毛球", "用户讨厌打羽毛球")],
            [{"fact_id": find(known, "LIKES", "羽毛球"), "reason": "现在讨厌羽毛球"}],
        ),
        CHINESE[3]: lambda: extraction(
            [ent(me, "Person"), ent("约翰", "Person"), ent("汤米", "Animal")],
            [
                fact(me, "FRIEND_OF", "约翰", "约翰是用户的朋友"),
                fact("约翰", "HAS_PET", "汤米", "约翰有一只叫汤米的狗"),
            ],
        ),
        CHINESE[4]: lambda: extraction(
            [ent(me, "Person")], [fact(me, "HAS_NAME", "爱丽丝", "用户的名字是爱丽丝")]
        ),
        CHINESE[5]: lambda: extraction(
            [ent("约翰", "Person"), ent("哈利", "Person"), ent("徒步旅行", "Activity")],
            [
                fact("约翰", "LIKES", "徒步旅行", "约翰喜欢徒步旅行"),
                fact("哈利", "LIKES", "徒步旅行", "哈利喜欢徒步旅行"),
            ],
        ),
        CHINESE[6]: lambda: extraction(
            [ent(me, "Person"), ent("彼得", "Person"), ent("蜘蛛侠", "Character")],
            [
                fact(me, "FRIEND_OF", "彼得", f"彼得是{me}的朋友"),
                fact("彼得", "IS", "蜘蛛侠", "彼得是蜘蛛侠"),
            ],
        ),
    }
    # stored (and sent) as written: the full-width comma arrives as it was typed
    return answers[message]()


def extraction(
    entities: list[dict[str, Any]],
    facts: list[dict[str, Any]],
    invalidations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {"entities": entities, "facts": facts, "invalidations": invalidations or []}


def responder(answer: Callable[[str, str, Known], dict[str, Any]]) -> Callable[..., Reply]:
    def respond(body: dict[str, Any]) -> Reply:
        return tool_call(answer(*parse_prompt(body)))

    return respond


# -- fixtures --------------------------------------------------------------------------------


def llm_extractor(server: ScriptedLLM, **options: Any) -> LLMExtractor:
    client = openai.OpenAI(base_url=server.base_url, api_key="test", max_retries=0)
    return LLMExtractor(client, "scripted", sleep=lambda _: None, **options)


@pytest.fixture
def llm_memory(
    store: GraphStore, embedder: Embedder, scripted_llm: ScriptedLLM, tmp_path: Path
) -> Iterator[Memory]:
    extractor = llm_extractor(scripted_llm, max_retries=2, timeout=5.0)
    yield Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path)


def named(mem: Memory, name: str) -> list[str]:
    return [e.entity.uid for e in mem.top_entities(USER, 100, "frequency") if e.entity.name == name]


def all_facts(mem: Memory) -> list[Fact]:
    return mem.get_all(USER, include_invalid=True)


def one(facts: list[Fact], predicate: str, target: str) -> Fact:
    found = [f for f in facts if f.predicate == predicate and f.object == target]
    assert len(found) == 1, (predicate, target, [f.triple for f in facts])
    return found[0]


# -- the seed scenario -----------------------------------------------------------------------


def test_seed_scenario_through_the_llm(llm_memory: Memory, scripted_llm: ScriptedLLM) -> None:
    scripted_llm.default = responder(english_answer)
    results = [llm_memory.add(message, USER) for message in ENGLISH]

    assert [r.llm_calls for r in results] == [1] * 7
    assert len(scripted_llm.requests) == 7
    assert all(r.errors == [] and r.prompt_tokens > 0 for r in results)
    prompts = [body["messages"][-1]["content"] for body in scripted_llm.requests]
    assert "alice123 likes playing badminton" in prompts[2]  # known, so it can be invalidated
    assert "The user's name is Alice." in prompts[5]
    assert "John has a dog named Tommy" in prompts[5]
    assert results[2].facts_invalidated == 1

    name = llm_memory.search("What is my name?", USER).facts[0].fact
    assert (name.predicate, name.object) == ("HAS_NAME", "Alice")
    spider = llm_memory.search("Who is Spider-Man?", USER).facts[0].fact
    assert spider.text == "Peter is Spider-Man"

    facts = all_facts(llm_memory)
    assert one(facts, "LIKES", "badminton").invalid_at is not None
    assert one(facts, "HATES", "badminton").invalid_at is None
    assert named(llm_memory, "Alice") == [Memory.self_uid(USER)]
    assert len(named(llm_memory, "John")) == 1
    assert len(named(llm_memory, "hiking")) == 1
    assert one(facts, "FRIEND_OF", "Peter").subject == "Alice"


def test_seed_scenario_keeps_history_and_provenance(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = responder(english_answer)
    results = [llm_memory.add(message, USER) for message in ENGLISH]

    likes = one(all_facts(llm_memory), "LIKES", "badminton")
    events = [(h.event, h.episode_uid) for h in llm_memory.history(likes.uid, USER)]
    added, ended = results[1].episode_uids[0], results[2].episode_uids[0]
    assert events == [("ADD", added), ("INVALIDATE", ended)]
    me = llm_memory.entity("alice", USER)
    assert me.entity.uid == Memory.self_uid(USER)
    assert USER in me.entity.aliases  # it went by its user id before
    renamed = [h.detail for h in llm_memory.history(me.entity.uid, USER) if h.event == "UPDATE"]
    assert renamed == [f"name: {USER} -> Alice"]
    john = llm_memory.entity("John", USER)
    assert {e.content for e in john.episodes} == {ENGLISH[3], ENGLISH[5]}
    assert results[3].episode_uids[0] in one(john.facts, "HAS_PET", "Tommy").episodes


def test_seed_scenario_in_chinese(llm_memory: Memory, scripted_llm: ScriptedLLM) -> None:
    scripted_llm.default = responder(chinese_answer)
    results = [llm_memory.add(message, USER) for message in CHINESE]

    assert [r.llm_calls for r in results] == [1] * 7
    assert all(r.errors == [] for r in results)
    prompts = [body["messages"][-1]["content"] for body in scripted_llm.requests]
    assert "用户喜欢打羽毛球" in prompts[2]
    assert "'爱丽丝'" in prompts[6]
    facts = all_facts(llm_memory)
    assert one(facts, "LIKES", "羽毛球").invalid_at is not None
    assert one(facts, "HATES", "羽毛球").invalid_at is None
    assert named(llm_memory, "爱丽丝") == [Memory.self_uid(USER)]
    assert len(named(llm_memory, "约翰")) == 1
    assert len(named(llm_memory, "徒步旅行")) == 1
    assert one(facts, "FRIEND_OF", "彼得").subject == "爱丽丝"
    assert one(facts, "IS", "蜘蛛侠").subject == "彼得"


def test_seed_scenario_offline(
    store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    say_offline.cache_clear()  # said once a process: this worker may have said it already
    with caplog.at_level(logging.WARNING, logger="graphmem"):
        mem = Memory(store=store, embedder=embedder, data_dir=tmp_path)
        results = [mem.add(message, USER) for message in ENGLISH]

    assert isinstance(mem.extractor, OfflineExtractor)
    offline = [r for r in caplog.records if "extraction is offline" in r.getMessage()]
    assert len(offline) == 1
    assert {r.extractor for r in results} == {"offline"}
    assert sum(r.llm_calls for r in results) == 0
    facts = all_facts(mem)
    assert one(facts, "LIKES", "playing badminton").invalid_at is not None
    assert one(facts, "HATES", "playing badminton").invalid_at is None
    assert named(mem, "Alice") == [Memory.self_uid(USER)]
    assert len(named(mem, "John")) == 1
    assert len(named(mem, "hiking")) == 1
    name = mem.search("What is my name?", USER).facts[0].fact
    assert (name.predicate, name.object, name.text) == (
        "HAS_NAME",
        "Alice",
        "The user's name is Alice",
    )
    assert one(facts, "FRIEND_OF", "Peter").text == "Peter is Alice's friend"


@pytest.mark.parametrize("facts_first", [True, False])
def test_facts_naming_the_user_by_their_id_are_about_the_user(
    store: GraphStore, embedder: Embedder, tmp_path: Path, facts_first: bool
) -> None:
    """User "alice" with `add_facts` about Alice and messages in the first person had two
    entities when the facts came first: "Alice" of the facts and the user's own of "I" (the
    quickstart's graph); the user's name said as their id ("My name is Alice") stayed "alice"."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    facts = functools.partial(mem.add_facts, [("Alice", "WORKS_AT", "Acme")], "alice")
    named = functools.partial(mem.add, "My name is Alice", "alice")
    for step in (facts, named) if facts_first else (named, facts):
        step()
    mem.add("I moved to Berlin", "alice")
    me = Memory.self_uid("alice")
    assert {f.subject_uid for f in mem.get_all("alice")} == {me}
    shown = {e.entity.uid: e.entity.name for e in mem.top_entities("alice", 10, "frequency")}
    assert shown[me] == "Alice" and list(shown.values()).count("Alice") == 1


def test_a_user_entity_keyed_otherwise_is_found_by_its_uid(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """The user's own entity that no key or alias key of their id names (an older version's,
    named 'USER') must not be made again by a fact naming the user: two nodes of one uid."""
    if not isinstance(store, FalkorDBStore):
        pytest.skip("strips an alias key with FalkorDB's own query")
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    mem.add("I like tea", "dora")
    store._graph.query("MATCH (e:Entity {user_id: 'dora'}) SET e.alias_keys = []")
    mem.add_facts([("Dora", "LIKES", "coffee")], "dora")
    me = Memory.self_uid("dora")
    assert [e.entity.uid for e in mem.top_entities("dora", 10)].count(me) == 1
    assert {f.subject_uid for f in mem.get_all("dora")} == {me}


# -- resolution and conflicts ----------------------------------------------------------------


def test_an_offline_add_finds_what_it_contradicts_without_searching(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The offline extractor compares its facts only with the stored facts between the same
    two entities: they are read for the facts it found, not searched for before it with the
    whole retriever (what a prompt needs, and more than half an offline add's time)."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    mem.add("I like chess. Anna likes golf. Anna loves tennis.", "erin")

    def no_search(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an offline add searched")

    monkeypatch.setattr(mem.retriever, "search", no_search)
    result = mem.add("I hate chess. Anna hates golf.", "erin")
    facts = mem.get_all("erin", include_invalid=True)
    ended = {(f.predicate, f.object) for f in facts if not f.is_valid}
    assert result.facts_invalidated == 2 and ended == {("LIKES", "chess"), ("LIKES", "golf")}
    assert {(f.predicate, f.object) for f in facts if f.is_valid} >= {("LOVES", "tennis")}


def test_an_older_message_does_not_end_a_newer_fact_it_contradicts(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """'I hate chess' said in 2023 and added after 'I like chess' of 2024 is the history: it
    ends when the liking began, and the liking stays current."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    mem.add("I like chess", "fay", ts="2024-06-01")
    result = mem.add("I hate chess", "fay", ts="2023-01-01")
    facts = {f.predicate: f for f in mem.get_all("fay", include_invalid=True)}
    likes, hates = facts["LIKES"], facts["HATES"]
    assert likes.invalid_at is None
    assert hates.invalid_at == likes.valid_at
    assert result.invalidated_uids == [hates.uid]


def test_a_fact_stored_as_history_lists_its_add_before_its_end(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """Its ADD and INVALIDATE have one time (the write's): they were listed in the order of
    their uids, the end first about half the time."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    for user in [f"ivy{n}" for n in range(8)]:
        mem.add("I live in Berlin", user, ts="2024-06-01")
        [oslo] = mem.add("I live in Oslo", user, ts="2023-01-01").invalidated_uids
        assert [h.event for h in mem.history(oslo, user)] == ["ADD", "INVALIDATE"]


def test_two_values_in_one_message_leave_the_last_said_current(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """'I live in Rome. I live in Madrid.' keeps Rome as history, ended when Madrid began."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    result = mem.add("I live in Rome. I live in Madrid.", "gus", ts="2024-06-01")
    facts = mem.get_all("gus", include_invalid=True)
    rome, madrid = one(facts, "LIVES_IN", "Rome"), one(facts, "LIVES_IN", "Madrid")
    assert madrid.is_valid and not rome.is_valid and rome.invalid_at == madrid.valid_at
    assert result.facts_added == 2 and result.invalidated_uids == [rome.uid]


@pytest.mark.parametrize(
    "text, subject, predicate, values",
    [
        ("I live in Rome and Madrid.", "USER", "LIVES_IN", {"Rome", "Madrid"}),
        (
            "Alice works at Google, Microsoft and Apple.",
            "Alice",
            "WORKS_AT",
            {"Google", "Microsoft", "Apple"},
        ),
        ("I work at both Google and Microsoft.", "USER", "WORKS_AT", {"Google", "Microsoft"}),
        ("I live in Rome and in Madrid.", "USER", "LIVES_IN", {"Rome", "Madrid"}),
        ("I have two sisters, Ann and Beth.", "USER", "HAS_SISTER", {"Ann", "Beth"}),
    ],
)
def test_values_said_in_one_coordination_are_all_current(
    store: GraphStore,
    embedder: Embedder,
    tmp_path: Path,
    text: str,
    subject: str,
    predicate: str,
    values: set[str],
) -> None:
    """One clause states them at once: none is history ended the instant it began."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    result = mem.add(text, "hal", ts="2024-06-01")
    facts = [f for f in mem.get_all("hal", include_invalid=True) if f.predicate == predicate]
    assert {f.object for f in facts} == values and result.invalidated_uids == []
    assert all(f.is_valid and f.invalid_at is None for f in facts)
    assert {f.subject for f in facts} == {"hal" if subject == "USER" else subject}


def test_a_value_said_after_a_coordination_ends_each_of_its_values(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    mem.add("I live in Rome and Madrid.", "hal", ts="2024-06-01")
    later = mem.add("I live in Paris now.", "hal", ts="2024-07-01")
    facts = mem.get_all("hal", include_invalid=True)
    rome, madrid = one(facts, "LIVES_IN", "Rome"), one(facts, "LIVES_IN", "Madrid")
    assert set(later.invalidated_uids) == {rome.uid, madrid.uid}
    assert rome.invalid_at == madrid.invalid_at == datetime(2024, 7, 1, tzinfo=UTC)
    assert one(facts, "LIVES_IN", "Paris").is_valid


@pytest.mark.parametrize(
    "text, current, history",
    [
        ("I like tennis. I don't like tennis.", "DOES_NOT_LIKE", "LIKES"),
        ("I hate golf. Actually, I love golf.", "LOVES", "HATES"),
    ],
)
def test_of_two_opposites_in_one_message_the_last_said_is_current(
    store: GraphStore, embedder: Embedder, tmp_path: Path, text: str, current: str, history: str
) -> None:
    """Nothing said is dropped: the first is history, ended when the last began."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    result = mem.add(text, "ivy", ts="2024-06-01")
    facts = {f.predicate: f for f in mem.get_all("ivy", include_invalid=True)}
    assert facts[current].is_valid and not facts[history].is_valid
    assert facts[history].invalid_at == datetime(2024, 6, 1, tzinfo=UTC)
    assert result.facts_added == 2 and result.invalidated_uids == [facts[history].uid]


def test_two_names_in_one_message_are_both_the_users(
    store: GraphStore, embedder: Embedder, tmp_path: Path
) -> None:
    """'My name is Ann. My name is Bea.' reads as two adds would: Ann is the user's former
    name (history), not another person named Ann."""
    mem = Memory(store=store, embedder=embedder, extractor=OfflineExtractor(), data_dir=tmp_path)
    mem.add("My name is Ann. My name is Bea.", "hal", ts="2024-06-01")
    names = {f.text: f for f in mem.get_all("hal", include_invalid=True)}
    ann, bea = names["The user's name is Ann"], names["The user's name is Bea"]
    assert bea.is_valid and not ann.is_valid and ann.subject == ann.object == "Bea"


def test_similar_names_of_one_type_are_one_entity(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.script(
        tool_call(extraction([ent("hiking", "Activity")], [fact("USER", "LIKES", "hiking", "x")])),
        tool_call(
            extraction(
                [ent("going hiking", "Activity"), ent("Bob", "Person")],
                [fact("Bob", "LIKES", "going hiking", "Bob likes going hiking")],
            )
        ),
    )
    llm_memory.add("I like hiking", USER)
    result = llm_memory.add("Bob likes going hiking", USER)

    assert (result.entities_merged, result.entities_added) == (1, 1)
    hiking = llm_memory.entity("going hiking", USER)
    assert hiking.entity.name == "hiking"
    merges = [h for h in llm_memory.history(hiking.entity.uid, USER) if h.event == "MERGE"]
    assert len(merges) == 1 and "going hiking" in (merges[0].detail or "")


def test_single_valued_predicate_replaces_the_old_value(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.script(
        tool_call(extraction([], [fact("USER", "LIVES_IN", "Paris", "USER lives in Paris")])),
        tool_call(extraction([], [fact("USER", "LIVES_IN", "Berlin", "USER lives in Berlin")])),
    )
    llm_memory.add("I live in Paris", USER)
    result = llm_memory.add("I moved to Berlin", USER)

    facts = all_facts(llm_memory)
    assert one(facts, "LIVES_IN", "Paris").invalid_at is not None
    assert one(facts, "LIVES_IN", "Berlin").invalid_at is None
    assert result.invalidated_uids == [one(facts, "LIVES_IN", "Paris").uid]
    shown = [f.fact.object for f in llm_memory.search("Where do I live?", USER).facts]
    assert "Paris" not in shown


def test_two_values_in_one_add_leave_the_last_said_current(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    """A conversation added in one call that says where the user lived, then where they
    moved: the earlier value is history, ended when the later one began."""
    scripted_llm.script(
        tool_call(
            extraction(
                [],
                [
                    fact("USER", "LIVES_IN", "Rome", "USER lives in Rome"),
                    fact("USER", "LIVES_IN", "Madrid", "USER lives in Madrid"),
                ],
            )
        )
    )
    said = [{"role": "user", "content": "I live in Rome"}, {"role": "assistant", "content": "Nice"}]
    said.append({"role": "user", "content": "I just moved, I live in Madrid now"})
    result = llm_memory.add(said, USER, ts="2024-06-01")
    facts = all_facts(llm_memory)
    rome, madrid = one(facts, "LIVES_IN", "Rome"), one(facts, "LIVES_IN", "Madrid")
    assert madrid.is_valid and not rome.is_valid and rome.invalid_at == madrid.valid_at
    assert result.facts_added == 2 and result.invalidated_uids == [rome.uid]


def test_an_older_message_does_not_replace_a_newer_value(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    """A message said before the stored value (an older log ingested late) is history: it
    ends when the newer value began, and the newer value stays current."""
    scripted_llm.script(
        tool_call(extraction([], [fact("USER", "LIVES_IN", "Berlin", "USER lives in Berlin")])),
        tool_call(extraction([], [fact("USER", "LIVES_IN", "Oslo", "USER lives in Oslo")])),
    )
    llm_memory.add("I live in Berlin", USER, ts="2024-06-01")
    result = llm_memory.add("I live in Oslo", USER, ts="2023-01-01")

    facts = all_facts(llm_memory)
    berlin, oslo = one(facts, "LIVES_IN", "Berlin"), one(facts, "LIVES_IN", "Oslo")
    assert berlin.invalid_at is None
    assert oslo.invalid_at == berlin.valid_at
    assert result.invalidated_uids == [oslo.uid]
    ended = [h for h in llm_memory.history(oslo.uid, USER) if h.event == "INVALIDATE"]
    assert len(ended) == 1 and "Berlin" in (ended[0].detail or "")
    shown = [f.fact.object for f in llm_memory.search("Where do I live?", USER).facts]
    assert "Berlin" in shown and "Oslo" not in shown


def test_when_a_value_was_said_decides_not_the_date_it_names(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    """'I've lived in Berlin since 2015' said in 2024 is newer news than 'I live in Oslo'
    said in 2023 and added after it, though Oslo's date is later; a value said last with an
    older date it names still replaces the stored one."""
    since_2015 = {**fact("USER", "LIVES_IN", "Berlin", "USER lives in Berlin")}
    since_2015["valid_at"] = "2015-01-01T00:00:00Z"
    since_2010 = {**fact("USER", "LIVES_IN", "Rome", "USER lives in Rome")}
    since_2010["valid_at"] = "2010-01-01T00:00:00Z"
    scripted_llm.script(
        tool_call(extraction([], [since_2015])),
        tool_call(extraction([], [fact("USER", "LIVES_IN", "Oslo", "USER lives in Oslo")])),
        tool_call(extraction([], [since_2010])),
    )
    llm_memory.add("I've lived in Berlin since 2015", USER, ts="2024-06-01")
    llm_memory.add("I live in Oslo", USER, ts="2023-01-01")
    facts = all_facts(llm_memory)
    berlin, oslo = one(facts, "LIVES_IN", "Berlin"), one(facts, "LIVES_IN", "Oslo")
    assert berlin.is_valid and not oslo.is_valid
    assert oslo.valid_at is not None and oslo.invalid_at is not None
    assert oslo.valid_at <= oslo.invalid_at  # never ended before it began

    llm_memory.add("Actually I've lived in Rome since 2010", USER, ts="2025-01-01")
    facts = all_facts(llm_memory)
    assert [f.object for f in facts if f.is_valid and f.predicate == "LIVES_IN"] == ["Rome"]


# -- faults: reported, never raised, the episode kept ---------------------------------------

BAD_SCHEMA = {"facts": [{"source": "USER"}], "entities": "none"}


@pytest.mark.parametrize(
    ("replies", "reason"),
    [
        ([tool_call('{"entities": [')] * 3, "invalid_output"),
        ([tool_call(BAD_SCHEMA)] * 3, "does not match the schema"),
        ([content("You like hiking!")] * 3, "no record_memory tool call"),
        ([http_error(400, "model not found")], "http_error"),
        ([tool_call(extraction_json_schema(strict=True))] * 3, "a JSON schema"),
        ([tool_call({})] * 3, "missing entities, facts and invalidations"),
    ],
    ids=["malformed-json", "wrong-schema", "no-tool-call", "fatal-400", "schema-echo", "empty"],
)
def test_faults_keep_the_episode_as_failed(
    llm_memory: Memory, scripted_llm: ScriptedLLM, replies: list[Reply], reason: str
) -> None:
    scripted_llm.script(*replies)
    result = llm_memory.add("I like hiking", USER)

    assert result.extraction_error is not None and reason in result.extraction_error
    assert result.llm_calls == len(replies)
    assert result.facts_added == 0 and llm_memory.get_all(USER) == []
    [episode] = llm_memory.reads.episodes_by_uids(USER, result.episode_uids)
    assert (episode.status, episode.content) == ("failed", "I like hiking")
    assert episode.error == result.extraction_error


def test_timeout_is_reported(
    store: GraphStore, embedder: Embedder, scripted_llm: ScriptedLLM, tmp_path: Path
) -> None:
    extractor = llm_extractor(scripted_llm, max_retries=0, timeout=0.3)
    mem = Memory(store=store, embedder=embedder, extractor=extractor, data_dir=tmp_path)
    scripted_llm.script(delay(1.0))
    result = mem.add("I like hiking", USER)

    assert result.extraction_error is not None and "timeout" in result.extraction_error
    assert mem.stats(USER).episodes == 1


def test_rate_limit_then_success(llm_memory: Memory, scripted_llm: ScriptedLLM) -> None:
    good = extraction([], [fact("USER", "LIKES", "hiking", "USER likes hiking")])
    scripted_llm.script(http_error(429, "slow down"), tool_call(good))
    result = llm_memory.add("I like hiking", USER)

    assert (result.llm_calls, result.facts_added, result.extraction_error) == (2, 1, None)
    assert llm_memory.stats().llm_calls == 2


def test_server_rejecting_tools_falls_back_to_json(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.reject_tools = True
    good = extraction([], [fact("USER", "LIKES", "tea", "USER likes tea")])
    scripted_llm.default = lambda body: content(json.dumps(good))
    result = llm_memory.add("I like tea", USER)

    assert (result.llm_calls, result.facts_added, result.extraction_error) == (2, 1, None)
    assert "tools" not in scripted_llm.requests[-1]


# -- input handling and idempotence ----------------------------------------------------------


def test_the_same_message_twice_at_one_time_is_one_episode(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    scripted_llm.default = responder(english_answer)
    first = llm_memory.add(ENGLISH[0], USER, ts="2024-05-01T10:00:00Z")
    again = llm_memory.add(ENGLISH[0], USER, ts="2024-05-01T10:00:00Z")

    assert (first.facts_added, again.facts_added, again.facts_updated) == (1, 0, 0)
    assert (again.episodes_skipped, again.llm_calls, again.episode_uids) == (1, 0, [])
    assert len(scripted_llm.requests) == 1
    assert llm_memory.stats(USER).episodes == 1
    assert one(all_facts(llm_memory), "LIKES", "hiking").mentions == 1


def test_a_bad_message_in_a_list_is_reported_and_the_rest_kept(
    llm_memory: Memory, scripted_llm: ScriptedLLM
) -> None:
    too_long = "x" * (llm_memory.settings.max_message_chars + 1)
    messages = [
        {"role": "user", "content": too_long},
        {"role": "user", "content": "I like tea"},
        {"role": "assistant", "content": [{"type": "text", "text": "Noted, tea."}]},
    ]
    result = llm_memory.add(messages, USER, session_id="s1", metadata={"app": "test"})

    assert len(result.episode_uids) == 2
    assert len(result.errors) == 1 and result.errors[0].startswith("message #0 left out")
    lines = rf"\[[-\d :]+\] {USER}: I like tea\n\[[-\d :]+\] ASSISTANT: Noted, tea\."
    assert re.search(lines, scripted_llm.requests[0]["messages"][-1]["content"])
    episodes = llm_memory.reads.episodes_by_uids(USER, result.episode_uids)
    assert {(e.role, e.session_id, e.metadata["app"]) for e in episodes} == {
        ("user", "s1", "test"),
        ("assistant", "s1", "test"),
    }


def test_a_single_message_over_the_limit_raises_before_writing(llm_memory: Memory) -> None:
    too_long = "x" * (llm_memory.settings.max_message_chars + 1)
    with pytest.raises(LimitExceededError):
        llm_memory.add(too_long, USER)
    assert llm_memory.stats(USER).episodes == 0
