"""Memory under endless upstream bodies: a real `research serve` whose every upstream never stops sending.

One local server on 127.0.0.1 answers every request (Firecrawl search and scrape, the arXiv API, Zep, the chat
model) with a 200 whose body never ends. `research serve` is started as a process pointed at it (web, arXiv, Zep
memory and the OpenAI-compatible generator all configured), warmed with one question, and its resident memory taken
as idle; then questions using every source are sent for `duration_s`, one after another, while the server's RSS is
sampled: for the first half the bodies come fast (every read stops at its byte limit), for the second half they
trickle (every read is abandoned at the question's budget and must stop there). Target: peak under 1.5x idle (every
upstream answer is read through the capped transport and abandoned at the budget,
`components.resilience.transport`). Traffic goes to 127.0.0.1 only.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pipelines.bench_cli import stop_server

TARGET_RATIO = 1.5
SLOW_BYTES_S = 1_000_000  # slower than the byte limit within the budget: the deadline stops these reads
_CHUNK = b"<p>" + b"endless upstream answer " * 2600 + b"</p>\n"  # about 62 KB


class EndlessUpstream:
    """A threaded HTTP server on 127.0.0.1 answering every GET and POST with a 200 whose body never ends (sent at
    most `rate_bytes_s` per connection until the client hangs up or the server stops); `bytes_sent` counts it."""

    def __init__(self, rate_bytes_s: int = 32_000_000) -> None:
        self.rate_bytes_s = rate_bytes_s
        self.bytes_sent = 0
        self.requests = 0
        self.open = 0  # bodies still being sent (a reader that stopped has hung up)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:  # noqa: N802
                upstream.serve_endless(self)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                upstream.serve_endless(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> EndlessUpstream:
        threading.Thread(target=self._httpd.serve_forever, name="endless-upstream", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def serve_endless(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer `handler`'s request with a 200 whose JSON body never ends, at most `rate_bytes_s`, until the client
        hangs up or the server stops (counted in `requests`, `open` and `bytes_sent`); then close the connection.
        The answer its request handler gives every GET and POST."""
        with self._lock:
            self.requests += 1
            self.open += 1
        started = time.monotonic()
        sent = 0
        try:
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.wfile.write(b'{"success": true, "data": "')
            while not self._stop.is_set():
                handler.wfile.write(_CHUNK)
                sent += len(_CHUNK)
                with self._lock:
                    self.bytes_sent += len(_CHUNK)
                ahead = sent / self.rate_bytes_s - (time.monotonic() - started)
                if ahead > 0:
                    self._stop.wait(ahead)
        except OSError:
            pass
        with self._lock:
            self.open -= 1
        handler.close_connection = True


def _rss_mb(pid: int) -> float:
    import psutil

    return psutil.Process(pid).memory_info().rss / 1e6


def bench_hostile(out: Callable[[str], None], duration_s: float = 90.0, budget_s: float = 5.0) -> dict[str, Any]:
    """Run the memory benchmark; the results (idle and peak RSS in MB, their ratio, questions answered, what the
    upstreams sent, the status messages seen) with `pass` when the peak stays under `TARGET_RATIO` times idle."""
    import httpx

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with EndlessUpstream() as upstream, tempfile.TemporaryDirectory(prefix="bench-hostile-") as folder:
        env = dict(os.environ)
        env.update(
            FIRECRAWL_API_URL=upstream.base_url,
            FIRECRAWL_API_KEY="fc-bench-key",
            ARXIV_API_URL=f"{upstream.base_url}/api/query",
            ARXIV_MIN_INTERVAL_S="0",
            MEMORY_BACKEND="zep",
            ZEP_API_URL=upstream.base_url,
            ZEP_API_KEY="zep-bench-key",
            GENERATOR="openai",
            OPENAI_BASE_URL=f"{upstream.base_url}/v1",
            OPENAI_API_KEY="sk-bench-key",
            QUESTION_BUDGET_S=f"{budget_s:g}",
            KB_COLLECTION=f"bench_hostile_{uuid.uuid4().hex[:6]}",
            HAYHOOKS_STARTUP_DEPLOY_STRATEGY="sequential",
            HF_HUB_OFFLINE="1",
            # Every question must reach the upstreams: no breaker pauses a failing source during the run.
            BREAKER_FAILURES="100",
            BREAKER_COOLDOWN_S="0",
        )
        env.pop("API_TOKEN", None)
        log_path = Path(folder) / "serve.log"
        with log_path.open("wb") as log:
            server = subprocess.Popen(
                [sys.executable, "-m", "pipelines.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_until_up(server, base, log_path)
            with httpx.Client(base_url=base, timeout=budget_s * 4 + 30) as client:
                question = {
                    "question": "What did the survey find about retrieval?",
                    "sources": ["all"],
                    "session_id": "bench-hostile",
                }
                warm = client.post("/research/run", json=question)  # loads the models; upstreams already endless
                out(f"warm-up question: HTTP {warm.status_code}")
                time.sleep(2.0)
                idle = _rss_mb(server.pid)
                out(f"idle RSS: {idle:.0f} MB; endless upstreams for {duration_s:g} s")
                peak = [idle]
                stop = threading.Event()

                def sample() -> None:
                    while not stop.wait(0.25):
                        peak[0] = max(peak[0], _rss_mb(server.pid))

                sampler = threading.Thread(target=sample, name="rss-sampler", daemon=True)
                sampler.start()
                answered, codes, messages, seconds = 0, {}, set(), []
                until = time.monotonic() + duration_s
                fast = upstream.rate_bytes_s
                while time.monotonic() < until:
                    # First half: bodies fast enough to reach the byte limit. Second half: a trickle that reaches
                    # the question's budget first, so every call is abandoned mid-body.
                    upstream.rate_bytes_s = fast if until - time.monotonic() > duration_s / 2 else SLOW_BYTES_S
                    started = time.monotonic()
                    response = client.post("/research/run", json=question)
                    seconds.append(time.monotonic() - started)
                    codes[response.status_code] = codes.get(response.status_code, 0) + 1
                    if response.status_code == 200:
                        answered += 1
                        body = response.json()
                        for status in body.get("result", body).get("statuses", []):
                            if status.get("message") and status.get("status") != "success":
                                text = re.sub(r"\d+(\.\d+)? s\b", "N s", status["message"][:160])
                                messages.add(f"{status['source']}: {text}")
                time.sleep(2.0)  # abandoned reads end at their next piece: give them the time to
                still_open = upstream.open
                stop.set()
                sampler.join()
                after = _rss_mb(server.pid)
        finally:
            stop_server(server)
        sent_mb = upstream.bytes_sent / 1e6
        requests = upstream.requests
    ratio = peak[0] / idle
    seconds.sort()
    results = {
        "duration_s": duration_s,
        "question_budget_s": budget_s,
        "questions": len(seconds),
        "answered": answered,
        "http_codes": codes,
        "p50_s": seconds[len(seconds) // 2] if seconds else None,
        "max_s": seconds[-1] if seconds else None,
        "upstream_requests": requests,
        "upstream_sent_mb": sent_mb,
        "upstream_bodies_open_after": still_open,
        "idle_rss_mb": idle,
        "peak_rss_mb": peak[0],
        "end_rss_mb": after,
        "peak_to_idle": ratio,
        "target": f"< {TARGET_RATIO}x",
        "statuses_seen": sorted(messages),
        "pass": ratio < TARGET_RATIO and still_open == 0,
    }
    out(f"questions {len(seconds)} (HTTP {codes}), answer p50 {results['p50_s']:.2f} s, max {results['max_s']:.2f} s")
    out(
        f"upstreams: {requests} requests, {sent_mb:,.0f} MB sent; {still_open} bodies still being read 2 s after the "
        "last answer"
    )
    for message in sorted(messages):
        out(f"  {message}")
    out(
        f"RSS: idle {idle:.0f} MB, peak {peak[0]:.0f} MB ({ratio:.2f}x, target < {TARGET_RATIO}x), "
        f"at the end {after:.0f} MB -> {'PASS' if results['pass'] else 'FAIL'}"
    )
    return results


def _wait_until_up(server: subprocess.Popen, base: str, log_path: Path, timeout_s: float = 300.0) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"research serve exited with {server.returncode}: {tail}")
        try:
            response = httpx.get(f"{base}/status", timeout=5)
            if response.status_code == 200 and "research" in response.json().get("pipelines", []):
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"research serve did not start within {timeout_s:.0f} s")


def _free_port() -> int:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
