"""Hostile requests against the real server: invalid Unicode, huge bodies, secrets echoed upstream, SIGTERM."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

import httpx
import psutil
import pytest

from pipelines.serving.server import served_pipeline_names
from tests.contract_servers.chat import ChatContractServer
from tests.contract_servers.firecrawl import FirecrawlContractServer
from tests.contract_servers.zep import ZepContractServer
from tests.pipelines.serving.conftest import RunningServer, launch, server_env, stop, wait_until_up

pytestmark = pytest.mark.integration

LONE_SURROGATE = '"abc \\ud800 def"'
CHAT = '{"model": "research", "messages": [{"role": "user", "content": SURROGATE}]}'


def _post_raw(server: RunningServer, path: str, body: str) -> httpx.Response:
    headers = {**server.headers, "Content-Type": "application/json"}
    return httpx.post(server.base_url + path, content=body.encode("ascii"), headers=headers, timeout=60)


class TestInvalidInput:
    @pytest.mark.parametrize(
        ("path", "body"),
        [
            ("/research/run", '{"question": SURROGATE}'.replace("SURROGATE", LONE_SURROGATE)),
            ("/entity_search/run", '{"query": SURROGATE}'.replace("SURROGATE", LONE_SURROGATE)),
            ("/research/run", '{"question": "fine", "sources": [SURROGATE]}'.replace("SURROGATE", LONE_SURROGATE)),
            ("/v1/chat/completions", CHAT.replace("SURROGATE", LONE_SURROGATE)),
        ],
    )
    def test_a_lone_surrogate_is_a_422_with_one_sentence(self, server: RunningServer, path: str, body: str) -> None:
        response = _post_raw(server, path, body)
        assert response.status_code == 422, response.text
        assert "lone surrogate" in response.json()["detail"]

    def test_a_10_mb_question_is_refused_and_not_written_to_the_log(self, server: RunningServer) -> None:
        before = server.log_path.stat().st_size
        response = httpx.post(
            server.base_url + "/research/run", json={"question": "x" * 10_000_000}, headers=server.headers, timeout=120
        )
        assert response.status_code == 422 and "longer than" in response.text
        time.sleep(0.5)
        assert server.log_path.stat().st_size - before < 20_000

    def test_a_body_over_the_limit_is_a_413(self, server: RunningServer) -> None:
        response = httpx.post(
            server.base_url + "/ingestion/run",
            content=b"{" + b" " * 17_000_000 + b"}",
            headers={**server.headers, "Content-Type": "application/json"},
            timeout=120,
        )
        assert response.status_code == 413


MARKERS = {
    "OPENAI_API_KEY": "sk-MARKER-openai-7c1d",
    "FIRECRAWL_API_KEY": "fc-MARKER-firecrawl-22ab",
    "ZEP_API_KEY": "MARKER-zep-93fe",
    "MILVUS_TOKEN": "MARKER-milvus-5d10",
    "QDRANT_API_KEY": "MARKER-qdrant-ee01",
    "NEO4J_PASSWORD": "MARKER-neo4j-77aa",
    "API_TOKEN": "MARKER-apitoken-c0ffee",
}
DB_PASSWORD = "MARKER-dbpass-4411"


def _absent(text: str, where: str) -> None:
    for marker in [*MARKERS.values(), DB_PASSWORD]:
        assert marker not in text, f"{marker} leaked into {where}"


@pytest.mark.slow
def test_no_secret_leaves_the_server_when_every_upstream_echoes_it(session_dir: Path, database_url: str) -> None:
    """Every secret set to a marker; the chat model, Firecrawl and Zep answer with errors quoting the key."""
    chat = ChatContractServer(api_key=MARKERS["OPENAI_API_KEY"]).start()
    firecrawl = FirecrawlContractServer(api_key=MARKERS["FIRECRAWL_API_KEY"]).start()
    zep = ZepContractServer(api_key=MARKERS["ZEP_API_KEY"]).start()
    for upstream in (chat, firecrawl, zep):
        upstream.fail("echo_key")
    # The embedded server trusts local connections, so a password in the URL is accepted and ignored.
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(database_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    url = urlunsplit(
        (parts.scheme, f"{parts.username or 'postgres'}:{DB_PASSWORD}@{host}", parts.path, parts.query, parts.fragment)
    )
    env = server_env(
        **MARKERS,
        DATABASE_URL=url,
        KB_COLLECTION=f"t_secrets_{uuid.uuid4().hex[:6]}",
        GENERATOR="openai",
        OPENAI_BASE_URL=chat.base_url_v1,
        FIRECRAWL_API_URL=firecrawl.url,
        MEMORY_BACKEND="zep",
        ZEP_API_URL=zep.base_url,
        QDRANT_URL=f"http://admin:{DB_PASSWORD}@127.0.0.1:9",
        TOOL_RETRIES="0",
    )
    running = launch(session_dir / f"secrets-{uuid.uuid4().hex[:6]}.log", session_dir, env, MARKERS["API_TOKEN"])
    try:
        wait_until_up(running, set(served_pipeline_names()))
        with running.client(timeout=120) as client:
            research = client.post(
                "/research/run",
                json={
                    "question": f"Why does my key {MARKERS['OPENAI_API_KEY']} fail?",
                    "sources": ["kb", "web", "memory"],
                },
            )
            assert research.status_code == 200, research.text
            statuses = {s["source"]: s for s in research.json()["result"]["statuses"]}
            assert statuses["generator"]["status"] == "error" and "[redacted]" in statuses["generator"]["message"]
            assert statuses["web"]["status"] == "error" and statuses["memory"]["status"] == "error", statuses
            _absent(research.text, "/research/run")
            chat_reply = client.post(
                "/v1/chat/completions",
                json={"model": "research", "messages": [{"role": "user", "content": "What failed?"}]},
            )
            _absent(chat_reply.text, "the chat endpoint")
            streamed = client.post(
                "/v1/chat/completions",
                json={"model": "research", "stream": True, "messages": [{"role": "user", "content": "And now?"}]},
            )
            _absent(streamed.text, "the streaming chat endpoint")
        # The CLI in the same environment: ask --json, status --json, settings.
        import subprocess

        from tests.pipelines.serving.conftest import research_command

        for command in (
            ["ask", "What failed?", "--sources", "kb,web,memory", "--json"],
            ["status", "--json"],
            ["settings"],
            ["settings", "--json"],
        ):
            result = subprocess.run(
                [*research_command(), *command], env=env, cwd=session_dir, capture_output=True, text=True, timeout=300
            )
            _absent(result.stdout + result.stderr, f"research {' '.join(command)}")
            assert "Traceback" not in result.stderr, result.stderr[-2000:]
    finally:
        stop(running)
        for upstream in (chat, firecrawl, zep):
            upstream.stop()
    log = running.log_path.read_text(errors="replace")
    assert "echo" in log.lower() or "Invalid credentials" in log or "failed" in log  # the upstream errors were logged
    _absent(log, "the server log")


@pytest.mark.slow
def test_sigterm_stops_the_embedded_postgresql(session_dir: Path) -> None:
    data_dir = session_dir / f"sigterm-{uuid.uuid4().hex[:6]}"
    env = server_env(RESEARCH_DATA_DIR=str(data_dir), KB_COLLECTION="t_sigterm")
    env.pop("DATABASE_URL", None)
    running = launch(session_dir / "sigterm.log", session_dir, env)
    try:
        wait_until_up(running, set(served_pipeline_names()))
        postgres = [
            p
            for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "postgres" and str(data_dir) in " ".join(p.info["cmdline"] or [])
        ]
        assert postgres, "the server did not start its embedded PostgreSQL"
        running.process.send_signal(signal.SIGTERM)
        running.process.wait(timeout=60)
        gone, alive = psutil.wait_procs(postgres, timeout=30)
        assert not alive, f"PostgreSQL still runs after SIGTERM: {[p.pid for p in alive]}\n{running.log_tail()}"
    finally:
        if running.process.poll() is None:
            stop(running)
