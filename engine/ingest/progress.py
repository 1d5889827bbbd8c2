"""Showing a running ingest: a live tqdm bar on a terminal, plain periodic lines elsewhere."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from engine.ingest.report import IngestProgress


def _postfix(p: IngestProgress) -> dict[str, Any]:
    # the counts the summary ends with: added and failed messages, not read errors
    return {
        "added": p.messages_added,
        "failed": p.messages_failed,
        "facts": p.facts,
        "llm": p.llm_calls,
        "tokens": p.tokens,
    }


class BarProgress:
    """A tqdm bar over messages; facts, LLM calls, tokens and errors in the postfix."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stderr
        self._bar: Any = None

    def __call__(self, p: IngestProgress) -> None:
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(
                total=p.total, unit="msg", desc="ingest", file=self._stream, dynamic_ncols=True
            )
        self._bar.update(p.done - self._bar.n)
        self._bar.set_postfix(_postfix(p), refresh=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.refresh()
            self._bar.close()


class LineProgress:
    """One plain line every `every_s` seconds (and at the end): for logs and pipes."""

    def __init__(self, stream: IO[str] | None = None, every_s: float = 5.0) -> None:
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._last_at = float("-inf")
        self._last: IngestProgress | None = None

    def __call__(self, p: IngestProgress) -> None:
        self._last = p
        now = time.monotonic()
        if now - self._last_at >= self._every_s or p.done >= p.total:
            self._last_at = now
            self._stream.write(line(p) + "\n")
            self._stream.flush()

    def close(self) -> None:
        pass


def line(p: IngestProgress) -> str:
    """`ingest: 120/300 messages (added 118, failed 2), 40 facts, 120 LLM calls, 31k tokens,
    12.1 msg/s, ETA 15s`: added and failed as the summary counts them."""
    eta = f"{p.eta_s:.0f}s" if p.eta_s is not None else "?"
    return (
        f"ingest: {p.done}/{p.total} messages (added {p.messages_added}, failed "
        f"{p.messages_failed}), {p.facts} facts, {p.llm_calls} LLM calls, "
        f"{_short(p.tokens)} tokens, {p.rate:.1f} msg/s, ETA {eta}"
    )


def _short(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 10_000 else str(n)


def for_stream(stream: IO[str] | None = None) -> BarProgress | LineProgress:
    """A bar when `stream` (stderr by default) is a terminal, periodic lines otherwise."""
    stream = stream or sys.stderr
    return BarProgress(stream) if stream.isatty() else LineProgress(stream)
