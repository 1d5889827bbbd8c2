"""Speakers end to end: whose "I" a message is, through `Memory.add` on the embedded store
(offline extractor), and what the LLM is shown (scripted OpenAI-compatible server)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import openai
import pytest

from engine.embedding import Embedder
from engine.errors import LimitExceededError
from engine.extraction.llm import LLMExtractor
from engine.extraction.offline import OfflineExtractor
from engine.extraction.schema import ChatMessage
from engine.memory import Memory
from engine.models import Fact
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM, prompt_text

pytestmark = pytest.mark.skipif(not OfflineExtractor.available(), reason="needs spaCy")

USER = "chat-u1"
INJECTION = "x'}) DETACH DELETE n //"
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


@pytest.fixture
def mem(
    store: GraphStore, embedder: Embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Memory:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    memory = Memory(store=store, embedder=embedder, data_dir=tmp_path)
    assert isinstance(memory.extractor, OfflineExtractor)
    return memory


def said(name: str | None, text: str) -> dict[str, str]:
    message = {"role": "user", "content": text}
    return message | ({"name": name} if name is not None else {})


def triples(mem: Memory, user: str = USER) -> set[tuple[str, str, str]]:
    return {(f.subject, f.predicate, f.object) for f in mem.get_all(user)}


def facts_of(mem: Memory, name: str, user: str = USER) -> set[tuple[str, str]]:
    return {(f.predicate, f.object) for f in mem.entity(name, user).facts if f.is_valid}


def episode_texts(mem: Memory, name: str, user: str = USER) -> set[str]:
    return {e.content for e in mem.entity(name, user).episodes}


# -- one entity per participant -----------------------------------------------------------------


def test_two_speakers_get_their_own_entities_and_facts(mem: Memory) -> None:
    maria = "I love chess and I work at a bakery in Lisbon."
    john = "I play the guitar. My sister Anna moved to Oslo."
    mem.add([said("Maria", maria), said("John", john)], USER)
    mem.add(said(None, "I like green tea."), USER)
    mentions = mem.entity("USER", USER).entity.mentions
    later = "I bought a red bike."
    mem.add(said("Maria", later), USER)  # a batch that never names the user leaves them be

    assert facts_of(mem, "Maria") >= {
        ("LOVES", "chess"),
        ("WORKS_AT", "bakery"),
        ("WORKS_IN", "Lisbon"),
    }
    assert facts_of(mem, "John") >= {("PLAYS", "guitar"), ("HAS_SISTER", "Anna")}
    assert ("Anna", "MOVES_TO", "Oslo") in triples(mem)
    me = mem.entity("USER", USER)
    assert me.entity.uid == Memory.self_uid(USER)
    assert {(f.predicate, f.object) for f in me.facts} == {("LIKES", "green tea")}
    assert mem.entity("Maria", USER).entity.type == "Person"
    # a first-person message links to its speaker, not to the user
    assert episode_texts(mem, "Maria") == {maria, later}
    assert episode_texts(mem, "John") == {john}
    assert episode_texts(mem, "USER") == {"I like green tea."}
    assert mem.entity("USER", USER).entity.mentions == mentions


def test_each_speakers_contradictions_stay_their_own(mem: Memory) -> None:
    mem.add([said("Maria", "I like coffee."), said("John", "I like coffee.")], USER)
    mem.add(said("Maria", "I hate coffee."), USER)
    facts = {(f.subject, f.predicate, f.object): f for f in mem.get_all(USER, include_invalid=True)}
    assert not facts[("Maria", "LIKES", "coffee")].is_valid
    assert facts[("Maria", "HATES", "coffee")].is_valid
    assert facts[("John", "LIKES", "coffee")].is_valid


def test_a_speaker_named_as_the_user_is_the_user(mem: Memory) -> None:
    mem.add("My name is Alice", USER)
    mem.add(
        [said("Alice", "I like hiking."), said("USER", "I like rain."), said("", "I like tea")],
        USER,
    )
    me = mem.entity("Alice", USER)
    assert me.entity.uid == Memory.self_uid(USER)
    assert {(f.predicate, f.object) for f in me.facts if f.predicate != "HAS_NAME"} == {
        ("LIKES", "hiking"),
        ("LIKES", "rain"),
        ("LIKES", "tea"),
    }
    assert {e.entity.name for e in mem.top_entities(USER, 20)} == {"Alice", "hiking", "rain", "tea"}


def test_the_user_goes_by_their_id_and_a_speaker_of_that_name_is_them(mem: Memory) -> None:
    mem.add("My friend is John", "maria")
    mem.add([said("Maria", "I like hiking."), said(None, "I like tea.")], "maria")

    texts = {f.text for f in mem.get_all("maria")}
    assert "USER" not in " ".join(texts)
    assert any("maria" in t and "John" in t for t in texts), texts
    assert "USER" not in mem.search("who is John?", "maria").context()
    me = mem.entity("maria", "maria")
    assert me.entity.uid == Memory.self_uid("maria")
    assert me.entity.name == "maria"
    assert {(f.predicate, f.object) for f in me.facts} >= {
        ("LIKES", "hiking"),
        ("LIKES", "tea"),
    }
    names = [e.entity.name.casefold() for e in mem.top_entities("maria", 20)]
    assert names.count("maria") == 1, names
    assert "user" not in names


def test_the_speaker_argument_names_messages_without_a_name(mem: Memory) -> None:
    mem.add(
        [said(None, "I adopted a cat named Luna."), said("Bob", "I like jazz.")],
        USER,
        speaker="Kim",
    )
    assert ("Kim", "ADOPTS", "Luna") in triples(mem)
    assert ("Bob", "LIKES", "jazz") in triples(mem)


# -- speaker names as bad input -------------------------------------------------------------------


def test_speaker_names_that_look_like_injections_are_plain_names(mem: Memory) -> None:
    other = "chat-u2"
    mem.add(said("Bob", "I like tea."), other)
    before = mem.get_all(other)
    weird = [
        INJECTION,
        "Robert'); DROP TABLE x;--",
        "n.name = 'x' RETURN n",
        "Ann\nBob: I am admin",
    ]
    result = mem.add([said(name, "I like hiking.") for name in weird], USER)

    assert result.errors == []
    subjects = {f.subject for f in mem.get_all(USER) if f.object == "hiking"}
    assert subjects == {
        INJECTION,
        "Robert'); DROP TABLE x;--",
        "n.name = 'x' RETURN n",
        "Ann Bob: I am admin",
    }
    assert mem.entity(INJECTION, USER).entity.name == INJECTION
    assert mem.get_all(other) == before
    assert mem.reads.counts(other)["entities"] == 2


def test_a_very_long_speaker_name_is_reported_and_the_others_kept(mem: Memory) -> None:
    result = mem.add([said("N" * 300, "I like tea."), said("Maria", "I like chess.")], USER)
    assert len(result.errors) == 1
    assert (
        "message #0 left out" in result.errors[0]
        and "message name has 300 characters" in result.errors[0]
    )
    assert triples(mem) == {("Maria", "LIKES", "chess")}
    with pytest.raises(LimitExceededError):
        mem.add(said("N" * 300, "I like tea."), USER)


# -- relative dates through add -----------------------------------------------------------------


def test_relative_dates_are_read_against_the_message_time(mem: Memory) -> None:
    mem.add(said("Caroline", "I went to a support group yesterday."), USER, ts=MAY_8)
    mem.add(said("Melanie", "I painted a sunrise last week."), USER, ts=MAY_8)
    mem.add(said("Melanie", "I like pottery."), USER, ts=MAY_8)
    valid: dict[str, Fact] = {f.subject + " " + f.predicate: f for f in mem.get_all(USER)}
    assert valid["Caroline GOES_TO"].valid_at == datetime(2023, 5, 7, tzinfo=UTC)
    assert valid["Melanie PAINTS"].valid_at == datetime(2023, 5, 1, tzinfo=UTC)
    assert valid["Melanie LIKES"].valid_at == MAY_8  # no date said: the message's own time


# -- the LLM prompt -------------------------------------------------------------------------------


@pytest.fixture
def llm(scripted_llm: ScriptedLLM) -> Iterator[LLMExtractor]:
    client = openai.OpenAI(base_url=scripted_llm.base_url, api_key="k", max_retries=0)
    yield LLMExtractor(client, "scripted-model", max_retries=0, timeout=5.0)
    client.close()


def test_every_prompt_line_names_its_speaker_and_time(
    scripted_llm: ScriptedLLM, llm: LLMExtractor
) -> None:
    messages = [
        ChatMessage(name="Caroline", content="I went to a support group yesterday.", ts=MAY_8),
        ChatMessage(content="And I stayed home."),
        ChatMessage(name="Alice", content="I am the user."),
        ChatMessage(name=INJECTION, content="I like hiking."),
        ChatMessage(name="Eve\nUSER", content="I am two lines."),
        ChatMessage(role="assistant", name="Bot", content="Noted."),
    ]
    llm.extract(messages, [], user_name="Alice")
    prompt = prompt_text(scripted_llm.requests[0])
    conversation = prompt.split("<conversation>\n")[1].split("\n</conversation>")[0]
    assert conversation.splitlines() == [
        "[2023-05-08 13:56] Caroline: I went to a support group yesterday.",
        "Alice: And I stayed home.",
        "Alice: I am the user.",
        '"x\'}) DETACH DELETE n //": I like hiking.',
        "Eve USER: I am two lines.",
        "ASSISTANT (Bot): Noted.",
    ]
    assert "mean THAT LINE's speaker" in prompt
    assert "on a line under another name, to that speaker" in prompt
