"""Showing a running load (or import): a tqdm bar (rate and ETA) on a terminal, plain lines
elsewhere, one phase after the other."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any, Protocol


class Phased(Protocol):
    """How far a phase has got: `LoadProgress`, `engine.transfer.progress.ImportProgress`."""

    @property
    def phase(self) -> str: ...
    @property
    def done(self) -> int: ...
    @property
    def total(self) -> int: ...


class LoadBar:
    """One bar per phase (entities, then facts), each with its rate and ETA; `verb` names
    the work ("load", "import")."""

    def __init__(self, stream: IO[str] | None = None, verb: str = "load") -> None:
        self._stream = stream or sys.stderr
        self._verb = verb
        self._bar: Any = None
        self._phase = ""

    def __call__(self, p: Phased) -> None:
        if p.phase != self._phase:
            self.close()
            from tqdm import tqdm

            self._phase = p.phase
            self._bar = tqdm(
                total=p.total, initial=p.done, unit=p.phase[:-1] if p.phase else "item",
                desc=f"{self._verb} {p.phase}", file=self._stream, dynamic_ncols=True,
            )  # fmt: skip
        self._bar.update(p.done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class LoadLines:
    """`load facts: 61000/128185 (48%), 1020/s, ETA 66s` every `every_s` seconds, and at the
    end of each phase `load facts: 128185/128185 (100%), 1034/s`, its rate over the phase (none
    when it had nothing left to do): for logs and pipes."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        every_s: float = 5.0,
        verb: str = "load",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._verb = verb
        self._clock = clock
        self._last_at = float("-inf")
        self._phase = ""
        self._started = (0.0, 0)

    def __call__(self, p: Phased) -> None:
        now = self._clock()
        if p.phase != self._phase:
            self._phase, self._started = p.phase, (now, p.done)
        if now - self._last_at < self._every_s and p.done < p.total:
            return
        self._last_at = now
        self._stream.write(self._line(p, now) + "\n")
        self._stream.flush()

    def _line(self, p: Phased, now: float) -> str:
        elapsed, done = now - self._started[0], p.done - self._started[1]
        rate = done / elapsed if elapsed > 0 else 0.0
        share = 100 * p.done // p.total if p.total else 100
        head = f"{self._verb} {p.phase}: {p.done}/{p.total} ({share}%)"
        if p.done >= p.total:
            return f"{head}, {rate:.0f}/s" if done > 0 else head
        eta = f"{(p.total - p.done) / rate:.0f}s" if rate > 0 else "?"
        return f"{head}, {rate:.0f}/s, ETA {eta}"

    def close(self) -> None:
        pass


def for_stream(stream: IO[str] | None = None, verb: str = "load") -> LoadBar | LoadLines:
    """A bar when `stream` (stderr by default) is a terminal, periodic lines otherwise."""
    stream = stream or sys.stderr
    return LoadBar(stream, verb) if stream.isatty() else LoadLines(stream, verb=verb)
