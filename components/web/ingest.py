"""`ingest_url`: a web page, fetched through Firecrawl by `WebScrape`, added to the knowledge base."""

from __future__ import annotations

from typing import Any

from components.resilience import SourceError
from components.web.firecrawl_access import check_address
from components.web.pages import page_metadata
from components.web.scrape import WebScrape, check_url


class UrlNotIngested(RuntimeError):
    """The page could not be fetched; the message says why in one sentence."""


class UrlRefused(UrlNotIngested, ValueError):
    """The URL itself is refused (not http(s), or a host that is not public): bad input, not a failed fetch."""


def ingest_url(url: str, ingestor: Any, scraper: WebScrape | None = None) -> Any:
    """Fetch `url` (keeping a snapshot) and ingest its Markdown as a "web" document with `ingestor` (the
    ingestion service, `ingest.Ingestor`); returns its `IngestReport`.

    Raises `UrlRefused` when the URL is refused by the address policy before anything is asked of Firecrawl, and
    `UrlNotIngested` when the page cannot be fetched (missing key, excluded, slow, refused).
    """
    scraper = scraper or WebScrape()
    try:
        check_address(check_url(url), scraper.allow_private_addresses)
    except SourceError as exc:
        raise UrlRefused(f"{url} was not ingested: {exc}") from None
    page, snapshot, status = scraper.fetch(url)
    if page is None:
        raise UrlNotIngested(f"{url} was not ingested: {status.message or status.status.value}")
    try:  # the page's final URL (after redirects), whatever scraper fetched it
        check_address(page.url, scraper.allow_private_addresses)
    except SourceError as exc:
        raise UrlRefused(f"{url} was not ingested: {exc}") from None
    metadata = page_metadata(page, snapshot)
    return ingestor.ingest_text(
        page.markdown,
        page.title or page.url,
        page.url,
        doc_type="web",
        url=page.url,
        date=page.published,
        metadata={key: value for key, value in metadata.items() if value is not None},
    )
