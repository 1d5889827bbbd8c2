"""OpenVINO, with its usage telemetry declined.

Importing `openvino` imports its model converter (`openvino.tools.ovc`), which sends a usage
event to Intel's analytics and writes a client id and usage counts under `~/intel`, unless a
consent file under `~/intel` declines it or the process runs in CI: OpenVINO's telemetry is on
until declined; a model conversion sends more. graphmem's users did not choose OpenVINO (it is
graphmem's default embedding runtime), so what graphmem does with it declines it: during the
import (`imported`) and a conversion (`declined`), OpenVINO's consent check answers
"declined", as a consent file of "0" would. A process that imported OpenVINO before graphmem
keeps what its own import did.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterator
from types import ModuleType

_LOCK = threading.RLock()


def imported() -> ModuleType:
    """The `openvino` module, imported (once per process) with its telemetry declined."""
    held = sys.modules.get("openvino")
    if held is not None:
        return held
    with declined():
        return importlib.import_module("openvino")


@contextlib.contextmanager
def declined() -> Iterator[None]:
    """OpenVINO's telemetry declined while the block runs (one block at a time)."""
    try:
        from openvino_telemetry.utils.opt_in_checker import ConsentCheckResult, OptInChecker
    except ImportError:  # a version without it sends nothing of this kind
        yield
        return
    with _LOCK:
        own = OptInChecker.__dict__["check"]
        OptInChecker.check = lambda *args, **kwargs: ConsentCheckResult.DECLINED  # type: ignore[method-assign]
        try:
            yield
        finally:
            OptInChecker.check = own  # type: ignore[method-assign]
