"""The embedding model's child process (`engine.embedding.worker.serve`) and Ctrl-C.

A terminal sends SIGINT to the whole foreground process group: the parent (`graphmem ingest`)
stops and says how to resume, and closes the child's stdin, its cue to exit. The child died
of the signal instead, printing a KeyboardInterrupt traceback under the parent's message."""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
# a model that needs no weights; SIGINT handled as in a terminal, whatever pytest inherited
CHILD = """
import signal
from engine.embedding.worker import serve

class Model:
    dimension = 3

signal.signal(signal.SIGINT, signal.default_int_handler)
serve(lambda **arguments: Model())
"""
_HEADER = struct.Struct("!Q")  # the worker's framing: a length, then a pickle


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    (size,) = _HEADER.unpack(stream.read(_HEADER.size))
    return pickle.loads(stream.read(size))


def test_ctrl_c_leaves_the_child_to_its_parent() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    pipe = subprocess.PIPE
    with subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=pipe, stdout=pipe, stderr=pipe, env=env
    ) as child:
        assert child.stdin is not None and child.stdout is not None and child.stderr is not None
        try:
            _send(child.stdin, {})
            _send(child.stdin, ("dimension", None))
            assert _receive(child.stdout) == ("ok", 3)  # serving, waiting for the next request

            child.send_signal(signal.SIGINT)
            time.sleep(0.5)
            _send(child.stdin, ("dimension", None))
            assert _receive(child.stdout) == ("ok", 3)

            child.stdin.close()
            assert child.wait(timeout=10) == 0
            assert b"KeyboardInterrupt" not in child.stderr.read()
        finally:
            if child.poll() is None:
                child.kill()
