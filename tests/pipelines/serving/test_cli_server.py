"""`research ask` against a running `research serve`: the same answer as in-process, the token from the
environment, a quiet line saying where it was answered; and `auto` as the server's default sources."""

from __future__ import annotations

import json
import subprocess
import time
from urllib.parse import urlsplit

import pytest

from tests.pipelines.serving.conftest import RunningServer, research_command, server_env

pytestmark = [pytest.mark.integration, pytest.mark.slow]

QUESTION = "Who won Super Bowl 50?"


def ask(server: RunningServer, *argv: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    address = urlsplit(server.base_url)
    env = server_env(
        KB_COLLECTION=server.collection,
        HAYHOOKS_HOST=address.hostname,
        HAYHOOKS_PORT=str(address.port),
        API_TOKEN=server.token if token is None else token,
    )
    return subprocess.run([*research_command(), "ask", *argv], capture_output=True, text=True, timeout=300, env=env)


def test_the_server_and_this_process_give_the_same_answer(server: RunningServer) -> None:
    started = time.perf_counter()
    served = ask(server, QUESTION, "--sources", "kb", "--json")
    served_s = time.perf_counter() - started
    assert served.returncode == 0, served.stderr[-2000:]
    assert f"answered by the server at {urlsplit(server.base_url).netloc}" in served.stderr
    local = ask(server, QUESTION, "--sources", "kb", "--json", "--local")
    assert local.returncode == 0, local.stderr[-2000:]
    assert "answered by the server" not in local.stderr
    remote, here = json.loads(served.stdout), json.loads(local.stdout)
    assert "Broncos" in remote["answer"]
    for key in ("answer", "short_answer", "citations", "sentences"):
        assert remote[key] == here[key], key
    assert [chunk["id"] for chunk in remote["chunks"]] == [chunk["id"] for chunk in here["chunks"]]
    # The plain text is made from the same JSON either way.
    plain = ask(server, QUESTION, "--sources", "kb")
    assert plain.returncode == 0 and plain.stdout.startswith(("Short answer: ", "Answer\n"))
    assert served_s < 30  # generous: the machine is shared; `research bench --only cli` measures it


def test_a_wrong_token_is_one_sentence(server: RunningServer) -> None:
    done = ask(server, QUESTION, "--sources", "kb", token="not-the-token")
    assert done.returncode == 1
    assert "wants a token: set API_TOKEN" in done.stderr and "Traceback" not in done.stderr
    assert "not-the-token" not in done.stderr


def test_bad_input_is_the_servers_sentence(server: RunningServer) -> None:
    done = ask(server, QUESTION, "--sources", "kb,tv")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("research: Unknown source tv")


def test_http_default_sources_are_auto(server: RunningServer) -> None:
    with server.client() as client:
        result = client.post("/research/run", json={"question": QUESTION}).json()["result"]
    assert result["source_selection"] is not None
    assert "kb" in result["source_selection"]["sources"]
