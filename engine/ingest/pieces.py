"""A message longer than the message limit, in pieces that each fit (as the LlamaIndex block
splits them, with `engine.normalize.split_text`): nothing said is dropped."""

from __future__ import annotations

from datetime import timedelta

from engine.ingest.chat_records import ChatRecord
from engine.normalize import split_text

_APART = timedelta(milliseconds=1)  # pieces of one message keep their order in time


def pieces(record: ChatRecord, limit: int | None) -> list[ChatRecord]:
    """`record` itself when it fits in `limit` characters (None: no limit), else its pieces in
    order, each with source `<source> part i/n` and its time 1 ms after the one before."""
    if limit is None or len(record.content) <= limit:
        return [record]
    texts = split_text(record.content, limit)
    return [
        record.model_copy(
            update={
                "content": text,
                "source": f"{record.source} part {i}/{len(texts)}",
                "ts": record.ts + _APART * (i - 1) if record.ts is not None else None,
            }
        )
        for i, text in enumerate(texts, start=1)
    ]
