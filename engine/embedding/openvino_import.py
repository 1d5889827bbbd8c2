"""OpenVINO, imported with its usage telemetry declined.

Importing `openvino` imports its model converter (`openvino.tools.ovc`), which sends a usage
event to Intel's analytics and writes a client id and usage counts under `~/intel`, unless a
consent file under `~/intel` declines it or the process runs in CI: OpenVINO's telemetry is on
until declined. graphmem's users did not choose OpenVINO (it is graphmem's default embedding
runtime), so the import graphmem makes declines it: for that import, OpenVINO's consent check
answers "declined", as a consent file of "0" would. A process that imported OpenVINO before
graphmem keeps what its own import did.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from collections.abc import Iterator
from types import ModuleType

_LOCK = threading.Lock()


def imported() -> ModuleType:
    """The `openvino` module, imported (once per process) with its telemetry declined."""
    with _LOCK:
        held = sys.modules.get("openvino")
        if held is not None:
            return held
        with _telemetry_declined():
            return importlib.import_module("openvino")


@contextlib.contextmanager
def _telemetry_declined() -> Iterator[None]:
    try:
        from openvino_telemetry.utils.opt_in_checker import ConsentCheckResult, OptInChecker
    except ImportError:  # a version without it sends nothing of this kind
        yield
        return
    own = OptInChecker.__dict__["check"]
    OptInChecker.check = lambda *args, **kwargs: ConsentCheckResult.DECLINED  # type: ignore[method-assign]
    try:
        yield
    finally:
        OptInChecker.check = own  # type: ignore[method-assign]
