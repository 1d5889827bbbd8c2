"""Shared pieces of the reliability suite: a Memory on the scripted LLM, extraction payloads."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from engine.embedding import Embedder
from engine.extraction.llm import LLMExtractor
from engine.memory import Memory
from engine.store.base import GraphStore
from engine.testing.scripted_llm import ScriptedLLM


@contextmanager
def llm_memory(
    store: GraphStore, embedder: Embedder, llm: ScriptedLLM, data_dir: Path, **settings: Any
) -> Iterator[Memory]:
    """A Memory whose extractor talks to `llm` through the real openai client, no retries."""
    client = openai.OpenAI(base_url=llm.base_url, api_key="test", max_retries=0)
    extractor = LLMExtractor(client, "scripted", max_retries=0, timeout=10.0, sleep=lambda _: None)
    try:
        yield Memory(
            store=store, embedder=embedder, extractor=extractor, data_dir=data_dir, **settings
        )
    finally:
        client.close()


def extraction(facts: list[tuple[str, str, str]]) -> dict[str, Any]:
    """A well-formed record_memory payload stating `facts`."""
    names = sorted({n for s, _, o in facts for n in (s, o)})
    return {
        "entities": [{"name": n, "type": "Thing", "aliases": []} for n in names],
        "facts": [
            {"source": s, "predicate": p, "target": o, "fact": f"{s} {p.lower()} {o}"}
            for s, p, o in facts
        ],
        "invalidations": [],
    }
