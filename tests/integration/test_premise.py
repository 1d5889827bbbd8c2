"""A question that names one speaker of a conversation but asks what another speaker's
memories hold says so (issue 50, bad input: LoCoMo's adversarial questions), on the embedded
store with the real model and the offline extractor."""

from __future__ import annotations

from engine.memory import Memory
from engine.models import Premise

CHAT = [
    ("Melanie", "I ran a charity race for mental health last Saturday. Self-care matters."),
    ("Caroline", "That sounds great, Mel! I went to an LGBTQ support group yesterday."),
    ("Melanie", "Thanks! How is the adoption going?"),
    ("Caroline", "I am researching adoption agencies, I want to build a family."),
    ("Melanie", "I painted a sunrise over the lake with my kids."),
    ("Caroline", "I love painting too, I made a portrait of my grandma."),
]


def _chat(memory: Memory, user: str) -> None:
    for day, (speaker, text) in enumerate(CHAT, start=1):
        said = [{"role": "user", "name": speaker, "content": text}]
        memory.add(said, user_id=user, ts=f"2024-05-{day:02d}", session_id="s1")


def test_a_question_about_another_speakers_memory_says_whose_it_is(memory: Memory) -> None:
    _chat(memory, "u")
    asked = "When did Caroline run a charity race for mental health?"
    race = memory.search(asked, user_id="u", max_tokens=300)  # a prompt block's search
    assert race.premise == Premise(named="Caroline", matches="Melanie")
    assert memory.search(asked, user_id="u").premise is None  # a list's: not checked
    assert race.context().startswith(
        "Note: the memories nearest this question are about Melanie, not Caroline.\n"
    )
    assert "charity race" in race.context()  # the messages stay, with who said them


def test_a_question_about_the_named_speakers_own_memory_has_no_note(memory: Memory) -> None:
    _chat(memory, "u")
    for query in (
        "When did Melanie run a charity race for mental health?",
        "What is Caroline researching?",
        "Where did Caroline go yesterday?",
        "What did Caroline and Melanie paint?",  # both named: nobody to mix up
    ):
        found = memory.search(query, user_id="u", max_tokens=300)
        assert found.premise is None, query
        assert not found.context().startswith("Note:"), query


def test_messages_without_speakers_and_other_modes_have_no_note(memory: Memory) -> None:
    for day, (_, text) in enumerate(CHAT, start=1):
        memory.add(text, user_id="v", ts=f"2024-05-{day:02d}")
    asked = "When did Caroline run a charity race for mental health?"
    no_speakers = memory.search(asked, user_id="v", max_tokens=300)  # the user said all
    assert no_speakers.premise is None
    _chat(memory, "u")
    for mode in ("semantic", "episodes"):  # modes that look no names up
        assert memory.search(asked, user_id="u", mode=mode, max_tokens=300).premise is None
    assert memory.search(asked, user_id="u", mode="expansion", max_tokens=300).premise


def test_another_users_speakers_and_facts_never_make_a_note(memory: Memory) -> None:
    """The check reads the asking user's message index and facts only: a user whose own chat
    has Caroline alone gets no note naming the Melanie of another user's chat (it would tell
    that user's speakers and what they did), whichever of the two searched first."""
    memory.add(
        [{"role": "user", "name": "Caroline", "content": "I love painting portraits."}],
        user_id="solo", ts="2024-05-01", session_id="s1",
    )  # fmt: skip
    asked = "When did Caroline run a charity race for mental health?"
    before = memory.search(asked, user_id="solo", max_tokens=300)
    _chat(memory, "other")
    assert memory.search(asked, user_id="other", max_tokens=300).premise is not None
    after = memory.search(asked, user_id="solo", max_tokens=300)
    for found in (before, after):
        assert found.premise is None
        assert "Melanie" not in found.context() and "charity" not in found.context()
