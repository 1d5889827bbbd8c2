"""The plain progress lines of `graphmem load` and `graphmem import` (logs and pipes): a
phase's last line shows the rate it ran at and no ETA; it showed `0/s, ETA ?` at 100%
(`import vectors: 2/2 (100%), 0/s, ETA ?`). No store is needed."""

from __future__ import annotations

import io

from engine.load.load_bar import LoadLines
from engine.transfer.progress import ImportProgress, Phase


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_an_import_phase_ends_with_its_rate_and_no_eta() -> None:
    stream, clock = io.StringIO(), Clock()
    show = LoadLines(stream, verb="import", clock=clock)
    vectors = Phase(show, "vectors", 2)  # told as it starts
    clock.now += 0.5
    vectors.advance(2)

    assert stream.getvalue().splitlines() == [
        "import vectors: 0/2 (0%), 0/s, ETA ?",
        "import vectors: 2/2 (100%), 4/s",
    ]


def test_a_load_phase_shows_its_eta_while_it_runs_and_its_rate_at_the_end() -> None:
    stream, clock = io.StringIO(), Clock()
    show = LoadLines(stream, every_s=0, clock=clock)
    for done in (0, 1000, 3000):
        show(ImportProgress("facts", done, 3000))
        clock.now += 1.0

    assert stream.getvalue().splitlines() == [
        "load facts: 0/3000 (0%), 0/s, ETA ?",
        "load facts: 1000/3000 (33%), 1000/s, ETA 2s",
        "load facts: 3000/3000 (100%), 1500/s",
    ]


def test_a_phase_with_nothing_left_to_do_shows_no_rate() -> None:
    """A resumed load whose entities were all written before: none were this run."""
    stream = io.StringIO()
    LoadLines(stream)(ImportProgress("entities", 5, 5))

    assert stream.getvalue() == "load entities: 5/5 (100%)\n"
