"""A plain `research ask` in a fresh process prints the answer, its sources and statuses, and nothing else: no log
record, no progress bar; `-v` brings the logs back and works."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.contract_servers import free_port
from tests.fresh_process import REPO_ROOT
from tests.pipelines.knowledge import fill_collection, fresh_collection_name

pytestmark = pytest.mark.integration

LOG_RECORD = re.compile(r"^(DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ", re.MULTILINE)
PROGRESS_BAR = re.compile(r"\d+%\|")


@pytest.fixture(scope="module")
def collection(settings, database_url, embedding_model) -> str:
    name = fresh_collection_name()
    fill_collection(name, settings, embedding_model)
    return name


def research(*argv: str, collection: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "KB_COLLECTION": collection, "HAYHOOKS_PORT": str(free_port())}
    env.pop("HF_HUB_DISABLE_PROGRESS_BARS", None)
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", *argv],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=REPO_ROOT,
    )


def test_plain_ask_prints_no_log_record_and_no_progress_bar(collection) -> None:
    # arXiv is pointed at a closed port by the tests' environment: it fails, and says so in its status line only.
    done = research("ask", "Which river does Warsaw stand on?", "--sources", "kb,arxiv", collection=collection)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith(("Short answer: ", "Answer\n"))
    assert "Vistula" in done.stdout
    assert re.search(r"^  arxiv +error ", done.stdout, re.MULTILINE)
    for stream in (done.stdout, done.stderr):
        assert not LOG_RECORD.search(stream), stream[-2000:]
        assert not PROGRESS_BAR.search(stream) and "Loading weights" not in stream, stream[-2000:]


def test_verbose_ask_logs_and_answers(collection) -> None:
    # The graph branch loads spaCy and logs it at INFO: that record once crashed every -v run.
    done = research("-v", "ask", "Which river does Warsaw stand on?", "--sources", "kb,graph", collection=collection)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Vistula" in done.stdout
    assert LOG_RECORD.search(done.stderr)
    assert "Loaded spaCy pipeline" in done.stderr
    assert "KeyError" not in done.stderr
