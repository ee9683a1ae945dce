"""The address policy applies to every URL the web source asks Firecrawl to fetch: URL ingestion, scraping by URL
and the pages a search found. A self-hosted scraper would otherwise fetch cloud metadata or inside services."""

from __future__ import annotations

import pytest

from components.contracts import StatusKind
from components.tools import public_address
from components.web import UrlNotIngested, WebScrape, WebSearch, ingest_url

pytestmark = pytest.mark.integration

INSIDE = [
    ("http://169.254.169.254/latest/meta-data/", "a cloud metadata address"),
    ("http://127.0.0.1:5432/", "a loopback address"),
    ("http://[::1]/", "a loopback address"),
    ("http://10.0.0.1/admin", "a private address"),
    ("https://intranet.corp.test/wiki", "a private address"),  # a name that resolves to 192.168.1.20
]


@pytest.fixture(autouse=True)
def corp_name(monkeypatch: pytest.MonkeyPatch) -> None:
    real = public_address.resolve

    def resolve(host: str, port: int) -> list[str]:
        return ["192.168.1.20"] if host == "intranet.corp.test" else real(host, port)

    monkeypatch.setattr(public_address, "resolve", resolve)


def scrapes(server) -> list[dict]:  # noqa: ANN001
    return [request for request in server.requests if request["path"] == "/v2/scrape"]


@pytest.mark.parametrize(("url", "reason"), INSIDE)
def test_url_ingestion_refuses_inside_addresses_before_asking_firecrawl(firecrawl_server, monkeypatch, tmp_path,
                                                                        url, reason):
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    scraper = WebScrape(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    with pytest.raises(UrlNotIngested, match=f"resolves to {reason}.*fetching it is refused"):
        ingest_url(url, ingestor=object(), scraper=scraper)
    result = scraper.run(url=url)
    assert result["status"].status is StatusKind.ERROR and reason in result["status"].message
    assert scrapes(firecrawl_server) == []


def test_private_addresses_pass_when_allowed(firecrawl_server, monkeypatch, tmp_path):
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    scraper = WebScrape(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path), allow_private_addresses=True)
    scraper.run(url="http://10.0.0.1/admin")
    assert len(scrapes(firecrawl_server)) == 1  # asked (the fake web has no such page)


def test_search_results_at_inside_addresses_are_skipped(firecrawl_server, monkeypatch, tmp_path):
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    firecrawl_server.set_page("http://169.254.169.254/latest/meta-data/", title="Zorblax metadata",
                              markdown="# Zorblax credentials\n\nZorblax zorblax zorblax.")
    web = WebSearch(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    web.warm_up()
    result = web.run(query="zorblax credentials")
    assert not any("169.254" in (document.meta.get("source_url") or "") for document in result["documents"])
    assert "a cloud metadata address" in (result["status"].message or "")
    assert not any(b"169.254.169.254" in request["body"] for request in scrapes(firecrawl_server))
