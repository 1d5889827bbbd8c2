"""The machine's 1-minute load average sampled while a benchmark runs: latencies measured
while it is above ~2 (2 cores, shared) are not valid, so every report carries it."""

from __future__ import annotations

import os
import threading
from types import TracebackType


class LoadSampler:
    """`with LoadSampler() as load: ...`, then `load.summary()`: min, mean, max."""

    def __init__(self, every_s: float = 5.0) -> None:
        self.every_s = every_s
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def _run(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self._stop.wait(self.every_s):
                return

    def summary(self) -> dict[str, float]:
        s = self.samples or [os.getloadavg()[0]]
        return {"min": min(s), "mean": sum(s) / len(s), "max": max(s)}

    def text(self) -> str:
        s = self.summary()
        return f"load average (1 min) {s['min']:.1f}-{s['max']:.1f}, mean {s['mean']:.1f}"
