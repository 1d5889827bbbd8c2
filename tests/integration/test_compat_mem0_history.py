"""The facade's `history` in Mem0's terms: each entry's `old_memory` and `new_memory` are the
memory's text before and after the event."""

from __future__ import annotations

import engine.compat.mem0 as facade
from engine.memory import Memory as GraphMemory


def test_a_memory_said_again_keeps_its_text_in_history(memory: GraphMemory) -> None:
    """A memory said again had the history entry UPDATE "u lives in Paris" -> "said again"
    (graphmem's note for a repeat), and the next entry's `old_memory` was "said again"."""
    m = facade.Memory(memory=memory)
    [paris] = m.add("I live in Paris", user_id="bob")["results"]
    m.add("I live in Paris", user_id="bob")
    m.add("I live in Berlin", user_id="bob")
    history = m.history(paris["id"])
    text = "bob lives in Paris"
    assert [(h["event"], h["old_memory"], h["new_memory"]) for h in history] == [
        ("ADD", None, text),
        ("UPDATE", text, text),
        ("DELETE", text, None),
    ]
