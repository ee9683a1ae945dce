"""FetchPage: a plain HTTP fetcher that refuses private, loopback and link-local addresses unless allowed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from components.resilience import SourceError
from components.tools import fetch_page as fetch_page_module
from components.tools.fetch_page import FetchPage, check_url, refused_address_reason
from tests.contract_servers import ContractServer, Reply

PAGE = b"""<!doctype html><html><head><title>Acme annual report</title><script>var x = 1;</script></head>
<body><nav>Home | About</nav><h1>Acme 2024</h1><p>Revenue grew 12 percent.</p></body></html>"""


class PageServer(ContractServer):
    """A few pages: HTML, a redirect (target set per test), a PDF and a 404."""

    name = "pages"
    redirect_to = "/report"

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        self.last_host = headers.get("host", "")
        if path == "/report":
            return Reply(200, PAGE, "text/html; charset=utf-8")
        if path == "/moved":
            return Reply(302, b"", "text/plain", headers={"Location": self.redirect_to})
        if path == "/file.pdf":
            return Reply(200, b"%PDF-1.4", "application/pdf")
        return Reply(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def page_server() -> Iterator[PageServer]:
    server = PageServer().start()
    yield server
    server.stop()


class TestFetchPage:
    def test_init_and_serialisation(self) -> None:
        with pytest.raises(ValueError):
            FetchPage(timeout_s=0)
        tool = FetchPage(allow_private_addresses=True, timeout_s=2.0, max_chars=100)
        assert FetchPage.from_dict(tool.to_dict()).to_dict() == tool.to_dict()

    @pytest.mark.parametrize(
        ("address", "reason"),
        [
            ("127.0.0.1", "a loopback address"),
            ("::1", "a loopback address"),
            ("10.1.2.3", "a private address"),
            ("192.168.0.10", "a private address"),
            ("172.16.5.4", "a private address"),
            ("169.254.169.254", "a link-local address"),
            ("fe80::1", "a link-local address"),
            ("::ffff:127.0.0.1", "a loopback address"),
            ("0.0.0.0", "a private address"),
            ("93.184.216.34", None),
        ],
    )
    def test_address_classification(self, address: str, reason: str | None) -> None:
        assert refused_address_reason(address) == reason

    @pytest.mark.parametrize(
        "url",
        [
            "http://127.0.0.1/",
            "http://localhost:8080/x",
            "http://[::1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.5/admin",
            "http://2130706433/",
        ],
    )
    def test_refuses_non_public_hosts_by_default(self, url: str) -> None:
        with pytest.raises(SourceError, match="ALLOW_PRIVATE_ADDRESSES"):
            check_url(url, allow_private=False)

    @pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/", "gopher://x/", "example.org"])
    def test_refuses_other_schemes(self, url: str) -> None:
        with pytest.raises(SourceError, match="Only http and https"):
            check_url(url, allow_private=True)

    def test_default_follows_the_setting_and_refuses_loopback(self, page_server: PageServer) -> None:
        with pytest.raises(SourceError, match="loopback"):
            FetchPage().run(url=f"{page_server.base_url}/report")
        assert page_server.requests == [] or all(r["path"] != "/report" for r in page_server.requests)

    def test_fetches_text_when_private_addresses_are_allowed(self, page_server: PageServer) -> None:
        result = FetchPage(allow_private_addresses=True).run(url=f"{page_server.base_url}/moved")
        assert result["title"] == "Acme annual report"
        assert "Revenue grew 12 percent." in result["text"]
        assert "var x" not in result["text"] and "Home | About" not in result["text"]
        assert result["final_url"].endswith("/report") and result["content_type"] == "text/html"

    def test_every_redirect_hop_is_checked(self, page_server: PageServer, monkeypatch: pytest.MonkeyPatch) -> None:
        # 127.0.0.1 stands in for a public host; the redirect target 127.0.0.2 for an internal one.
        monkeypatch.setattr(
            fetch_page_module, "refused_address_reason", lambda a: "a loopback address" if a == "127.0.0.2" else None
        )
        monkeypatch.setattr(page_server, "redirect_to", f"http://127.0.0.2:{page_server.port}/report")
        with pytest.raises(SourceError, match="127.0.0.2 resolves to a loopback address"):
            FetchPage(allow_private_addresses=False).run(url=f"{page_server.base_url}/moved")

    def test_connects_to_the_checked_address_under_the_original_host_name(
        self, page_server: PageServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # public.example resolves (only here) to 127.0.0.1, standing in for a public address; the fetch must use
        # exactly the address that was checked, since the name itself resolves nowhere else.
        import socket

        real = socket.getaddrinfo

        def resolve(host, port, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            if host != "public.example":
                return real(host, port, *args, **kwargs)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

        monkeypatch.setattr(fetch_page_module.socket, "getaddrinfo", resolve)
        monkeypatch.setattr(fetch_page_module, "refused_address_reason", lambda address: None)
        result = FetchPage(allow_private_addresses=False).run(url=f"http://public.example:{page_server.port}/report")
        assert result["title"] == "Acme annual report"
        assert page_server.last_host == f"public.example:{page_server.port}"
        assert result["final_url"] == f"http://public.example:{page_server.port}/report"

    def test_binary_pages_and_http_errors(self, page_server: PageServer) -> None:
        import httpx

        tool = FetchPage(allow_private_addresses=True)
        with pytest.raises(SourceError, match="application/pdf"):
            tool.run(url=f"{page_server.base_url}/file.pdf")
        with pytest.raises(httpx.HTTPStatusError):
            tool.run(url=f"{page_server.base_url}/missing")
