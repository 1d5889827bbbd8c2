"""Showing a running ingest: a live tqdm bar on a terminal, plain periodic lines elsewhere.

Both show reading first (the messages read so far, the file being read), then the messages
extracted and written.
"""

from __future__ import annotations

import sys
import time
from collections import deque
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
    """A tqdm bar over messages read, then one over messages ingested (facts, LLM calls,
    tokens and errors in its postfix)."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self._stream = stream or sys.stderr
        self._bar: Any = None
        self._phase: str | None = None

    def __call__(self, p: IngestProgress) -> None:
        if self._bar is None or p.phase != self._phase:
            self.close()
            self._bar = self._new(p)
        reading = p.phase == "read"
        self._bar.update((p.records_read if reading else p.done) - self._bar.n)
        if not reading:
            self._bar.set_postfix(_postfix(p), refresh=False)
        elif p.path is not None:
            self._bar.set_postfix_str(p.path, refresh=False)

    def _new(self, p: IngestProgress) -> Any:
        from tqdm import tqdm

        self._phase = p.phase
        total = None if p.phase == "read" else p.total
        return tqdm(total=total, unit="msg", desc=p.phase, file=self._stream, dynamic_ncols=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.refresh()
            self._bar.close()
            self._bar = None


class Throughput:
    """Messages per second over the last `window_s` seconds, for the rate and ETA shown.

    The rate since the start overstates the ETA while the embedding model loads and the first
    extractions warm up (147 s shown for a 25 s run), so it is measured from the first message
    done on, over a sliding window, and is None (estimating) until `min_done` more are done.
    """

    def __init__(self, window_s: float = 30.0, min_done: int = 5) -> None:
        self._window_s = window_s
        self._min_done = min_done
        self._samples: deque[tuple[float, int]] = deque()  # (elapsed seconds, done)
        self._first = 0  # done at the first sample: what `min_done` counts from

    def add(self, elapsed_s: float, done: int) -> None:
        """Note `done` messages after `elapsed_s` seconds; none done yet is still warming up."""
        if done == 0:
            return
        if not self._samples:
            self._first = done
        self._samples.append((elapsed_s, done))
        # the oldest kept is the last one at or before the window's start
        while len(self._samples) > 2 and self._samples[1][0] <= elapsed_s - self._window_s:
            self._samples.popleft()

    @property
    def rate(self) -> float | None:
        """Messages per second over the window; None while estimating."""
        if len(self._samples) < 2 or self._samples[-1][1] - self._first < self._min_done:
            return None
        (start, done_then), (now, done) = self._samples[0], self._samples[-1]
        return (done - done_then) / (now - start) if now > start else None


class LineProgress:
    """One plain line every `every_s` seconds, as each phase starts and as it ends: for logs
    and pipes. The rate and ETA are those of the last half minute (`Throughput`)."""

    def __init__(self, stream: IO[str] | None = None, every_s: float = 5.0) -> None:
        self._stream = stream or sys.stderr
        self._every_s = every_s
        self._last_at = float("-inf")
        self._phase: str | None = None
        self._throughput = Throughput()

    def __call__(self, p: IngestProgress) -> None:
        now = time.monotonic()
        self._throughput.add(p.elapsed_s, p.done)
        ended = p.path is None if p.phase == "read" else p.done >= p.total
        if now - self._last_at >= self._every_s or ended or p.phase != self._phase:
            self._last_at, self._phase = now, p.phase
            rate = p.rate if ended else self._throughput.rate
            self._stream.write(line(p, rate) + "\n")
            self._stream.flush()

    def close(self) -> None:
        pass


def line(p: IngestProgress, rate: float | None) -> str:
    """`ingest: 120/300 messages (added 118, failed 2), 40 facts, 120 LLM calls, 31k tokens,
    12.1 msg/s, ETA 15s`: added and failed as the summary counts them, the ETA at `rate`
    (None: `rate and ETA estimating`; at the end, the rate alone); while reading,
    `ingest: reading chats/a.jsonl, 12000 messages read so far (3s)`."""
    if p.phase == "read":
        return _read_line(p)
    counts = (
        f"ingest: {p.done}/{p.total} messages (added {p.messages_added}, failed "
        f"{p.messages_failed}), {p.facts} facts, {p.llm_calls} LLM calls, "
        f"{_short(p.tokens)} tokens"
    )
    if rate is None:
        return f"{counts}, rate and ETA estimating"
    if p.done >= p.total:  # the end: nothing left to estimate
        return f"{counts}, {rate:.1f} msg/s"
    eta = f"{(p.total - p.done) / rate:.0f}s" if rate > 0 else "?"
    return f"{counts}, {rate:.1f} msg/s, ETA {eta}"


def _read_line(p: IngestProgress) -> str:
    if p.path is None:
        return f"ingest: read {p.records_read} messages in {p.elapsed_s:.1f}s"
    return f"ingest: reading {p.path}, {p.records_read} messages read so far ({p.elapsed_s:.0f}s)"


def _short(n: int) -> str:
    return f"{n / 1000:.0f}k" if n >= 10_000 else str(n)


def for_stream(stream: IO[str] | None = None) -> BarProgress | LineProgress:
    """A bar when `stream` (stderr by default) is a terminal, periodic lines otherwise."""
    stream = stream or sys.stderr
    return BarProgress(stream) if stream.isatty() else LineProgress(stream)
