"""Threads for the database reads of one search that need not wait for each other (a
semantic query while the caller anchors and expands): each mostly waits on the database."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

BACKGROUND = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphmem-search")
