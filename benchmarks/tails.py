"""Where the slowest searches of a run spent their time: the median of each stage of
`SearchResult.timings_ms` over the slowest 5% (a median: the few searches that met a full
garbage collection would rule a mean), written beside every latency a benchmark reports."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def slowest_stages(
    latency_ms: Sequence[float], timings: Sequence[dict[str, float]]
) -> dict[str, float]:
    """Median ms per stage over the slowest 5% of the searches (at least one); `timings[i]` is
    the `timings_ms` of the search that took `latency_ms[i]`."""
    if not latency_ms:
        return {}
    count = max(1, len(latency_ms) // 20)
    slowest = sorted(range(len(latency_ms)), key=latency_ms.__getitem__)[-count:]
    names = dict.fromkeys(name for i in slowest for name in timings[i])
    return {
        name: round(statistics.median(timings[i].get(name, 0.0) for i in slowest), 1)
        for name in names
    }


def stages_text(stages: dict[str, float]) -> str:
    """Stages as "embed 4.4, anchors 12.4, ..., total 56.2" (those under 0.05 ms left out)."""
    return ", ".join(f"{name} {ms}" for name, ms in stages.items() if ms >= 0.05)


def ratio_text(mode_p95: float, semantic_p95: float) -> str:
    """A mode's p95 as a multiple of the semantic leg's, measured in the same run."""
    return f"{mode_p95 / semantic_p95:.1f}x" if semantic_p95 > 0 else "-"
