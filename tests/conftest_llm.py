"""Pytest plugin: the `scripted_llm` fixture, a scripted OpenAI-compatible server per test.

Registered from `tests/conftest.py` with `pytest_plugins = ["tests.conftest_llm"]`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engine.testing.scripted_llm import ScriptedLLM


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A running `ScriptedLLM` on 127.0.0.1: `.base_url`, `.script(...)`, `.requests`."""
    with ScriptedLLM() as server:
        yield server
