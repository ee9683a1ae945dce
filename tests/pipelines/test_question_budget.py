"""The whole-question budget: with every live source and the chat model hanging and a per-tool timeout longer
than the budget, a question still returns within QUESTION_BUDGET_S, with the extractive answer and a status per
source that says it ran out of time."""

from __future__ import annotations

import asyncio
import time

import pytest

from components.contracts import StatusKind
from components.resilience import reset_resilience_state
from components.settings import reload_settings
from pipelines.catalog import PipelineCatalog
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures
from tests.contract_servers.zep import zep_server, zep_server_session  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration

BUDGET_S = 4.0
# Embedding the question, ranking and the extractive answer, on two shared cores under load (7-9 seen). The bound
# BUDGET_S + SLACK_S = 9 s still proves the budget: without it the 60 s tool timeout would decide.
SLACK_S = 5.0
LIVE = ("web", "arxiv", "memory", "generator")


@pytest.fixture()
def everything_hangs(  # noqa: PLR0913
    monkeypatch,
    database_url,
    embedding_model,
    firecrawl_server,  # noqa: F811
    arxiv_server,  # noqa: F811
    zep_server,  # noqa: F811
    chat_server,  # noqa: F811
):
    for server in (firecrawl_server, arxiv_server, zep_server, chat_server):
        server.fail("hang")
    monkeypatch.setenv("TOOL_TIMEOUT_S", "60")
    monkeypatch.setenv("QUESTION_BUDGET_S", str(BUDGET_S))
    monkeypatch.setenv("FIRECRAWL_API_URL", firecrawl_server.url)
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    monkeypatch.setenv("ARXIV_API_URL", arxiv_server.url)
    monkeypatch.setenv("MEMORY_BACKEND", "zep")
    monkeypatch.setenv("ZEP_API_URL", zep_server.base_url)
    monkeypatch.setenv("ZEP_API_KEY", zep_server.api_key)
    monkeypatch.setenv("GENERATOR", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url_v1)
    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    reload_settings()
    reset_resilience_state()
    catalog = PipelineCatalog()
    catalog.get("research")  # warming the pipeline (models, connections) is not part of a question's budget
    yield catalog
    reset_resilience_state()
    monkeypatch.undo()
    reload_settings()


def _check(result, seconds: float) -> None:
    statuses = {status.source: status for status in result.statuses}
    print(f"\nquestion budget {BUDGET_S:g} s, tool timeout 60 s, everything hanging: answered in {seconds:.2f} s")
    assert seconds < BUDGET_S + SLACK_S, f"{seconds:.1f} s: {[(s.source, s.message) for s in result.statuses]}"
    for source in LIVE:
        assert source in statuses, sorted(statuses)
        assert statuses[source].status in (StatusKind.TIMEOUT, StatusKind.SKIPPED, StatusKind.ERROR), statuses[source]
    assert "time budget" in statuses["web"].message or "did not answer" in statuses["web"].message
    assert "extractive answer instead" in statuses["generator"].message
    assert result.answer


def test_a_question_returns_within_its_budget_when_everything_hangs(everything_hangs):
    started = time.monotonic()
    result = everything_hangs.research("Who acquired Acme Corp?", sources=["kb", "web", "arxiv", "memory"])
    _check(result, time.monotonic() - started)


def test_the_async_path_keeps_the_same_budget(everything_hangs):
    started = time.monotonic()
    result = asyncio.run(
        everything_hangs.research_async("Who acquired Acme Corp?", sources=["kb", "web", "arxiv", "memory"])
    )
    _check(result, time.monotonic() - started)
