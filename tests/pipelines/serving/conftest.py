"""One real server per test session: `research serve` on 127.0.0.1 (a free port), with a token and its own
collection, started as a process and stopped through its own handle."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.contract_servers import free_port
from tests.fixture_texts import SUPER_BOWL_TEXT

# Small, real texts; each test module finds them through the server's own endpoints.
CORPUS = [
    {
        "title": "Super Bowl 50",
        "source": "test:super-bowl-50",
        "date": "2016-02-08",
        "text": SUPER_BOWL_TEXT,
    },
    {
        "title": "HNSW indexes",
        "source": "test:hnsw",
        "date": "2023-05-10",
        "text": (
            "Hierarchical navigable small world graphs (HNSW) are an index for approximate nearest neighbour search. "
            "pgvector builds an HNSW index over embeddings; building it after bulk inserts is much faster than "
            "before. The ef_search parameter trades recall for speed at query time."
        ),
    },
    {
        "title": "Reciprocal rank fusion",
        "source": "test:rrf",
        "date": "2021-11-02",
        "text": (
            "Reciprocal rank fusion combines several ranked lists by summing one over sixty plus the rank of each "
            "item. It needs no score calibration, which is why hybrid search uses it to merge keyword (BM25) and "
            "dense vector results."
        ),
    },
]


@dataclass
class RunningServer:
    """A started server: where it listens and how to authenticate."""

    base_url: str
    token: str
    collection: str
    process: subprocess.Popen
    log_path: Path

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def client(self, timeout: float = 60.0) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, headers=self.headers, timeout=timeout)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


REPO_ROOT = Path(__file__).resolve().parents[3]


def research_command() -> list[str]:
    """The `research` command of this checkout (the console script may belong to another install)."""
    return [sys.executable, "-m", "pipelines.cli"]


def server_env(**overrides: str) -> dict[str, str]:
    """The environment of a server process: this one's, this checkout first on the path, and `overrides`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH", "")]))
    env.update(HF_HUB_OFFLINE="1", **overrides)
    return env


def launch(log_path: Path, cwd: Path, env: dict[str, str], token: str = "", collection: str = "") -> RunningServer:
    """Start `research serve` on a free port of 127.0.0.1 with `env`, its output in `log_path`."""
    port = free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [*research_command(), "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=cwd,
        )
    return RunningServer(f"http://127.0.0.1:{port}", token, collection, process, log_path)


def stop(server: RunningServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=10)


def wait_until_up(server: RunningServer, expected: set[str], timeout_s: float = 240.0) -> dict:
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            pytest.fail(f"the server exited with {server.process.returncode}:\n{server.log_tail()}")
        try:
            response = httpx.get(f"{server.base_url}/status", headers=server.headers, timeout=5)
            if response.status_code == 200 and expected <= set(response.json().get("pipelines", [])):
                return response.json()
            last = response.text[:300]
        except httpx.HTTPError as exc:
            last = str(exc)
        time.sleep(0.5)
    pytest.fail(f"the server did not deploy {sorted(expected)} within {timeout_s:.0f} s ({last}):\n{server.log_tail()}")


@pytest.fixture(scope="session")
def server(session_dir: Path, database_url: str) -> Iterator[RunningServer]:
    """`research serve` with API_TOKEN and a fresh collection, the small corpus ingested over HTTP."""
    from pipelines.serving.server import served_pipeline_names

    token = secrets.token_urlsafe(24)
    collection = f"t_serve_{uuid.uuid4().hex[:8]}"
    env = server_env(API_TOKEN=token, KB_COLLECTION=collection)
    running = launch(session_dir / f"serve-{uuid.uuid4().hex[:6]}.log", session_dir, env, token, collection)
    try:
        wait_until_up(running, set(served_pipeline_names()))
        with running.client(timeout=120) as client:
            for document in CORPUS:
                response = client.post("/ingestion/run", json=document)
                assert response.status_code == 200, response.text
                assert response.json()["result"]["outcome"] in ("added", "unchanged", "replaced")
        yield running
    finally:
        stop(running)
