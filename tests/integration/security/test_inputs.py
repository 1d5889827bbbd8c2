"""Inputs that reach a query, a model or a setting: each one checked whole, bounded, and never
echoed back when it may be a secret."""

from __future__ import annotations

import pytest

from engine.memory import Memory
from tests.encodes import record_encodes


def test_a_huge_query_embeds_a_bounded_number_of_words(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.add_facts([("Alice", "FRIEND_OF", "John")], user_id="alice")
    query = " ".join(f"zq{i}x" for i in range(6000))[: memory.settings.max_message_chars]
    calls = record_encodes(memory.embedder, monkeypatch)
    memory.search(query, user_id="alice")
    inputs = [t for call in calls for t in call]
    words = {t for t in inputs if t.startswith("zq") and " " not in t}
    assert len(words) <= 64  # max_query_words (was every distinct word: about 4,600)
    assert len(inputs) <= 64 + 10  # + the query itself and the user's predicates
