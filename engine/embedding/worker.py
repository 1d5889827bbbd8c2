"""The embedding model in a process of its own (`Embedder(process=True)`).

A torch forward pass takes the GIL back between its operations. In a busy batch ingest the
engine's other threads hold it most of the time, and a pass then lasts several times its CPU
time while a core stays idle. In a child process the passes run at full speed.

The child is `python -m engine.embedding.child` (which builds the `Embedder` and calls `serve`
here, so this module never imports its parent); requests and replies are length-prefixed
pickles on its stdin and stdout, between `ModelProcess` and `serve` only. The first request
holds the `Embedder` arguments; then each request is `(operation, argument)` and each reply
`("ok", value)`, `("config", message)` (a `ConfigError`, such as a model that cannot load)
or `("error", message)`. The child exits when its stdin closes, so it never
outlives the parent; it ignores Ctrl-C (SIGINT), which is the parent's to handle.
"""

from __future__ import annotations

import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, Protocol

from engine.errors import ConfigError

_HEADER = struct.Struct("!Q")


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the other side closed the pipe")
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))  # our own child, over private pipes


class ModelProcess:
    """The parent's half: starts the child on first use, one request at a time.

    Raises (from `call`):
        ConfigError: the child could not start or load the model, or died.
        RuntimeError: the model failed on this request (the message says how).
    """

    def __init__(self, arguments: dict[str, Any]) -> None:
        self._arguments = arguments
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None

    def call(self, operation: str, argument: object = None) -> Any:
        with self._lock:
            child = self._started()
            assert child.stdin is not None and child.stdout is not None  # both are pipes
            try:
                _send(child.stdin, (operation, argument))
                status, value = _receive(child.stdout)
            except (EOFError, OSError) as exc:
                self._child = None
                raise ConfigError(f"the embedding process stopped ({exc}); see its stderr") from exc
        if status == "config":
            raise ConfigError(f"embedding process: {value}")
        if status == "error":
            raise RuntimeError(f"embedding process: {value}")
        return value

    def _started(self) -> subprocess.Popen[bytes]:
        if self._child is None:
            command = [sys.executable, "-m", "engine.embedding.child"]
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert child.stdin is not None  # a pipe
            _send(child.stdin, self._arguments)
            self._child = child
        return self._child

    def close(self) -> None:
        with self._lock:
            child, self._child = self._child, None
        if child is None:
            return
        assert child.stdin is not None  # a pipe
        child.stdin.close()  # the child's cue to exit
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        if child.stdout is not None:
            child.stdout.close()


class Model(Protocol):
    """What the child serves: an `engine.embedding.Embedder` in its own process."""

    @property
    def dimension(self) -> int: ...
    def encode(self, texts: list[str], show_progress: bool = False) -> Any: ...
    def reads(self, text: str, max_unknown: float = 0.25) -> bool: ...


def _answer(model: Model, operation: str, argument: Any) -> object:
    if operation == "encode":
        return model.encode(argument)
    if operation == "reads":
        return model.reads(*argument)
    if operation == "dimension":
        return model.dimension
    raise ValueError(f"unknown operation {operation!r}")


def serve(build: Callable[..., Model]) -> None:
    """The child's half: build the model from the first request's arguments, then answer
    requests until stdin closes."""
    # Ctrl-C reaches the whole process group: the parent stops (and says how to resume), then
    # closes our stdin; dying of it here only printed a traceback under the parent's words
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints must not land in the replies
    requests = sys.stdin.buffer
    model = build(**_receive(requests))
    while True:
        try:
            operation, argument = _receive(requests)
        except EOFError:
            return
        try:
            reply: tuple[str, object] = ("ok", _answer(model, operation, argument))
        except ConfigError as exc:  # e.g. the model cannot load
            reply = ("config", str(exc))
        except Exception as exc:  # the parent raises it; this process goes on serving
            reply = ("error", f"{type(exc).__name__}: {exc}")
        _send(replies, reply)
