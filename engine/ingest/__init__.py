"""Batch ingestion: readers that turn chat logs on disk into records to add to memory."""

from engine.ingest.readers import (
    FORMATS,
    iter_chat_log,
    load_locomo_qa,
    read_chat_log,
)
from engine.ingest.records import ChatRecord, LocomoQuestion, ReadError, ReadResult

__all__ = [
    "FORMATS",
    "ChatRecord",
    "LocomoQuestion",
    "ReadError",
    "ReadResult",
    "iter_chat_log",
    "load_locomo_qa",
    "read_chat_log",
]
