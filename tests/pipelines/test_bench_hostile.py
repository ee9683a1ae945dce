"""The hostile bench's upstream: every request is answered with a 200 whose JSON body never ends, until the client
hangs up or the server stops, and what it sent is counted."""

from __future__ import annotations

import time
import urllib.request
from typing import Any

from pipelines.bench_hostile import EndlessUpstream

PREFIX = b'{"success": true, "data": "'


class _HangsUp:
    """A client's end of the connection that takes `accepted` writes, then is gone."""

    def __init__(self, accepted: int) -> None:
        self.accepted = accepted
        self.written: list[bytes] = []

    def write(self, data: bytes) -> int:
        if len(self.written) >= self.accepted:
            raise BrokenPipeError("the client hung up")
        self.written.append(bytes(data))
        return len(data)


class _Handler:
    """What `serve_endless` uses of a `BaseHTTPRequestHandler`."""

    def __init__(self, wfile: _HangsUp) -> None:
        self.wfile = wfile
        self.sent: list[Any] = []
        self.close_connection = False

    def send_response(self, code: int) -> None:
        self.sent.append(code)

    def send_header(self, name: str, value: str) -> None:
        self.sent.append((name, value))

    def end_headers(self) -> None:
        self.sent.append("end")


def test_serve_endless_sends_until_the_client_hangs_up_and_counts_it() -> None:
    upstream = EndlessUpstream(rate_bytes_s=10**12)
    handler = _Handler(_HangsUp(accepted=4))
    upstream.serve_endless(handler)
    assert handler.sent == [200, ("Content-Type", "application/json"), ("Connection", "close"), "end"]
    assert handler.wfile.written[0] == PREFIX and len(handler.wfile.written) == 4
    assert upstream.bytes_sent == sum(map(len, handler.wfile.written[1:])) > 0
    assert (upstream.requests, upstream.open, handler.close_connection) == (1, 0, True)


def test_every_request_gets_a_body_that_does_not_end() -> None:
    with EndlessUpstream() as upstream:
        with urllib.request.urlopen(upstream.base_url + "/anything", timeout=10) as response:  # noqa: S310
            body = response.read(200_000)
        assert response.status == 200 and body.startswith(PREFIX) and len(body) == 200_000
        # The server counts a chunk after its write returns, which can be after the client has read it.
        deadline = time.monotonic() + 5.0
        while upstream.bytes_sent < 200_000 - len(PREFIX) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert upstream.requests == 1 and upstream.bytes_sent >= 200_000 - len(PREFIX)
