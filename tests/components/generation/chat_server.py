"""A contract server for OpenAI-compatible chat on 127.0.0.1: /v1/chat/completions, plain and streaming (SSE).

It answers with the documented response shapes and, on demand, the documented failure modes: HTTP 500, 429 with
Retry-After, a malformed body, and a slow answer. Tests drive it through the real `openai` client (via Haystack's
`OpenAIChatGenerator`).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ChatServerState:
    """What the server answers next, and what it was sent."""

    reply: str = "The Denver Broncos won Super Bowl 50 [1]."
    # Failure modes consumed one per request, in order; when empty, requests succeed.
    failures: list[str] = field(default_factory=list)
    retry_after: str = "0.2"
    slow_s: float = 2.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-contract-1",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 42, "completion_tokens": len(text.split()), "total_tokens": 42 + len(text.split())},
    }


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-contract-1",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class _Handler(BaseHTTPRequestHandler):
    state: ChatServerState

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default stderr log
        return

    def _json(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        try:
            self._answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout): exactly what the slow mode tests

    def _answer(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        try:
            payload = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._json(400, {"error": {"message": "body is not JSON", "type": "invalid_request_error"}})
            return
        state = self.state
        state.requests.append(payload)
        state.headers.append({key.lower(): value for key, value in self.headers.items()})
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            self._json(401, {"error": {"message": "missing API key", "type": "invalid_request_error"}})
            return
        failure = state.failures.pop(0) if state.failures else None
        if failure == "500":
            self._json(500, {"error": {"message": "the model crashed", "type": "server_error"}})
            return
        if failure == "429":
            self._json(
                429,
                {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
                headers={"Retry-After": state.retry_after},
            )
            return
        if failure == "malformed":
            self._json(200, b'{"id": "chatcmpl-1", "choices": [ {"message": ')
            return
        if failure == "slow":
            time.sleep(state.slow_s)
        model = str(payload.get("model") or "contract-model")
        if payload.get("stream"):
            self._stream(model, state.reply, bool((payload.get("stream_options") or {}).get("include_usage")))
            return
        self._json(200, _completion(model, state.reply))

    def _stream(self, model: str, text: str, include_usage: bool) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        events = [_chunk(model, {"role": "assistant", "content": ""}, None)]
        words = text.split(" ")
        events += [
            _chunk(model, {"content": word + (" " if i < len(words) - 1 else "")}, None) for i, word in enumerate(words)
        ]
        events.append(_chunk(model, {}, "stop"))
        if include_usage:
            usage = _completion(model, text)["usage"]
            events.append({**_chunk(model, {}, None), "choices": [], "usage": usage})
        for event in events:
            self.wfile.write(f"data: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that hung up mid-answer is a tested case, not a server fault


@contextmanager
def chat_server() -> Iterator[tuple[str, ChatServerState]]:
    """Run the server on a free port; yields its base URL (ending in /v1) and its state."""
    state = ChatServerState()
    handler = type("Handler", (_Handler,), {"state": state})
    server = _QuietServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
