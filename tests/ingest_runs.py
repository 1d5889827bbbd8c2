"""An export ingested as a user does it: `graphmem ingest PATH --user ann --json`, then the same
command over a later export of the same chat; and what a search then finds first."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.cli import main
from engine.memory import Memory
from engine.models import Snippet

Report = dict[str, Any]


def ingest_twice(
    path: Path, later: Callable[[], object], capsys: pytest.CaptureFixture[str]
) -> tuple[Report, Report]:
    """The JSON reports of an ingest of `path` for "ann", and of a second one after `later()`
    wrote a later export over it. Both must succeed (status 0)."""
    home = str(path.parent / "home")
    ingest = ["--data-dir", home, "--json", "ingest", str(path), "--user", "ann"]
    assert main(ingest) == 0
    first = json.loads(capsys.readouterr().out)
    later()
    assert main(ingest) == 0
    return first, json.loads(capsys.readouterr().out)


def found_first(path: Path, question: str) -> tuple[Snippet, int]:
    """The message a search of "ann"'s memory finds first, and how many messages it holds."""
    with Memory(data_dir=path.parent / "home") as memory:
        found = memory.search(question, user_id="ann").episodes[0].episode
        return found, memory.stats("ann").episodes
