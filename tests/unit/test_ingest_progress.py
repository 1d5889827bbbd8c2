"""What a running ingest shows: reading (a dry run too), the rate and ETA, no store needed."""

from __future__ import annotations

import io
import json
from pathlib import Path

from engine.ingest.chat_records import ChatRecord
from engine.ingest.progress import LineProgress
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
        "ingest: 0/10 messages (added 0, failed 0), 0 facts, 0 LLM calls, 0 tokens, 0.0 msg/s, "
        "ETA ?",
    ]
