"""`graphmem stats` prints the stored counts and the vector indexes still being built, readably:
it printed `warming: []` and `llm_calls: 0`, `prompt_tokens: 0`, `completion_tokens: 0`,
the counters of its own process, which calls no LLM (0 whatever was extracted before). `--json`
keeps every field. No store is needed: the `Memory` is a stand-in."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.cli import main, read
from engine.models import Stats

STATS = Stats(users=2, entities=5, facts=4, valid_facts=3, episodes=1, warming=["Fact"])


class _Counted:
    """The one call `graphmem stats` makes of a `Memory`."""

    def __enter__(self) -> _Counted:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def stats(self, user_id: str | None = None) -> Stats:
        return STATS


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "open_memory", lambda *a, **k: _Counted())


@pytest.mark.usefixtures("counted")
def test_stats_prints_the_stored_counts_and_what_is_warming(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["stats"]) == 0
    said = capsys.readouterr().out.splitlines()

    assert said == [
        "users: 2",
        "entities: 5",
        "facts: 4",
        "valid_facts: 3",
        "episodes: 1",
        "warming: Fact",
    ]


@pytest.mark.usefixtures("counted")
def test_stats_json_keeps_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["stats", "--json"]) == 0
    answer: dict[str, Any] = json.loads(capsys.readouterr().out)

    assert answer == STATS.model_dump()
