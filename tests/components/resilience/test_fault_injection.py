"""Fault injection: every live source and the chat generator against its contract server misbehaving.

Each fault (hang, 429 with Retry-After, 500, malformed body, connection refused, endless body) must end within the
tool timeout and the question's budget, with a status that names the source and says what went wrong, never an
exception. The contract servers run on 127.0.0.1; nothing leaves the machine.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from haystack.dataclasses import ChatMessage

from components.contracts import StatusKind
from components.resilience import reset_resilience_state
from components.resilience.budget import question_budget
from components.settings import reload_settings
from tests.contract_servers import free_port
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures
from tests.contract_servers.zep import zep_server, zep_server_session  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration

TOOL_TIMEOUT_S = 2.0
BUDGET_S = 3.0
# Scheduling slack on two shared cores (load 7-9 seen). The bounds still prove the promise: a hung tool retried
# without a timeout would take 3 x 2 s = 6 s or more (the contract servers hang for 120 s), and the generator's own
# timeout is 60 s; every bound below stays under those.
SLACK_S = 3.0
# Lower bound for a hang: the call really waited for its timeout (a little early is the clock's grain).
GRAIN_S = 0.1

# What each fault's status message must say (besides naming the source in `status.source`).
FAULT_WORDS = {
    "hang": r"did not answer|timed out|time budget",
    "429": r"429|rate limit",
    "500": r"500|server error|unavailable",
    "malformed": r"malformed|invalid|unexpected|could not|not valid|JSON|parse|decode|answer",
    "refused": r"cannot reach|connect|refused",
    "endless": r"did not answer|timed out|time budget|too large|limit",
}
MODES = list(FAULT_WORDS)


@pytest.fixture(autouse=True)
def fresh_breakers():
    reset_resilience_state()
    yield
    reset_resilience_state()


def inject(server, mode: str) -> None:
    if mode == "429":
        server.fail("429", retry_after=1)
    elif mode in ("hang", "500", "malformed", "endless"):
        server.fail(mode)


def run_timed(work: Callable[[], dict]) -> tuple[dict, float]:
    started = time.monotonic()
    with question_budget(BUDGET_S):
        outputs = work()
    return outputs, time.monotonic() - started


def check(outputs: dict, seconds: float, source: str, mode: str) -> None:
    status = outputs["status"]
    assert seconds < min(TOOL_TIMEOUT_S, BUDGET_S) + SLACK_S, f"{source}/{mode} took {seconds:.1f} s: {status.message}"
    if mode == "hang":
        assert seconds >= min(TOOL_TIMEOUT_S, BUDGET_S) - GRAIN_S, f"{source}/{mode} gave up after {seconds:.2f} s"
    assert status.source.startswith(source)
    assert status.status in (StatusKind.ERROR, StatusKind.TIMEOUT), status
    assert re.search(FAULT_WORDS[mode], status.message, re.IGNORECASE), f"{source}/{mode}: {status.message!r}"


@pytest.mark.parametrize("mode", MODES)
def test_web_faults(mode, firecrawl_server, monkeypatch, tmp_path):  # noqa: F811
    from components.web import WebSearch

    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    url = f"http://127.0.0.1:{free_port()}" if mode == "refused" else firecrawl_server.url
    web = WebSearch(api_url=url, snapshot_dir=str(tmp_path), timeout_s=TOOL_TIMEOUT_S, retries=2)
    web.warm_up()
    inject(firecrawl_server, mode)
    outputs, seconds = run_timed(lambda: web.run(query="retrieval augmented generation"))
    check(outputs, seconds, "web", mode)


@pytest.mark.parametrize("mode", MODES)
def test_arxiv_faults(mode, arxiv_server):  # noqa: F811
    from components.arxiv import ArxivSearch

    url = f"http://127.0.0.1:{free_port()}/api/query" if mode == "refused" else arxiv_server.url
    arxiv = ArxivSearch(api_url=url, timeout_s=TOOL_TIMEOUT_S, retries=2, min_interval_s=0.0)
    arxiv.warm_up()
    inject(arxiv_server, mode)
    outputs, seconds = run_timed(lambda: arxiv.run(query="retrieval augmented generation"))
    check(outputs, seconds, "arxiv", mode)


@pytest.mark.parametrize("mode", MODES)
def test_memory_faults(mode, zep_server, monkeypatch, embedding_model):  # noqa: F811
    from components.memory.recall import MemoryRecall

    monkeypatch.delenv("ZEP_API_URL", raising=False)
    monkeypatch.setenv("ZEP_API_KEY", zep_server.api_key)
    url = f"http://127.0.0.1:{free_port()}" if mode == "refused" else zep_server.base_url
    recall = MemoryRecall(backend="zep", zep_api_url=url, timeout_s=TOOL_TIMEOUT_S)
    recall.warm_up()
    inject(zep_server, mode)
    outputs, seconds = run_timed(lambda: recall.run(query="Who acquired Acme?", user_id="ana", session_id="z1"))
    check(outputs, seconds, "memory", mode)


@pytest.mark.parametrize("mode", MODES)
def test_chat_generator_faults_fall_back_to_the_extractive_answer(mode, chat_server, monkeypatch):  # noqa: F811
    from haystack import Document

    from components.generation.research_generator import FALLBACK_RESERVE_S, ResearchGenerator

    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    url = f"http://127.0.0.1:{free_port()}/v1" if mode == "refused" else chat_server.base_url_v1
    # The generator's own timeout is long, as in pipelines.yaml: the question's budget must cut it short.
    generator = ResearchGenerator(generator="openai", model="contract", api_base_url=url, timeout_s=60.0, retries=2)
    generator.warm_up()
    inject(chat_server, mode)
    documents = [Document(id="d1", content="Globex acquired Acme Corp in 2021.", meta={"source_type": "kb"})]
    prompt = [ChatMessage.from_user("Who acquired Acme? [1] Globex acquired Acme Corp in 2021.")]
    outputs, seconds = run_timed(
        lambda: generator.run(messages=prompt, documents=documents, query="Who acquired Acme?")
    )
    status = outputs["status"]
    assert seconds < BUDGET_S + SLACK_S, f"generator/{mode} took {seconds:.1f} s: {status.message}"
    if mode == "hang":  # it waited until the budget less the second kept for the fallback
        assert seconds >= BUDGET_S - FALLBACK_RESERVE_S - GRAIN_S, f"generator/{mode} gave up after {seconds:.2f} s"
    assert status.source == "generator" and status.status in (StatusKind.ERROR, StatusKind.TIMEOUT)
    assert "extractive answer instead" in status.message
    assert re.search(FAULT_WORDS[mode], status.message, re.IGNORECASE), f"generator/{mode}: {status.message!r}"
    assert outputs["replies"] and outputs["replies"][0]


def test_a_hung_source_does_not_pile_up_threads(firecrawl_server, monkeypatch, tmp_path):  # noqa: F811
    import threading

    from components.web import WebSearch

    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    web = WebSearch(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path), timeout_s=0.5, retries=3)
    web.warm_up()
    firecrawl_server.fail("hang")

    def workers() -> int:
        return sum(thread.name == "source-call" and thread.is_alive() for thread in threading.enumerate())

    before = workers()
    statuses = []
    most = 0
    for i in range(6):
        statuses.append(web.run(query=f"question {i}")["status"])
        most = max(most, workers() - before)
    assert all(not status.ok for status in statuses), statuses
    assert any("still hung" in status.message for status in statuses)
    # Six questions with three retries each could leave up to 24 threads; here at most one hung call holds one.
    assert most <= 1


def test_the_breaker_follows_the_components_yaml_not_the_machines_settings(arxiv_server, monkeypatch):  # noqa: F811
    """A component rebuilt from its YAML (its breaker opens after one failure) behaves so on a machine whose
    BREAKER_FAILURES says otherwise."""
    from components.arxiv import ArxivSearch

    written = ArxivSearch(
        api_url=arxiv_server.url,
        timeout_s=TOOL_TIMEOUT_S,
        retries=0,
        min_interval_s=0.0,
        breaker={"failures": 1, "cooldown_s": 60.0},
    ).to_dict()
    monkeypatch.setenv("BREAKER_FAILURES", "50")
    reload_settings()
    arxiv = ArxivSearch.from_dict(written)
    monkeypatch.undo()
    reload_settings()
    arxiv.warm_up()
    arxiv_server.fail("500")
    assert arxiv.run(query="dense passage retrieval")["status"].status == StatusKind.ERROR
    asked = len(arxiv_server.query_requests())
    paused = arxiv.run(query="sparse retrieval")["status"]  # one failure opened the breaker (the YAML's 1, not 50)
    assert paused.status == StatusKind.SKIPPED and "paused after repeated failures" in paused.message
    assert len(arxiv_server.query_requests()) == asked
