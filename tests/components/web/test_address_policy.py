"""The address policy applies to every URL the web source asks Firecrawl to fetch: URL ingestion, scraping by URL
and the pages a search found. A self-hosted scraper would otherwise fetch cloud metadata or inside services."""

from __future__ import annotations

import json

import pytest

from components.contracts import StatusKind
from components.web import UrlNotIngested, WebScrape, WebSearch, ingest_url
from tests.inside_names import resolve_inside

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
    resolve_inside(monkeypatch, "intranet.corp.test")


def scrapes(server) -> list[dict]:  # noqa: ANN001
    return [request for request in server.requests if request["path"] == "/v2/scrape"]


@pytest.mark.parametrize(("url", "reason"), INSIDE)
def test_url_ingestion_refuses_inside_addresses_before_asking_firecrawl(
    firecrawl_server, monkeypatch, tmp_path, url, reason
):
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
    firecrawl_server.set_page(
        "http://169.254.169.254/latest/meta-data/",
        title="Zorblax metadata",
        markdown="# Zorblax credentials\n\nZorblax zorblax zorblax.",
    )
    web = WebSearch(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    web.warm_up()
    result = web.run(query="zorblax credentials")
    assert not any("169.254" in (document.meta.get("source_url") or "") for document in result["documents"])
    assert "a cloud metadata address" in (result["status"].message or "")
    assert not any(b"169.254.169.254" in request["body"] for request in scrapes(firecrawl_server))


def test_a_url_read_differently_by_firecrawl_is_refused_before_asking_it(firecrawl_server, monkeypatch, tmp_path):
    # Python's urlsplit reads the host as the name after '@'; Firecrawl's WHATWG parser reads '\' as '/' and so the
    # metadata address as the host.
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    url = "http://169.254.169.254\\@docs.example.com/latest/meta-data/"
    scraper = WebScrape(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    with pytest.raises(UrlNotIngested, match="contains a backslash, whitespace or a control character"):
        ingest_url(url, ingestor=object(), scraper=scraper)
    result = scraper.run(url=url)
    assert result["status"].status is StatusKind.ERROR and "backslash" in result["status"].message
    assert scrapes(firecrawl_server) == []


def test_firecrawl_is_sent_the_url_as_checked(firecrawl_server, monkeypatch, tmp_path):
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    firecrawl_server.set_page(
        "https://docs.example.com/plumvex", title="Plumvex", markdown="# Plumvex\n\nPlumvex gears turn slowly."
    )
    scraper = WebScrape(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    result = scraper.run(url="https://someone:secret@Docs.Example.COM/plumvex")
    assert result["documents"], result["status"].message
    assert [json.loads(request["body"])["url"] for request in scrapes(firecrawl_server)] == [
        "https://docs.example.com/plumvex"
    ]


REDIRECTED = "https://docs.example.com/moved-plumvex"


@pytest.fixture()
def redirect_inside(firecrawl_server, monkeypatch):  # noqa: ANN001, ANN201
    """A public page that Firecrawl reports as read at the metadata address (it redirected there)."""
    monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
    firecrawl_server.set_page(
        REDIRECTED,
        title="Plumvex secrets",
        markdown="# Plumvex secrets\n\nPlumvex token.",
        extra_metadata={"url": "http://169.254.169.254/latest/meta-data/iam"},
    )


@pytest.mark.usefixtures("redirect_inside")
def test_a_page_that_redirected_to_an_inside_address_is_dropped(firecrawl_server, tmp_path):
    scraper = WebScrape(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    result = scraper.run(url=REDIRECTED)
    assert result["documents"] == []
    assert result["status"].status is StatusKind.ERROR
    assert "resolves to a cloud metadata address" in result["status"].message
    with pytest.raises(UrlNotIngested, match="resolves to a cloud metadata address.*fetching it is refused"):
        ingest_url(REDIRECTED, ingestor=object(), scraper=scraper)
    web = WebSearch(api_url=firecrawl_server.url, snapshot_dir=str(tmp_path))
    web.warm_up()
    found = web.run(query="plumvex secrets")
    assert not any("Plumvex token" in (document.content or "") for document in found["documents"])
    assert "a cloud metadata address" in (found["status"].message or "")
