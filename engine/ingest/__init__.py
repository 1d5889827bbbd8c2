"""Batch ingestion: readers that turn chat logs on disk into records to add to memory."""

from engine.ingest.chat_records import ChatRecord, LocomoQuestion, ReadError, ReadResult
from engine.ingest.readers import (
    CHAT_FORMATS,
    iter_chat_log,
    load_locomo_qa,
    read_chat_log,
)

__all__ = [
    "CHAT_FORMATS",
    "ChatRecord",
    "LocomoQuestion",
    "ReadError",
    "ReadResult",
    "iter_chat_log",
    "load_locomo_qa",
    "read_chat_log",
]
