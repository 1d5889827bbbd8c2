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
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from multiprocessing.connection import Connection
from typing import Any, cast

from engine.testing.scripted_replies import (
    EMPTY_EXTRACTION,
    Content,
    Delay,
    Endless,
    HttpError,
    Reply,
    Responder,
    ToolCall,
    ToolCalls,
    answer_empty,
    answer_like_a_small_model,
    content,
    delay,
    echo_schema,
    endless,
    error_body,
    estimate_tokens,
    http_error,
    length_cap,
    prompt_text,
    render,
    roles_must_alternate,
    sent_schema,
    tool_call,
    tool_calls,
    tools_need_jinja,
    tools_not_supported,
)

__all__ = [
    "EMPTY_EXTRACTION",
    "Content",
    "Delay",
    "Endless",
    "HttpError",
    "Reply",
    "Responder",
    "ScriptedLLM",
    "ScriptedLLMProcess",
    "ToolCall",
    "ToolCalls",
    "answer_empty",
    "answer_like_a_small_model",
    "content",
    "delay",
    "echo_schema",
    "endless",
    "estimate_tokens",
    "http_error",
    "prompt_text",
    "render",
    "roles_alternate",
    "roles_must_alternate",
    "sent_schema",
    "tool_call",
    "tool_calls",
    "tools_need_jinja",
    "tools_not_supported",
]


class ScriptedLLM:
    """The server. `script()` queues replies; `default` answers once the queue is empty.

    Besides the model's replies it can play a real server's rules, checked before any reply
    is used (a refused request consumes no scripted reply):

    Attributes:
        base_url: `http://127.0.0.1:<port>/v1`, for `openai.OpenAI(base_url=...)`.
        requests: every chat request body received, in arrival order.
        responses: every (status, body) sent, in the same order as `requests`.
        default: called with the request body (as the model sees it) when no scripted reply
            is left.
        latency_s: a fixed delay before every answer (e.g. 0.5 for an ingest benchmark).
        reject_tools: refuse any request that sends tools: True for 400 "tools are not
            supported", or the `HttpError` to answer (`tools_need_jinja()`: llama-server's 500).
        string_tool_choice: take `tool_choice` only as a string, as llama-server does: an
            object is ignored with a warning (kept in `warnings`) and "auto" is used.
        alternating_roles: refuse, as Gemma's chat template does, any conversation whose
            roles do not alternate user/assistant after the system message.
        response_formats: the `response_format` types accepted (None: all); others get 400.
        owned_by, server_header: what `GET /v1/models` says about the server.
        model_lists: how many times `GET /v1/models` was asked.
    """

    def __init__(
        self,
        *,
        default: Responder = answer_empty,
        latency_s: float = 0.0,
        reject_tools: bool | HttpError = False,
        string_tool_choice: bool = False,
        alternating_roles: bool = False,
        response_formats: frozenset[str] | None = None,
        owned_by: str = "scripted",
        server_header: str | None = None,
    ) -> None:
        self.default = default
        self.latency_s = latency_s
        self.reject_tools = reject_tools
        self.string_tool_choice = string_tool_choice
        self.alternating_roles = alternating_roles
        self.response_formats = response_formats
        self.owned_by = owned_by
        self.server_header = server_header
        self.model_lists = 0
        self.warnings: list[str] = []
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
        wait = self.latency_s
        reply: Reply | None = self._refusal(body)
        if reply is None:
            with self._lock:
                reply = self._queue.popleft() if self._queue else None
            if reply is None:
                reply = self.default(self._as_seen(body))
            while isinstance(reply, Delay):
                wait += reply.seconds
                reply = reply.then
            if isinstance(reply, Endless) and length_cap(body) is None:
                wait += reply.seconds
        status, answer = render(reply, body)
        with self._lock:
            self.responses.append((status, answer))
        return status, answer, wait

    def models(self) -> dict[str, Any]:
        """The `GET /v1/models` body (the `Server` header is `server_header`, when set)."""
        with self._lock:
            self.model_lists += 1
        card = {"id": "scripted-model", "object": "model", "created": 0, "owned_by": self.owned_by}
        return {"object": "list", "data": [card]}

    def _refusal(self, body: dict[str, Any]) -> HttpError | None:
        if self.alternating_roles and not roles_alternate(body.get("messages", [])):
            return roles_must_alternate()
        if self.reject_tools and body.get("tools"):
            rejection = self.reject_tools
            return rejection if isinstance(rejection, HttpError) else tools_not_supported()
        kind = (body.get("response_format") or {}).get("type")
        if self.response_formats is not None and kind and kind not in self.response_formats:
            allowed = ", ".join(f'"{k}"' for k in sorted(self.response_formats | {"text"}))
            message = f"response_format type must be one of {allowed}, but got: {kind}"
            return HttpError(400, message, "invalid_request_error")
        return None

    def _as_seen(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.string_tool_choice and not isinstance(body.get("tool_choice", "auto"), str):
            with self._lock:
                self.warnings.append("Wrong type supplied for parameter 'tool_choice'")
            return body | {"tool_choice": "auto"}
        return body


def roles_alternate(messages: list[dict[str, Any]]) -> bool:
    """Whether the roles after the leading system message go user, assistant, user, ..."""
    roles = [m.get("role") for m in messages]
    if roles and roles[0] == "system":
        roles = roles[1:]
    expected = ["user" if i % 2 == 0 else "assistant" for i in range(len(roles))]
    return bool(roles) and roles == expected


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
            self._send(404, error_body(f"no route {self.path}", "not_found_error"))
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            self._send(400, error_body("body is not a JSON object", "invalid_request_error"))
            return
        status, answer, wait = cast(_Server, self.server).llm.handle(body)
        time.sleep(wait)
        self._send(status, answer)

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/v1/models":
            self._send(404, error_body(f"no route {self.path}", "not_found_error"))
            return
        answer = cast(_Server, self.server).llm.models()
        self._send(200, answer)

    def version_string(self) -> str:
        # the `Server` header: some servers name themselves there (llama-server: "llama.cpp")
        header = cast(_Server, self.server).llm.server_header
        return header or super().version_string()

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
