"""A scripted OpenAI-compatible chat endpoint on 127.0.0.1, for tests and benchmarks.

It is a real HTTP server (stdlib, one thread per request) serving `POST /v1/chat/completions`
from a queue of scripted replies; when the queue is empty a default responder answers. Every
request body is recorded, and every answer carries `usage` (an estimate: characters // 4).

    with ScriptedLLM() as llm:
        llm.script(tool_call({"entities": []}), http_error(429))
        client = openai.OpenAI(base_url=llm.base_url, api_key="x", max_retries=0)
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from typing import Any, cast

EMPTY_EXTRACTION: dict[str, Any] = {"entities": [], "facts": [], "invalidations": []}


@dataclass(frozen=True)
class ToolCall:
    """Answer with one tool call; `arguments` as a dict, or a raw (maybe malformed) string."""

    arguments: dict[str, Any] | str
    name: str = "record_memory"


@dataclass(frozen=True)
class ToolCalls:
    """Answer with several tool calls in one message (parallel tool calls)."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True)
class Content:
    """Answer with plain assistant text and no tool call."""

    text: str


@dataclass(frozen=True)
class HttpError:
    """Answer with an HTTP error status and an OpenAI-style error body."""

    status: int
    message: str = "scripted error"
    type: str = "server_error"
    code: str | None = None


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` before answering with `then` (longer than the client timeout: a timeout)."""

    seconds: float
    then: Reply = field(default_factory=lambda: ToolCall(EMPTY_EXTRACTION))


Reply = ToolCall | ToolCalls | Content | HttpError | Delay
Responder = Callable[[dict[str, Any]], Reply]


def tool_call(arguments: dict[str, Any] | str, name: str = "record_memory") -> ToolCall:
    return ToolCall(arguments, name)


def tool_calls(*calls: ToolCall) -> ToolCalls:
    return ToolCalls(calls)


def content(text: str) -> Content:
    return Content(text)


def http_error(status: int, message: str = "scripted error") -> HttpError:
    kinds = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_exceeded"}
    return HttpError(status, message, kinds.get(status, "server_error"))


def tools_not_supported() -> HttpError:
    return HttpError(400, "tools are not supported by this model", "invalid_request_error")


def delay(seconds: float, then: Reply | None = None) -> Delay:
    return Delay(seconds, then if then is not None else ToolCall(EMPTY_EXTRACTION))


def estimate_tokens(text: str) -> int:
    """The server's token count for a text: one token per four characters."""
    return len(text) // 4


def prompt_text(body: dict[str, Any]) -> str:
    """All message contents of a request, joined: what `prompt_tokens` is estimated from."""
    parts = [m.get("content") for m in body.get("messages", []) if isinstance(m, dict)]
    return "\n".join(p for p in parts if isinstance(p, str))


def answer_empty(body: dict[str, Any]) -> Reply:
    """Default responder: an empty extraction, as a tool call or as JSON-mode content."""
    if body.get("tools"):
        return ToolCall(EMPTY_EXTRACTION)
    return Content(json.dumps(EMPTY_EXTRACTION))


class ScriptedLLM:
    """The server. `script()` queues replies; `default` answers once the queue is empty.

    Attributes:
        base_url: `http://127.0.0.1:<port>/v1`, for `openai.OpenAI(base_url=...)`.
        requests: every request body received, in arrival order.
        responses: every (status, body) sent, in the same order as `requests`.
        default: called with the request body when no scripted reply is left.
        latency_s: a fixed delay before every answer (e.g. 0.5 for an ingest benchmark).
        reject_tools: answer 400 "tools not supported" to any request that sends tools.
    """

    def __init__(
        self,
        *,
        default: Responder = answer_empty,
        latency_s: float = 0.0,
        reject_tools: bool = False,
    ) -> None:
        self.default = default
        self.latency_s = latency_s
        self.reject_tools = reject_tools
        self.requests: list[dict[str, Any]] = []
        self.responses: list[tuple[int, dict[str, Any]]] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(self)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def script(self, *replies: Reply) -> ScriptedLLM:
        """Queue replies, answered in order, one per request."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def reset(self) -> None:
        """Forget queued replies and recorded traffic."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.responses.clear()

    @property
    def pending(self) -> int:
        """Scripted replies not used yet."""
        with self._lock:
            return len(self._queue)

    def usage_totals(self) -> tuple[int, int]:
        """(prompt_tokens, completion_tokens) summed over every successful answer."""
        with self._lock:
            usages = [body["usage"] for status, body in self.responses if "usage" in body]
        return sum(u["prompt_tokens"] for u in usages), sum(u["completion_tokens"] for u in usages)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedLLM:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], float]:
        """(status, JSON body, seconds to wait first) for one request; records both."""
        with self._lock:
            self.requests.append(body)
            reply = self._queue.popleft() if self._queue else None
        if reply is None:
            reply = self.default(body)
        wait = self.latency_s
        while isinstance(reply, Delay):
            wait += reply.seconds
            reply = reply.then
        if self.reject_tools and body.get("tools"):
            reply = tools_not_supported()
        status, answer = render(reply, body)
        with self._lock:
            self.responses.append((status, answer))
        return status, answer, wait


def render(
    reply: ToolCall | ToolCalls | Content | HttpError, body: dict[str, Any]
) -> tuple[int, dict[str, Any]]:
    """The HTTP status and JSON body of a reply to the request `body`."""
    if isinstance(reply, HttpError):
        return reply.status, _error_body(reply.message, reply.type, reply.code)
    if isinstance(reply, ToolCall | ToolCalls):
        calls = [reply] if isinstance(reply, ToolCall) else list(reply.calls)
        raws = [_raw_arguments(call) for call in calls]
        wire = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {"name": call.name, "arguments": raw},
            }
            for call, raw in zip(calls, raws, strict=True)
        ]
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": wire}
        return 200, _completion(body, message, "tool_calls", "".join(raws))
    message = {"role": "assistant", "content": reply.text}
    return 200, _completion(body, message, "stop", reply.text)


def _raw_arguments(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def _completion(
    body: dict[str, Any], message: dict[str, Any], finish: str, output: str
) -> dict[str, Any]:
    prompt_tokens = estimate_tokens(prompt_text(body))
    completion_tokens = estimate_tokens(output)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model", "scripted")),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class ScriptedLLMProcess:
    """A `ScriptedLLM` answering with `default` in a process of its own, so that serving
    does not compete with the caller's threads for the GIL (benchmarks). Nothing can be
    scripted or read back; `default` must pickle (a module-level function).

    Attributes:
        base_url: as for `ScriptedLLM`.
    """

    def __init__(self, *, default: Responder = answer_empty, latency_s: float = 0.0) -> None:
        context = multiprocessing.get_context("spawn")  # no fork of a process with threads
        self._conn, child = context.Pipe()
        self._process = context.Process(
            target=_serve, args=(default, latency_s, child), daemon=True
        )
        self._process.start()
        child.close()
        self.base_url: str = self._conn.recv()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.send(None)
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.terminate()
        self._conn.close()

    def __enter__(self) -> ScriptedLLMProcess:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _serve(default: Responder, latency_s: float, conn: Connection) -> None:
    with ScriptedLLM(default=default, latency_s=latency_s) as llm:
        conn.send(llm.base_url)
        with contextlib.suppress(EOFError):  # the parent went away: stop as well
            conn.recv()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, llm: ScriptedLLM) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.llm = llm


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without this, Nagle's algorithm and
        # the client's delayed ACK add ~40 ms to every answer
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(404, _error_body(f"no route {self.path}", "not_found_error"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send(400, _error_body("body is not a JSON object", "invalid_request_error"))
            return
        status, answer, wait = cast(_Server, self.server).llm.handle(body)
        time.sleep(wait)
        self._send(status, answer)

    def _send(self, status: int, answer: dict[str, Any]) -> None:
        data = json.dumps(answer).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timed out) before the answer came

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet


def _error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}
