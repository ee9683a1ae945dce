"""`WebScrape`: one page by URL through Firecrawl, as attributed chunks (the `scrape(url)` tool beside search)."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlsplit

from haystack import Document, component

from components.contracts import SourceStatus
from components.resilience import RetryableError, SourceError, SourceResult
from components.serialization import with_base_parameters
from components.validation import positive_int
from components.web.firecrawl_access import FetchedPage, FirecrawlAccess, SearchHit, check_address, matches_pattern
from components.web.pages import WebSource, fetch_pages, page_chunks
from components.web.snapshots import PageSnapshot

SOURCE = "web_scrape"


def check_url(url: str) -> str:
    """`url` stripped, or a `SourceError` saying why it cannot be scraped."""
    text = (url or "").strip()
    if not text:
        raise SourceError("no URL given")
    try:
        parts = urlsplit(text)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        raise SourceError(f"{text[:200]!r} is not an http(s) URL")
    return text


@component
class WebScrape(WebSource):
    """Fetches one web page with Firecrawl and returns its chunks, keeping a timestamped snapshot of the page.

    With a `query`, chunks carry their cosine relevance to it (the `max_chunks` most on-topic ones are kept);
    without one, every chunk is returned with relevance 0. The run never raises: a slow, missing or refused page
    gives an empty list and a status that says why.

    Usage:
    ```python
    scrape = WebScrape()
    result = scrape.run(url="https://en.wikipedia.org/wiki/Haystack", query="What is Haystack?")
    result["documents"][0].meta["snapshot_id"]
    ```
    """

    SOURCE = SOURCE

    @with_base_parameters(WebSource.__init__)
    def __init__(self, max_chunks: int = 20, **shared: Any) -> None:
        """`max_chunks`: the most on-topic chunks kept when a query is given; the others as in `WebSource`."""
        WebSource.__init__(self, **shared)
        self.max_chunks = positive_int("max_chunks", max_chunks)

    @component.output_types(documents=list[Document], status=SourceStatus)
    def run(self, url: str, query: str | None = None, query_embedding: list[float] | None = None) -> dict[str, Any]:
        """Fetch `url` and chunk it.

        :returns: `documents`: the page's chunks as Documents (meta per `WebMetadata`, plus `snapshot_id`);
            `status`: the `SourceStatus` of this run.
        """
        self.warm_up()  # the tokenizer sizes the chunks; loading it is set-up, not the page's latency
        return self._guard.outputs(self._work(url, query, query_embedding, chunked=True))

    def fetch(self, url: str) -> tuple[FetchedPage | None, PageSnapshot | None, SourceStatus]:
        """The whole page (Markdown and metadata) and its snapshot, for ingestion; never raises."""
        import firecrawl  # noqa: F401 - a slow first import must not eat the page's time budget

        holder: dict[str, Any] = {}
        result, status = self._guard.call(self._work(url, None, None, chunked=False, holder=holder))
        return holder.get("page"), holder.get("snapshot"), status

    def _work(
        self,
        url: str,
        query: str | None,
        query_embedding: list[float] | None,
        *,
        chunked: bool,
        holder: dict[str, Any] | None = None,
    ):  # noqa: ANN202 - a closure for the guard
        page_timeout, budget, patterns, snapshots = self._run_settings()

        def work() -> SourceResult:
            target = check_url(url)
            blocked = next((pattern for pattern in patterns if matches_pattern(target, pattern)), None)
            if blocked:
                raise SourceError(f"{target} is excluded by the web exclusion pattern {blocked!r}")
            allow_private = self.allow_private_addresses
            check_address(target, allow_private)
            access = FirecrawlAccess(*self._endpoint(), min(page_timeout, budget), self.max_response_bytes)
            deadline = time.monotonic() + max(budget - 1.0, budget * 0.7)
            fetched = fetch_pages(
                access,
                [SearchHit(url=target)],
                page_timeout_s=min(page_timeout, budget),
                deadline=deadline,
                snapshots=snapshots,
                allow_private=allow_private,
            )
            if not fetched.pages:
                _, reason = fetched.skipped[0]
                if fetched.rate_limited:
                    raise RetryableError(
                        f"Firecrawl rate-limited {target} (HTTP 429)", fetched.rate_limited[0], "rate_limited"
                    )
                raise SourceError(f"cannot read {target}: {reason}")
            hit, page, snapshot = fetched.pages[0]
            if holder is not None:
                holder["page"], holder["snapshot"] = page, snapshot
            if not chunked:
                return SourceResult(chunks=[], total_found=1)
            self.warm_up()
            chunks = page_chunks(
                fetched.pages,
                query or "",
                query_embedding,
                self._model,
                chunk_tokens=self.chunk_tokens,
                max_chunks_per_page=self.max_chunks if (query or query_embedding) else None,
            )
            if not (query or query_embedding):
                chunks.sort(key=lambda chunk: chunk.metadata["chunk_index"])
            return SourceResult(chunks=chunks, total_found=len(chunks))

        return work
