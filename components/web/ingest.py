"""`ingest_url`: a web page, fetched through Firecrawl by `WebScrape`, added to the knowledge base."""

from __future__ import annotations

from typing import Any

from components.web.pages import page_metadata
from components.web.scrape import WebScrape


class UrlNotIngested(RuntimeError):
    """The page could not be fetched; the message says why in one sentence."""


def ingest_url(url: str, ingestor: Any, scraper: WebScrape | None = None) -> Any:
    """Fetch `url` (keeping a snapshot) and ingest its Markdown as a "web" document with `ingestor` (the
    ingestion service, `ingest.Ingestor`); returns its `IngestReport`.

    Raises `UrlNotIngested` when the page cannot be fetched (missing key, excluded, slow, refused).
    """
    scraper = scraper or WebScrape()
    page, snapshot, status = scraper.fetch(url)
    if page is None:
        raise UrlNotIngested(f"{url} was not ingested: {status.message or status.status.value}")
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
