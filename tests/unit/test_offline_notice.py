"""The notice that extraction is offline (no LLM configured) is given once a process: it was
given by every `Memory` (and `AsyncMemory`) that extracted, so a host opening one per request
logged it each time. No model is loaded: the extractor is only built."""

from __future__ import annotations

import logging

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
