"""What a running ingest shows: reading (a dry run too), the rate and ETA, no store needed."""

from __future__ import annotations

import io
import json
from pathlib import Path

from engine.ingest.chat_records import ChatRecord
from engine.ingest.progress import LineProgress, Throughput
from engine.ingest.report import IngestProgress
from engine.ingest.sources import READ_EVERY, collect


def source_key(record: ChatRecord, user: str) -> tuple[str, ...]:
    return (f"{user}:{record.source}",)


def chat(path: Path, count: int) -> Path:
    rows = ({"role": "user", "content": f"message {n}"} for n in range(count))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_reading_tells_each_file_as_it_starts_every_thousand_messages_and_the_end(
    tmp_path: Path,
) -> None:
    first, second = chat(tmp_path / "a.jsonl", 2 * READ_EVERY + 5), chat(tmp_path / "b.jsonl", 3)
    told: list[tuple[str | None, int]] = []
    collect([first, second], "auto", "u1", source_key, on_read=lambda p, n: told.append((p, n)))
    assert told == [
        (str(first), 0),
        (str(first), READ_EVERY),
        (str(first), 2 * READ_EVERY),
        (str(second), 2 * READ_EVERY + 5),
        (None, 2 * READ_EVERY + 8),
    ]


def test_reading_shows_a_line_as_it_starts_and_as_it_ends() -> None:
    stream = io.StringIO()
    show = LineProgress(stream, every_s=60)
    for path, read in [("a.jsonl", 0), ("a.jsonl", 1000), ("b.jsonl", 2000), (None, 2005)]:
        show(IngestProgress(phase="read", path=path, records_read=read, total=0, elapsed_s=4.9))
    show(IngestProgress(total=10, records_read=2005, elapsed_s=5.0))
    assert stream.getvalue().splitlines() == [
        "ingest: reading a.jsonl, 0 messages read so far (5s)",
        "ingest: read 2005 messages in 4.9s",
        "ingest: 0/10 messages (added 0, failed 0), 0 facts, 0 LLM calls, 0 tokens, "
        "rate and ETA estimating",
    ]


def warmed_up(throughput: Throughput, done: int, per_s: float, since: float = 20.0) -> float:
    """The model warms up 20 s, then a message every 1/`per_s` seconds up to `done`: the
    fake clock's time of the last."""
    throughput.add(0.0, 0)
    at = since
    for n in range(1, done + 1):
        throughput.add(at, n)
        at += 1 / per_s
    return at - 1 / per_s


def test_the_rate_leaves_out_the_warm_up_and_estimates_until_a_few_are_done() -> None:
    throughput = Throughput(window_s=30.0, min_done=5)
    warmed_up(throughput, 5, per_s=4.0)
    assert throughput.rate is None  # 4 done since the first: still estimating
    throughput.add(21.25, 6)
    assert throughput.rate == 4.0  # not 6 / 21.25 s, the rate since the start


def test_the_rate_is_that_of_the_last_window() -> None:
    throughput = Throughput(window_s=10.0, min_done=5)
    at = warmed_up(throughput, 41, per_s=4.0)  # 10 s at 4 a second
    for n in range(42, 52):
        at += 2.0  # then 20 s at one every 2 s
        throughput.add(at, n)
    assert throughput.rate == 0.5


def test_the_line_shows_the_recent_rate_and_eta() -> None:
    stream = io.StringIO()
    show = LineProgress(stream, every_s=0)
    show(IngestProgress(total=106, done=0, elapsed_s=0.0))
    for n in range(1, 12):
        show(IngestProgress(total=106, done=n, messages_added=n, elapsed_s=20 + (n - 1) / 4))
    lines = stream.getvalue().splitlines()
    assert all(text.endswith("rate and ETA estimating") for text in lines[:6])
    assert lines[-1].endswith(", 4.0 msg/s, ETA 24s")  # 95 left at 4 a second
    show(IngestProgress(total=106, done=106, messages_added=106, elapsed_s=50.0))
    assert stream.getvalue().splitlines()[-1].endswith(", 2.1 msg/s")  # the whole run, no ETA
