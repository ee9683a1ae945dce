"""`CappedTransport` honours the environment's proxies (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY) as httpx's own
default transport does (httpx drops them as soon as a client is given a transport), and keeps its byte cap there.

A tiny forward proxy on 127.0.0.1 answers every request itself and records what it was asked for."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from components.resilience.transport import BodyTooLarge, CappedTransport
from tests.contract_servers import free_port
from tests.contract_servers.pages import PageServer, html_page

pytestmark = pytest.mark.integration


class TinyProxy:
    """A forward proxy that answers `body` to every request and records the request lines it received."""

    def __init__(self, body: bytes = b"via the proxy") -> None:
        self.body = body
        self.asked: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                proxy.asked.append(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(proxy.body)))
                self.end_headers()
                self.wfile.write(proxy.body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> TinyProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def proxy() -> Iterator[TinyProxy]:
    with TinyProxy() as running:
        yield running


@pytest.fixture(autouse=True)
def no_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)


def test_a_request_goes_through_http_proxy(proxy: TinyProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    # Nothing listens at the target: only the proxy can answer.
    target = f"http://127.0.0.1:{free_port()}/papers/quorvane.pdf"
    with httpx.Client(transport=CappedTransport(10_000, "the PDF server")) as client:
        response = client.get(target)
    assert response.text == "via the proxy"
    assert proxy.asked == [target]  # a forward proxy is asked for the whole URL


def test_no_proxy_sends_directly(proxy: TinyProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with PageServer({"/page": html_page("<p>direct</p>")}) as server, httpx.Client(
        transport=CappedTransport(10_000, "Zep")
    ) as client:
        assert "direct" in client.get(f"{server.base_url}/page").text
    assert proxy.asked == []


@pytest.mark.parametrize(
    ("environment", "url", "expected"),
    [
        ({"HTTP_PROXY": "http://127.0.0.1:3128"}, "http://quorvane.test/a", "http://127.0.0.1:3128"),
        ({"HTTP_PROXY": "http://127.0.0.1:3128"}, "https://quorvane.test/a", None),
        ({"HTTPS_PROXY": "127.0.0.1:3129"}, "https://quorvane.test/a", "http://127.0.0.1:3129"),
        ({"ALL_PROXY": "http://127.0.0.1:3130"}, "https://quorvane.test/a", "http://127.0.0.1:3130"),
        ({"HTTPS_PROXY": "http://127.0.0.1:3129", "NO_PROXY": "quorvane.test"}, "https://api.quorvane.test/", None),
        ({"HTTPS_PROXY": "http://127.0.0.1:3129", "NO_PROXY": ".quorvane.test"}, "https://quorvane.test/",
         "http://127.0.0.1:3129"),
        ({"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "*"}, "http://quorvane.test/a", None),
        ({}, "http://quorvane.test/a", None),
    ],
)
def test_the_proxy_is_chosen_as_httpx_chooses_it(monkeypatch: pytest.MonkeyPatch, environment: dict[str, str],
                                                  url: str, expected: str | None) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    transport = CappedTransport(10_000, "the chat model")
    assert transport.proxy_for(httpx.URL(url)) == expected
    # httpx's own default client, given no transport, mounts the same proxy for the URL.
    with httpx.Client() as client:
        mounted = client._transport_for_url(httpx.URL(url))  # noqa: SLF001 - httpx's choice, to compare with
        pool = mounted._pool  # noqa: SLF001
        proxy_url = getattr(pool, "_proxy_url", None)
        chosen = None if proxy_url is None else f"{proxy_url.scheme.decode()}://{proxy_url.host.decode()}:" \
            f"{proxy_url.port}"
    assert chosen == expected
    assert CappedTransport(10_000, "the chat model", trust_env=False).proxy_for(httpx.URL(url)) is None


def test_the_cap_holds_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with TinyProxy(b"x" * 50_000) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with httpx.Client(transport=CappedTransport(10_000, "the PDF server")) as client, pytest.raises(
            BodyTooLarge, match="The PDF server sent more than its 10,000-byte limit"
        ):
            client.get(f"http://127.0.0.1:{free_port()}/large.pdf")
        assert len(proxy.asked) == 1


def test_an_async_client_goes_through_the_proxy(proxy: TinyProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    target = f"http://127.0.0.1:{free_port()}/v1/chat/completions"

    async def ask() -> str:
        async with httpx.AsyncClient(transport=CappedTransport(10_000, "the chat model")) as client:
            return (await client.get(target)).text

    assert asyncio.run(ask()) == "via the proxy"
    assert proxy.asked == [target]
