"""The progress a long command (load, import, ingest) shows on stderr, turned off when its
reader leaves (`graphmem load ... 2>&1 | head`): the work goes on unshown, where the
BrokenPipeError of the next line stopped it half done with status 0."""

from __future__ import annotations

import os
import sys
from typing import Generic, Protocol, TypeVar

P = TypeVar("P", contravariant=True)


class Display(Protocol[P]):
    """A bar or plain lines (`engine.load.load_bar`, `engine.ingest.progress`)."""

    def __call__(self, progress: P, /) -> None: ...
    def close(self) -> None: ...


class Shown(Generic[P]):
    """`show` (None: nothing shown) until its stream's reader leaves."""

    def __init__(self, show: Display[P] | None) -> None:
        self.show = show

    def __call__(self, progress: P) -> None:
        if self.show is None:
            return
        try:
            self.show(progress)
        except BrokenPipeError:
            self.show = None
            _to_nowhere()

    def close(self) -> None:
        if self.show is not None:
            self.show.close()


def _to_nowhere() -> None:
    """Point stderr at /dev/null: what it holds unwritten would fail again at exit."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # not a file: nothing is flushed at exit
        return
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
