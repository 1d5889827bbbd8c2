"""The notice that extraction is offline (no LLM configured) is given once a process: it was
given by every `Memory` (and `AsyncMemory`) that extracted, so a host opening one per request
logged it each time. No model is loaded: the extractor is only built."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from engine import components
from engine.config import build_settings


def test_the_offline_notice_is_given_once_a_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    components.say_offline.cache_clear()  # as in a new process
    settings = build_settings()

    with caplog.at_level(logging.WARNING, logger="graphmem"):
        extractors = [components.build_extractor(settings) for _ in range(3)]

    notices = [r for r in caplog.records if "extraction is offline" in r.getMessage()]
    assert len(notices) == 1
    assert len({id(e) for e in extractors}) == 3  # each Memory still gets its own extractor


def test_the_offline_notice_names_every_way_to_configure_an_llm(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A local server (Ollama, llama.cpp, vLLM) needs no OpenAI variable: the notice named
    only OPENAI_API_KEY and OPENAI_BASE_URL, so its user was sent looking for a key."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    components.say_offline.cache_clear()

    with caplog.at_level(logging.WARNING, logger="graphmem"):
        components.build_extractor(build_settings())

    messages = [record.getMessage() for record in caplog.records]
    (notice,) = [message for message in messages if "extraction is offline" in message]
    for way in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_PROVIDER", "local_llm.md"):
        assert way in notice


def test_two_memories_built_at_once_give_the_notice_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two `AsyncMemory` objects whose first adds ran at once (in two pool threads) both
    gave the notice: a cached function's first two calls both run."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    components.say_offline.cache_clear()
    notices: list[str] = []

    def slow_warning(message: str, *args: object) -> None:
        time.sleep(0.2)  # a handler writing to a slow stderr: the window both calls fall in
        notices.append(message)

    monkeypatch.setattr(components.log, "warning", slow_warning)
    settings = build_settings()
    threads = [threading.Thread(target=components.build_extractor, args=(settings,)) for _ in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(notices) == 1
