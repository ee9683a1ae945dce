"""FetchPage: a plain HTTP fetcher that refuses private, loopback and link-local addresses unless allowed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from components.resilience import SourceError
from components.tools import public_address
from components.tools.fetch_page import FetchPage, check_url
from tests.contract_servers import Reply
from tests.contract_servers.pages import PageServer, html_page

PAGE = b"""<!doctype html><html><head><title>Acme annual report</title><script>var x = 1;</script></head>
<body><nav>Home | About</nav><h1>Acme 2024</h1><p>Revenue grew 12 percent.</p></body></html>"""


@pytest.fixture(scope="module")
def page_server() -> Iterator[PageServer]:
    """An HTML page, a big one and a PDF."""
    routes = {
        "/report": html_page(PAGE),
        "/big": html_page(b"<html><body><p>" + b"word " * 400_000 + b"</p></body></html>"),
        "/file.pdf": Reply(200, b"%PDF-1.4", "application/pdf"),
    }
    with PageServer(routes) as server:
        yield server


class TestFetchPage:
    def test_init_and_serialisation(self) -> None:
        with pytest.raises(ValueError):
            FetchPage(timeout_s=0)
        tool = FetchPage(allow_private_addresses=True, timeout_s=2.0, max_chars=100)
        assert FetchPage.from_dict(tool.to_dict()).to_dict() == tool.to_dict()

    @pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://example.org/", "gopher://x/", "example.org"])
    def test_refuses_other_schemes(self, url: str) -> None:
        with pytest.raises(SourceError, match="Only http and https"):
            check_url(url, allow_private=True)

    def test_default_follows_the_setting_and_refuses_loopback(self, page_server: PageServer) -> None:
        with pytest.raises(SourceError, match="loopback"):
            FetchPage().run(url=f"{page_server.base_url}/report")
        assert all(r["path"] != "/report" for r in page_server.requests)

    def test_fetches_text_when_private_addresses_are_allowed(self, page_server: PageServer) -> None:
        result = FetchPage(allow_private_addresses=True).run(url=f"{page_server.base_url}/go?to=/report")
        assert result["title"] == "Acme annual report"
        assert "Revenue grew 12 percent." in result["text"]
        assert "var x" not in result["text"] and "Home | About" not in result["text"]
        assert result["final_url"].endswith("/report") and result["content_type"] == "text/html"

    def test_every_redirect_hop_is_checked(self, page_server: PageServer, monkeypatch: pytest.MonkeyPatch) -> None:
        # 127.0.0.1 stands in for a public host; the redirect target 127.0.0.2 for an internal one.
        real = public_address.refused_reason
        monkeypatch.setattr(public_address, "refused_reason", lambda a: real(a) if str(a) == "127.0.0.2" else None)
        url = f"{page_server.base_url}/go?to=http://127.0.0.2:{page_server.port}/report"
        with pytest.raises(SourceError, match="127.0.0.2 resolves to a loopback address"):
            FetchPage(allow_private_addresses=False).run(url=url)

    def test_connects_to_the_checked_address_under_the_original_host_name(
        self, page_server: PageServer, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # public.example resolves (only here) to 127.0.0.1, standing in for a public address; the fetch must use
        # exactly the address that was checked, since the name itself resolves nowhere else.
        monkeypatch.setattr(
            public_address, "resolve", lambda host, port: ["127.0.0.1"] if host == "public.example" else []
        )
        monkeypatch.setattr(public_address, "refused_reason", lambda address: None)
        result = FetchPage(allow_private_addresses=False).run(url=f"http://public.example:{page_server.port}/report")
        assert result["title"] == "Acme annual report"
        assert page_server.requests[-1]["headers"]["host"] == f"public.example:{page_server.port}"
        assert result["final_url"] == f"http://public.example:{page_server.port}/report"

    def test_binary_pages_and_http_errors(self, page_server: PageServer) -> None:
        import httpx

        tool = FetchPage(allow_private_addresses=True)
        with pytest.raises(SourceError, match="application/pdf"):
            tool.run(url=f"{page_server.base_url}/file.pdf")
        with pytest.raises(httpx.HTTPStatusError):
            tool.run(url=f"{page_server.base_url}/missing")

    def test_body_is_cut_at_the_byte_cap(self, page_server: PageServer) -> None:
        result = FetchPage(allow_private_addresses=True, max_bytes=50_000, max_chars=1_000_000).run(
            url=f"{page_server.base_url}/big"
        )
        assert result["truncated"] is True
        assert 40_000 < len(result["text"]) <= 50_000

    def test_an_endless_body_stops_at_the_cap_and_the_transfer_ends(self, page_server: PageServer) -> None:
        import time

        page_server.fail("endless", path="/report")
        try:
            started = time.monotonic()
            result = FetchPage(allow_private_addresses=True, max_bytes=2_000_000).run(
                url=f"{page_server.base_url}/report"
            )
            assert time.monotonic() - started < 5 and result["truncated"] is True
            time.sleep(0.5)
            sent = page_server.bytes_sent
            time.sleep(1.0)
            # The connection is closed: the server cannot send more than what sat in the socket buffers.
            assert page_server.bytes_sent - sent < 1_000_000 and sent < 20_000_000
        finally:
            page_server.reset()

    def test_an_endless_body_under_a_time_limit_stops_at_the_deadline(self, page_server: PageServer) -> None:
        import time

        from components.resilience.budget import question_budget

        page_server.fail("endless", path="/report")
        try:
            started = time.monotonic()
            with question_budget(0.5):
                result = FetchPage(allow_private_addresses=True, max_bytes=10**9).run(
                    url=f"{page_server.base_url}/report"
                )
            elapsed = time.monotonic() - started
            # A gigabyte at the server's 16 MB/s would take a minute: within a few seconds proves the 0.5 s budget
            # ended the transfer (room for a loaded machine); the lower bound proves it read until the deadline.
            assert 0.45 <= elapsed < 0.5 + 3.5 and result["truncated"] is True, elapsed
        finally:
            page_server.reset()
