"""Loading the embedding model without transformers' "Loading weights" progress bar.

transformers draws that bar whenever it reads a checkpoint (sentence-transformers' load, the
OpenVINO export), and its only switch is process-wide. graphmem turns it off for the length of
its own loads and then puts back what the host had: a host that wants bars, or turned them off
itself, keeps its choice; the host's logging configuration is never touched.
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0  # loads under way: the first turns the bar off, the last puts the host's choice back
_host_wanted_bars = False


@contextlib.contextmanager
def quiet_model_loading() -> Iterator[None]:
    """Within the block, transformers draws no progress bars (nested and threaded loads
    included); after it, its bars are as the host had them."""
    if importlib.util.find_spec("transformers") is None:
        yield
        return
    from transformers.utils import logging as hf_logging

    global _depth, _host_wanted_bars
    with _lock:
        if _depth == 0:
            _host_wanted_bars = hf_logging.is_progress_bar_enabled()
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _host_wanted_bars:
                hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
