"""Contract servers: small HTTP services on 127.0.0.1 that answer like hosted APIs, failures included.

Each module (`firecrawl`, `arxiv`, ...) holds one service: its documented response shapes, a small corpus, a pytest
fixture, and a `__main__` that serves it for manual runs (`python -m tests.contract_servers.firecrawl`). The
shared machinery here lets a test make the next requests slow, rate limited (429 + Retry-After), failing (500),
malformed, hanging, dropped, answering with an endless body, or failing with an error that echoes the request's
key (as some upstreams do), for one path or for all: in-process with `server.fail(...)`, or from another
process with `POST /_contract/fail` (JSON body: the same arguments) and `POST /_contract/reset`.
"""

from __future__ import annotations

import argparse
import json
import socket
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

FAULT_MODES = ("slow", "429", "500", "malformed", "hang", "drop", "endless", "drip", "echo_key")
# An endless body stops after this long even if nobody reads it to the end, so a test never leaves it running, and
# goes out at a bounded rate: a client that buffers bodies and was abandoned at its timeout keeps reading until the
# body ends, and an unthrottled loopback body would fill the test process's memory (gigabytes a second).
ENDLESS_LIMIT_S = 20.0
ENDLESS_RATE_BYTES_S = 16_000_000


def take_counted(items: Iterable[Any], matches: Callable[[Any], bool]) -> Any | None:
    """The first of `items` that `matches` and has uses left (its `times`; None: unlimited), one use taken."""
    for item in items:
        if not matches(item) or (item.times is not None and item.times <= 0):
            continue
        if item.times is not None:
            item.times -= 1
        return item
    return None


@dataclass
class Fault:
    """One injected misbehaviour: `mode` for requests whose path starts with `path`, `times` times (None: always)."""

    mode: str
    path: str = ""
    times: int | None = None
    delay_s: float = 0.0
    retry_after: float | None = None
    match: str = ""  # a substring the request body or query must contain (e.g. one page's URL)
    status: int = 0  # echo_key: the HTTP status of the error (default 400)


@dataclass
class Reply:
    """What a handler answers: a status, a body (bytes or JSON-able) and headers."""

    status: int = 200
    body: Any = b""
    content_type: str = "application/json"
    headers: dict[str, str] | None = None


class ContractServer:
    """A threaded HTTP server on 127.0.0.1 with injectable faults; subclasses implement `handle`."""

    name = "contract"
    malformed_body = b"<html><body>Bad gateway: upstream returned garbage"
    # Where a request carries the key (`api_key`) and the word before it: `Authorization: Bearer KEY` by default.
    key_header = "authorization"
    key_scheme = "Bearer"

    def __init__(self, port: int = 0, api_key: str | None = None) -> None:
        self.api_key = api_key
        self.data_lock = threading.Lock()  # for a subclass's own data (its pages, papers, sessions, scripted turns)
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._released = threading.Event()
        self.requests: list[dict[str, Any]] = []
        self.bytes_sent = 0  # by endless bodies
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # quiet: tests read `requests` instead
                return

            def do_GET(self) -> None:  # noqa: N802
                server._dispatch(self, "GET")

            def do_POST(self) -> None:  # noqa: N802
                server._dispatch(self, "POST")

        self._httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ContractServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name=f"{self.name}-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()  # hanging handlers return at once
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_until_interrupted(self, *lines: str) -> None:
        """Start, print `lines` (how to point the product at this server), and serve until Ctrl-C."""
        self.start()
        for line in lines:
            print(line, flush=True)  # noqa: T201 - a manual tool
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            self.stop()

    @classmethod
    def serve_by_hand(cls, description: str, default_port: int = 0, default_api_key: str | None = None) -> None:
        """The `__main__` of a contract server: serve it on `--port` (with `--api-key`, given a default key; '' for
        none) and print `settings_lines()` until Ctrl-C."""
        parser = argparse.ArgumentParser(description=description)
        parser.add_argument("--port", type=int, default=default_port)
        if default_api_key is None:
            server = cls(parser.parse_args().port)
        else:
            parser.add_argument("--api-key", default=default_api_key, help="key the server expects ('' for none)")
            args = parser.parse_args()
            server = cls(args.port, args.api_key or None)
        server.serve_until_interrupted(*server.settings_lines())

    def settings_lines(self) -> list[str]:
        """What to set to point the product at this server (printed when it is served by hand)."""
        return [f"{self.name} contract server on {self.base_url} (Ctrl-C stops)"]

    def __enter__(self) -> ContractServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- behaviour ----------------------------------------------------------------------------------------------

    def fail(
        self,
        mode: str,
        *,
        path: str = "",
        times: int | None = None,
        delay_s: float = 0.0,
        retry_after: float | None = None,
        match: str = "",
        status: int = 0,
    ) -> None:
        """Misbehave on matching requests: slow (answer after `delay_s`), 429, 500, malformed, hang, drop, endless
        (a 200 whose body never ends; `bytes_sent` counts what went out), drip (the same, a few bytes every `delay_s`
        or 0.1 s), echo_key (an error, `status` or 400, whose
        body repeats the request's credentials)."""
        if mode not in FAULT_MODES:
            raise ValueError(f"mode must be one of {', '.join(FAULT_MODES)}")
        with self._lock:
            self._faults.append(Fault(mode, path, times, delay_s, retry_after, match, status))

    def reset(self) -> None:
        """Behave again, forget the request log, release hanging requests."""
        with self._lock:
            self._faults.clear()
            self.requests.clear()
            self.bytes_sent = 0
        self._released.set()
        self._released = threading.Event()

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        raise NotImplementedError

    def authorized(self, headers: dict[str, str]) -> bool:
        """Whether a request with `headers` carries this server's key (always, for a server without a key)."""
        if self.api_key is None:
            return True
        expected = f"{self.key_scheme} {self.api_key}" if self.key_scheme else self.api_key
        return headers.get(self.key_header) == expected

    @staticmethod
    def query_params(query: str) -> dict[str, str]:
        """A query string's parameters, the last value of each (blank values kept)."""
        return {key: values[-1] for key, values in parse_qs(query, keep_blank_values=True).items()}

    # -- internals ----------------------------------------------------------------------------------------------

    def _take_fault(self, path: str, payload: str) -> Fault | None:
        with self._lock:
            return take_counted(
                self._faults, lambda fault: path.startswith(fault.path) and (not fault.match or fault.match in payload)
            )

    def _dispatch(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        parts = urlsplit(handler.path)
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        headers = {key.lower(): value for key, value in handler.headers.items()}
        with self._lock:
            self.requests.append(
                {
                    "method": method,
                    "path": parts.path,
                    "query": parts.query,
                    "body": body,
                    "headers": headers,
                    "at": time.time(),
                }
            )
        if parts.path.startswith("/_contract/"):
            self._send(handler, self._control(parts.path, body))
            return
        fault = self._take_fault(parts.path, parts.query + body.decode("utf-8", "replace"))
        if fault is not None:
            if fault.mode == "hang":
                self._released.wait(timeout=120)
                self._close(handler)
                return
            if fault.mode == "drop":
                self._close(handler)
                return
            if fault.mode in ("endless", "drip"):
                self._send_endless(handler, fault.delay_s or 0.1 if fault.mode == "drip" else None)
                return
            if fault.mode == "echo_key":
                self._send(handler, self.key_echo_reply(fault.status or 400, headers, parts.query, body))
                return
            if fault.mode == "slow":
                self._released.wait(timeout=fault.delay_s)
            elif fault.mode == "429":
                extra = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
                self._send(handler, self.rate_limited_reply(extra))
                return
            elif fault.mode == "500":
                self._send(handler, self.server_error_reply())
                return
            elif fault.mode == "malformed":
                self._send(handler, Reply(200, self.malformed_body, self.malformed_content_type))
                return
        try:
            reply = self.handle(method, parts.path, parts.query, body, headers)
        except Exception as exc:  # noqa: BLE001 - a bug in a contract server must show as a 500, not a hang
            reply = Reply(500, {"success": False, "error": f"contract server bug: {exc}"})
        self._send(handler, reply)

    malformed_content_type = "application/json"

    def _control(self, path: str, body: bytes) -> Reply:
        """`POST /_contract/fail` (JSON: the arguments of `fail`) and `POST /_contract/reset`, for other processes."""
        if path == "/_contract/reset":
            self.reset()
            return Reply(200, {"ok": True})
        if path == "/_contract/fail":
            try:
                arguments = json.loads(body or b"{}")
                self.fail(arguments.pop("mode"), **arguments)
            except (ValueError, KeyError, TypeError) as exc:
                return Reply(400, {"ok": False, "error": str(exc)})
            return Reply(200, {"ok": True})
        return Reply(404, {"ok": False, "error": f"no control {path}"})

    def key_echo_reply(self, status: int, headers: dict[str, str], query: str, body: bytes) -> Reply:
        """An error whose message repeats every credential the request carried (header, query or body)."""
        carried = [
            value
            for key, value in headers.items()
            if key in ("authorization", "x-api-key", "api-key", "x-api-token") or "token" in key or "key" in key
        ]
        text = (
            f"Invalid credentials: {' | '.join(carried)}; query {query}; body {body[:500].decode('utf-8', 'replace')}"
        )
        return Reply(status, {"error": {"message": text, "type": "invalid_request_error"}, "detail": text})

    def _send_endless(self, handler: BaseHTTPRequestHandler, drip_every_s: float | None = None) -> None:
        """A 200 with no length that keeps sending (at most `ENDLESS_RATE_BYTES_S`; with `drip_every_s`, a few
        bytes that often, so that no read waits long but the body never ends) until the client hangs up, the server
        stops, or `ENDLESS_LIMIT_S` pass."""
        chunk = b"<p>drip</p>\n" if drip_every_s else b"<p>" + b"endless page " * 4000 + b"</p>\n"
        started = time.monotonic()
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/html; charset=utf-8")
            handler.send_header("Connection", "close")
            handler.end_headers()
            sent = 0
            while not self._released.is_set() and time.monotonic() - started < ENDLESS_LIMIT_S:
                handler.wfile.write(chunk)
                sent += len(chunk)
                with self._lock:
                    self.bytes_sent += len(chunk)
                handler.wfile.flush()
                ahead = drip_every_s or sent / ENDLESS_RATE_BYTES_S - (time.monotonic() - started)
                if ahead > 0:
                    self._released.wait(ahead)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass
        handler.close_connection = True

    def rate_limited_reply(self, headers: dict[str, str]) -> Reply:
        return Reply(429, {"error": "Rate limit exceeded"}, headers=headers)

    def server_error_reply(self) -> Reply:
        return Reply(500, {"error": "Internal server error"})

    @staticmethod
    def _close(handler: BaseHTTPRequestHandler) -> None:
        handler.close_connection = True
        try:
            handler.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        body = reply.body
        if not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode("utf-8")
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", reply.content_type)
            handler.send_header("Content-Length", str(len(body)))
            for key, value in (reply.headers or {}).items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def free_port() -> int:
    """A port on 127.0.0.1 nothing listens on right now (for 'service is down' tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def contract_fixtures(server_class: type[ContractServer], name: str) -> tuple[Any, Any]:
    """The pytest fixtures of one contract server: `NAME_server_session` (one server for the test session) and
    `NAME_server` (that server, reset to behave and to its original data before and after each test)."""

    @pytest.fixture(scope="session", name=f"{name}_server_session")
    def session_server() -> Any:
        with server_class() as server:
            yield server

    @pytest.fixture(name=f"{name}_server")
    def test_server(request: pytest.FixtureRequest) -> Any:
        server = request.getfixturevalue(f"{name}_server_session")
        server.reset()
        yield server
        server.reset()

    return session_server, test_server
