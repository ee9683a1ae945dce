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
from tests.components.resilience.proxy_environment import PROXY_VARIABLES
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
    for name in PROXY_VARIABLES:
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
    with (
        PageServer({"/page": html_page("<p>direct</p>")}) as server,
        httpx.Client(transport=CappedTransport(10_000, "Zep")) as client,
    ):
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
        (
            {"HTTPS_PROXY": "http://127.0.0.1:3129", "NO_PROXY": ".quorvane.test"},
            "https://quorvane.test/",
            "http://127.0.0.1:3129",
        ),
        ({"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "*"}, "http://quorvane.test/a", None),
        ({}, "http://quorvane.test/a", None),
        (
            {"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "quorvane.test"},
            "http://notquorvane.test/",
            "http://127.0.0.1:3128",
        ),
        ({"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "Quorvane.TEST"}, "http://API.quorvane.test/", None),
        ({"ALL_PROXY": "http://127.0.0.1:3130", "NO_PROXY": "quorvane.test:8443"}, "https://quorvane.test:8443/", None),
        (
            {"ALL_PROXY": "http://127.0.0.1:3130", "NO_PROXY": "quorvane.test:8443"},
            "https://quorvane.test:9443/",
            "http://127.0.0.1:3130",
        ),
        ({"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "10.20.30.40"}, "http://10.20.30.40/", None),
        (
            {"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "10.20.30.40"},
            "http://10.20.30.41/",
            "http://127.0.0.1:3128",
        ),
        ({"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "fd00::7"}, "http://[fd00::7]/", None),
        ({"ALL_PROXY": "http://127.0.0.1:3130", "NO_PROXY": "http://quorvane.test"}, "http://quorvane.test/", None),
        (
            {"ALL_PROXY": "http://127.0.0.1:3130", "NO_PROXY": "http://quorvane.test"},
            "https://quorvane.test/",
            "http://127.0.0.1:3130",
        ),
        (
            {"HTTPS_PROXY": "http://127.0.0.1:3129", "ALL_PROXY": "http://127.0.0.1:3130"},
            "https://quorvane.test/",
            "http://127.0.0.1:3129",
        ),
        ({"HTTPS_PROXY": "http://127.0.0.1:3129", "NO_PROXY": " , brelloway.test , *"}, "https://quorvane.test/", None),
    ],
)
def test_the_proxy_is_chosen_as_httpx_chooses_it(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], url: str, expected: str | None
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    transport = CappedTransport(10_000, "the chat model")
    assert transport.proxy_for(httpx.URL(url)) == expected
    assert httpx_choice(url) == expected  # httpx's own default client, given no transport, mounts the same proxy
    assert CappedTransport(10_000, "the chat model", trust_env=False).proxy_for(httpx.URL(url)) is None


def httpx_choice(url: str) -> str | None:
    """The proxy httpx's own default client (given no transport) mounts for `url`, read from its internals: only
    to compare with."""
    with httpx.Client() as client:
        mounted = client._transport_for_url(httpx.URL(url))  # noqa: SLF001 - httpx's choice, to compare with
        pool = mounted._pool  # noqa: SLF001
        proxy_url = getattr(pool, "_proxy_url", None)
        return (
            None if proxy_url is None else f"{proxy_url.scheme.decode()}://{proxy_url.host.decode()}:{proxy_url.port}"
        )


@pytest.mark.parametrize(
    ("no_proxy", "url", "httpx_chooses"),
    [
        # A CIDR range covers every address in it; httpx compares the host with its first address only.
        ("10.20.0.0/16", "http://10.20.30.40/", "http://127.0.0.1:3128"),
        # A port in NO_PROXY also matches the scheme's default port left implicit; httpx only a written port.
        ("quorvane.test:80", "http://quorvane.test/", "http://127.0.0.1:3128"),
        # `localhost` covers the names under it like any host name; httpx only `localhost` itself.
        ("localhost", "http://api.localhost/", "http://127.0.0.1:3128"),
    ],
)
def test_deliberate_differences_from_httpx(
    monkeypatch: pytest.MonkeyPatch, no_proxy: str, url: str, httpx_chooses: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:3128")
    monkeypatch.setenv("NO_PROXY", no_proxy)
    assert CappedTransport(10_000, "the chat model").proxy_for(httpx.URL(url)) is None
    assert httpx_choice(url) == httpx_chooses


def test_the_cap_holds_through_the_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    with TinyProxy(b"x" * 50_000) as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        with (
            httpx.Client(transport=CappedTransport(10_000, "the PDF server")) as client,
            pytest.raises(BodyTooLarge, match="The PDF server sent more than its 10,000-byte limit"),
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
