"""Every upstream answer is read through the capped transport: an endless body stops at the byte limit or at the
call's deadline, the connection closes, and the source answers with a status naming the service and the limit.

The web (firecrawl-py), arXiv (arxiv), Zep (zep-python) and the chat model (openai via Haystack) are driven through
their real client libraries against the contract servers on 127.0.0.1, each sending an endless body.
"""

from __future__ import annotations

import time

import httpx
import pytest
from haystack import Document
from haystack.dataclasses import ChatMessage

from components.contracts import StatusKind
from components.resilience import reset_resilience_state
from components.resilience.budget import deadline_scope, question_budget
from components.resilience.transport import BodyTooLarge, BodyTooSlow, CappedBody, CappedTransport, capped_session
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.chat import chat_server, chat_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures
from tests.contract_servers.pages import PageServer
from tests.contract_servers.zep import zep_server, zep_server_session  # noqa: F401 - fixtures

pytestmark = pytest.mark.integration

LIMIT = 300_000
# What a closed connection may still have let out: the loopback socket buffers of both ends (a few MB at most).
IN_FLIGHT = 8_000_000


@pytest.fixture(autouse=True)
def fresh_breakers():
    reset_resilience_state()
    yield
    reset_resilience_state()


def settled_bytes(server) -> int:  # noqa: ANN001
    """The bytes the endless body sent, once it stopped growing (the client hung up), or fail after 5 s."""
    last = -1
    for _ in range(50):
        time.sleep(0.2)
        with server._lock:  # noqa: SLF001 - the contract server's counter
            sent = server.bytes_sent
        if sent == last:
            return sent
        last = sent
    pytest.fail(f"the endless body was still being read 10 s later ({last:,} bytes)")


class TestCappedBody:
    def test_stops_at_the_limit_with_the_last_piece_trimmed(self) -> None:
        body = CappedBody(iter([b"a" * 6, b"b" * 6, b"c" * 6]), limit=10)
        assert b"".join(body) == b"a" * 6 + b"b" * 4
        assert body.cut == "size"
        assert isinstance(body.refusal("Zep"), BodyTooLarge)
        assert "Zep sent more than its 10-byte limit" in str(body.refusal("Zep"))

    def test_stops_at_the_deadline(self) -> None:
        def slow():  # noqa: ANN202
            while True:
                time.sleep(0.05)
                yield b"x"

        body = CappedBody(slow(), limit=10**9, deadline=time.monotonic() + 0.3)
        started = time.monotonic()
        data = b"".join(body)
        assert time.monotonic() - started < 1.0 and 0 < len(data) < 20
        assert body.cut == "time" and isinstance(body.refusal("arXiv"), BodyTooSlow)

    def test_a_whole_body_is_not_cut(self) -> None:
        body = CappedBody(iter([b"abc", b"def"]), limit=6)
        assert b"".join(body) == b"abcdef" and body.cut is None and body.refusal("x") is None


class TestTransports:
    def test_httpx_transport_refuses_an_endless_body_and_hangs_up(self) -> None:
        with PageServer() as server:
            server.fail("endless")
            with httpx.Client(transport=CappedTransport(LIMIT, "The test service")) as client:
                with pytest.raises(BodyTooLarge, match="The test service sent more than its 300,000-byte limit"):
                    client.get(f"{server.base_url}/feed", timeout=5)
            assert settled_bytes(server) < LIMIT + IN_FLIGHT

    def test_an_async_httpx_client_is_capped_by_the_same_transport(self) -> None:
        import asyncio

        async def fetch(url: str) -> None:
            async with httpx.AsyncClient(transport=CappedTransport(LIMIT, "the test service")) as client:
                await client.get(url, timeout=5)

        with PageServer() as server:
            server.fail("endless")
            with pytest.raises(BodyTooLarge, match="The test service sent more than its 300,000-byte limit"):
                asyncio.run(fetch(f"{server.base_url}/feed"))
            assert settled_bytes(server) < LIMIT + IN_FLIGHT

    def test_requests_adapter_refuses_an_endless_body_and_hangs_up(self) -> None:
        with PageServer() as server:
            server.fail("endless")
            with pytest.raises(BodyTooLarge, match="more than its 300,000-byte limit"):
                capped_session(LIMIT, "The test service").get(f"{server.base_url}/feed", timeout=5)
            assert settled_bytes(server) < LIMIT + IN_FLIGHT

    def test_requests_adapter_hands_back_a_whole_body_as_requests_does(self) -> None:
        import gzip

        from tests.contract_servers import Reply

        page = b"quorvane " * 2_000
        with PageServer(
            {
                "/plain": Reply(200, page, "text/plain", headers={"Set-Cookie": "visit=brelloway; Path=/"}),
                "/packed": Reply(200, gzip.compress(page), "text/plain", headers={"Content-Encoding": "gzip"}),
            }
        ) as server:
            session = capped_session(LIMIT, "The test service")
            response = session.get(f"{server.base_url}/plain", timeout=5)
            assert response.content == page and response.text == page.decode()
            assert session.cookies.get("visit") == "brelloway"  # requests still reads the answer's cookies
            streamed = session.get(f"{server.base_url}/packed", timeout=5, stream=True)
            assert b"".join(streamed.iter_content(1_000)) == page  # decoded once, in the capped reading
            with pytest.raises(BodyTooLarge):  # the decoded bytes count
                capped_session(len(page) - 1, "The test service").get(f"{server.base_url}/packed", timeout=5)

    def test_an_abandoned_call_stops_reading_at_the_question_deadline(self) -> None:
        # A limit far above what arrives in a second: only the deadline can stop the reading.
        with PageServer() as server:
            server.fail("endless")
            started = time.monotonic()
            with deadline_scope(time.monotonic() + 1.0), pytest.raises(BodyTooSlow, match="at the deadline"):
                capped_session(10**10, "The test service").get(f"{server.base_url}/feed", timeout=30)
            assert time.monotonic() - started < 3.0
            sent = settled_bytes(server)
            assert sent < 3 * 16_000_000 + IN_FLIGHT  # about one second's worth at the body's rate


def assert_stops_an_endless_body(source, server, service: str) -> None:
    """`source`'s search ends in an error naming `service`'s byte limit when `server` sends a body without end, and
    the server could send little more than the limit."""
    source.warm_up()
    server.fail("endless")
    with question_budget(10):
        status = source.run(query="retrieval augmented generation")["status"]
    assert status.status is StatusKind.ERROR
    assert f"{service} sent more than its 300,000-byte limit" in status.message
    assert settled_bytes(server) < LIMIT + IN_FLIGHT


def test_web_search_stops_an_endless_body(firecrawl_server, monkeypatch, tmp_path):  # noqa: F811
    from components.web import WebSearch

    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    web = WebSearch(
        api_url=firecrawl_server.url, snapshot_dir=str(tmp_path), timeout_s=5.0, retries=0, max_response_bytes=LIMIT
    )
    assert_stops_an_endless_body(web, firecrawl_server, "Firecrawl")


def test_arxiv_search_stops_an_endless_body(arxiv_server):  # noqa: F811
    from components.arxiv import ArxivSearch

    arxiv = ArxivSearch(
        api_url=arxiv_server.url, timeout_s=5.0, retries=0, min_interval_s=0.0, max_response_bytes=LIMIT
    )
    assert_stops_an_endless_body(arxiv, arxiv_server, "The arXiv API")


def test_zep_memory_stops_an_endless_body(zep_server, monkeypatch):  # noqa: F811
    from components.memory.store import RecallQuery
    from components.memory.zep import ZepMemoryStore

    store = ZepMemoryStore(zep_server.base_url, zep_server.api_key, timeout_s=5.0, max_bytes=LIMIT)
    zep_server.fail("endless")
    with pytest.raises(BodyTooLarge, match="Zep sent more than its 300,000-byte limit"):
        store.search(RecallQuery(text="Who acquired Acme?", user_id="ana", session_id="z1", limit=3))
    assert settled_bytes(zep_server) < LIMIT + IN_FLIGHT


def test_chat_generator_stops_an_endless_body_and_falls_back(chat_server, monkeypatch):  # noqa: F811
    from components.generation.research_generator import ResearchGenerator

    monkeypatch.setenv("OPENAI_API_KEY", chat_server.api_key)
    generator = ResearchGenerator(
        generator="openai",
        model="contract",
        api_base_url=chat_server.base_url_v1,
        timeout_s=30.0,
        retries=0,
        max_response_bytes=LIMIT,
    )
    generator.warm_up()
    chat_server.fail("endless")
    documents = [Document(id="d1", content="Globex acquired Acme Corp in 2021.", meta={"source_type": "kb"})]
    with question_budget(10):
        outputs = generator.run(
            messages=[ChatMessage.from_user("Who acquired Acme?")], documents=documents, query="Who acquired Acme?"
        )
    assert outputs["status"].status is StatusKind.ERROR
    assert "The chat model sent more than its 300,000-byte limit" in outputs["status"].message
    assert outputs["replies"] and "Globex" in outputs["replies"][0]  # the extractive fallback answered
    assert settled_bytes(chat_server) < LIMIT + IN_FLIGHT


@pytest.mark.parametrize("retries", [2])
def test_a_refused_zep_connection_names_zep_and_is_not_retried(retries, monkeypatch, embedding_model):
    from components.memory.recall import MemoryRecall
    from tests.contract_servers import free_port

    monkeypatch.setenv("ZEP_API_KEY", "z-test-key")
    recall = MemoryRecall(backend="zep", zep_api_url=f"http://127.0.0.1:{free_port()}", timeout_s=3.0, retries=retries)
    recall.warm_up()
    status = recall.run(query="Who acquired Acme?", user_id="ana", session_id="z1")["status"]
    assert status.status is StatusKind.ERROR
    assert "cannot reach Zep: nothing answers there" in status.message, status.message
    assert status.attempts == 1


@pytest.fixture()
def cut_short_url():
    """An HTTP server on 127.0.0.1 that announces a 5,000-byte body, sends a few bytes of it and hangs up."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n"
                    b"<feed xmlns='http://www.w3.org/2005/Atom'>"
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join(5)
    listener.close()


def test_a_connection_dropped_mid_answer_is_a_dropped_connection(cut_short_url) -> None:
    """A body cut short by the server is the contract's retryable dropped connection, for arXiv and Firecrawl alike,
    not the HTTP library's own error."""
    import requests

    from components.arxiv.access import ArxivAccess
    from components.resilience import RetryableError
    from components.web.firecrawl_access import FirecrawlAccess

    with pytest.raises(requests.exceptions.ConnectionError):
        capped_session(LIMIT, "The test service").get(cut_short_url, timeout=5)
    with pytest.raises(RetryableError, match="the connection dropped"):
        ArxivAccess(f"{cut_short_url}/api/query", request_timeout_s=5, page_interval_s=0).search("all:x", 3)
    with pytest.raises(RetryableError, match="the connection dropped"):
        FirecrawlAccess("fc-test", cut_short_url, request_timeout_s=5, max_bytes=LIMIT).search("quorvane", 2)
