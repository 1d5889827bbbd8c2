"""The host's input of a stdio MCP server, which SIGINT and SIGTERM can end.

The MCP SDK reads stdin in a worker thread that only a line or EOF wakes. A signal while the
host still held stdin open (Ctrl-C in a terminal, `kill` of a server whose host lives on)
left the server waiting for that line for ever, its memory open after Ctrl-C. Here a daemon
thread copies the host's input into a pipe put in place of fd 0, and a signal makes it close
that pipe: the SDK's reader sees EOF, as when the host hangs up, and the server ends.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading

from engine.errors import ConfigError

_CHUNK = 1 << 16


class StdinPipe:
    """Fd 0 replaced by a pipe fed from the host's stdin until `close_on`'s signals.

    Raises:
        ConfigError: on creation, when there is no stdin to serve (fd 0 is closed).
    """

    def __init__(self) -> None:
        self.signals: list[int] = []  # the signals that ended the input, first first
        try:
            self._host = os.dup(0)
        except OSError as exc:
            raise ConfigError(
                "graphmem mcp serves stdio, and its stdin is closed: let an MCP host start it "
                "(it talks on stdin and stdout), or serve HTTP with --http"
            ) from exc
        read_end, self._feed = os.pipe()
        self._wake_read, self._wake_write = os.pipe()
        os.dup2(read_end, 0)
        os.close(read_end)
        threading.Thread(target=self._copy, name="graphmem-stdin", daemon=True).start()

    def close_on(self, *signums: int) -> None:
        """End the input on any of `signums` (instead of their handlers so far)."""
        for signum in signums:
            signal.signal(signum, self._on_signal)

    def _on_signal(self, signum: int, frame: object) -> None:
        self.signals.append(signum)
        os.write(self._wake_write, b"\0")

    def _copy(self) -> None:
        """Copy the host's input until it ends or a signal wakes this thread; then close the
        pipe, which is EOF for its reader."""
        try:
            with contextlib.suppress(OSError):  # the host's or the reader's end is gone
                while True:
                    ready, _, _ = select.select([self._host, self._wake_read], [], [])
                    data = b"" if self._wake_read in ready else os.read(self._host, _CHUNK)
                    if not data:
                        return
                    view = memoryview(data)
                    while view:
                        view = view[os.write(self._feed, view) :]
        finally:
            os.close(self._feed)
