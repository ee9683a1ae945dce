"""`WebSearch`: the research pipeline's web branch (Firecrawl search, then each page fetched and chunked)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from haystack import component, logging

from components.contracts import SourceStatus
from components.contracts.branch import BranchQuery, branch_run
from components.contracts.selection import filter_names
from components.resilience import SourceResult
from components.resilience.errors import RetryableError
from components.resilience.scheduling import source_twin
from components.serialization import with_base_parameters
from components.validation import bounded_count, bounded_text, positive_int, string_list
from components.web.firecrawl_access import NOT_CONFIGURED, FirecrawlAccess, matches_pattern
from components.web.pages import WebSource, fetch_pages, page_chunks

logger = logging.getLogger(__name__)

SOURCE = "web"
MAX_RESULTS = 20
MAX_QUERY_CHARS = 1000


def _matches_any(url: str, patterns: list[str]) -> bool:
    return any(matches_pattern(url, pattern) for pattern in patterns)


@component
class WebSearch(WebSource):
    """Searches the web with Firecrawl, reads each result page as Markdown and returns its relevant chunks.

    Every page is kept as a timestamped snapshot (`SnapshotStore`) so a citation can be checked later. Pages
    that are slow (over `page_timeout_s`), rate-limited or broken are skipped and the rest kept (status
    `partial`). Chunk relevance is the cosine to the question from the local model. The run never raises.

    Usage:
    ```python
    web = WebSearch(num_results=5)  # FIRECRAWL_API_KEY / FIRECRAWL_API_URL from the environment
    web.warm_up()
    result = web.run(query="What is retrieval-augmented generation?")
    result["documents"], result["status"].status
    ```
    """

    SOURCE = SOURCE

    @with_base_parameters(WebSource.__init__)
    def __init__(
        self,
        num_results: int = 5,
        languages: list[str] | None = None,
        include_domains: list[str] | None = None,
        exclude_domains: list[str] | None = None,
        max_chunks_per_page: int = 6,
        **shared: Any,
    ) -> None:
        """The search's own defaults (each a run can override); Firecrawl, timeouts, exclusions, snapshots and
        models as in `WebSource`."""
        self.languages = string_list("languages", languages)
        self.include_domains = string_list("include_domains", include_domains)
        self.exclude_domains = string_list("exclude_domains", exclude_domains)
        self.num_results = positive_int("num_results", num_results)
        self.max_chunks_per_page = positive_int("max_chunks_per_page", max_chunks_per_page)
        WebSource.__init__(self, **shared)

    # -- the branch -----------------------------------------------------------------------------------------

    @branch_run
    def run(
        self,
        branch: BranchQuery,
        num_results: int | None = None,
        languages: list[str] | None = None,
        include_domains: list[str] | None = None,
        exclude_domains: list[str] | None = None,
    ) -> dict[str, Any]:
        """Search the web for the branch's `query`.

        Of the research `filters`, only `domains` applies to the web (as `include_domains` when that is not
        given). With `as_of` the web is skipped: a page fetched today says what it says today, not what was known then.

        :returns: `documents`: chunks as Documents (meta per `ContextChunk`/`WebMetadata`), best first;
            `status`: the `SourceStatus` of this run; `branch`: the same documents as the ranker's `BranchDocuments`.
        """

        def prepare() -> SourceStatus | Callable[[], SourceResult]:
            as_of, sources = branch.as_of, branch.sources
            if as_of:
                return SourceStatus.skipped(
                    SOURCE,
                    f"web pages cannot be dated reliably, so the web is not searched for a question as of {as_of}",
                )
            if not any(self._endpoint()):
                if sources is not None and SOURCE in {str(source).strip().lower() for source in sources}:
                    # Asked for by name: say it failed; as part of "every source" it just does not take part.
                    logger.warning("Web search asked for but not configured")
                    return SourceStatus.refused(SOURCE, NOT_CONFIGURED, time.monotonic())
                return SourceStatus.skipped(SOURCE, NOT_CONFIGURED)
            page_timeout, budget, patterns, snapshots = self._run_settings()
            domains = include_domains or filter_names(branch.filters, "domains")

            def work() -> SourceResult:
                started = time.monotonic()
                text = bounded_text("the question", branch.query, MAX_QUERY_CHARS)
                wanted = bounded_count("num_results", num_results, self.num_results, MAX_RESULTS)
                langs = string_list("languages", languages, self.languages)
                include = string_list("include_domains", domains, self.include_domains)
                exclude = string_list("exclude_domains", exclude_domains, self.exclude_domains) or []
                # Leave room in the budget for chunking and embedding after the pages arrive.
                deadline = started + max(budget - 1.0, budget * 0.7)
                access = FirecrawlAccess(
                    *self._endpoint(), max(1.0, min(page_timeout, budget)), self.max_response_bytes
                )
                # Domains go to Firecrawl too, but only as a hint: a self-hosted one may ignore them.
                domain_patterns = [p for p in patterns if not any(c in p for c in "*?[/:")]
                hits = access.search(
                    text,
                    limit=min(wanted + len(patterns) + len(exclude), MAX_RESULTS),
                    include_domains=include,
                    exclude_domains=exclude + domain_patterns,
                )
                blocked = patterns + exclude
                kept = [hit for hit in hits if not _matches_any(hit.url, blocked)]
                if include:
                    kept = [hit for hit in kept if _matches_any(hit.url, include)]
                kept = kept[:wanted]
                if not kept:
                    return SourceResult(chunks=[], total_found=0)
                self.warm_up()
                fetched = fetch_pages(
                    access,
                    kept,
                    page_timeout_s=page_timeout,
                    deadline=deadline,
                    languages=langs,
                    snapshots=snapshots,
                    allow_private=self.allow_private_addresses,
                )
                if not fetched.pages and fetched.rate_limited and len(fetched.rate_limited) == len(fetched.skipped):
                    waits = [wait for wait in fetched.rate_limited if wait is not None]
                    raise RetryableError(
                        "Firecrawl rate-limited every page (HTTP 429)", max(waits) if waits else None, "rate_limited"
                    )
                fetched.pages = [
                    (hit, page, snap) for hit, page, snap in fetched.pages if not _matches_any(page.url, blocked)
                ]
                chunks = page_chunks(
                    fetched.pages,
                    text,
                    branch.query_embedding,
                    self._model,
                    chunk_tokens=self.chunk_tokens,
                    max_chunks_per_page=self.max_chunks_per_page,
                )
                logger.info(
                    "Web search read {pages} of {total} pages into {count} chunks",
                    pages=len(fetched.pages),
                    total=len(kept),
                    count=len(chunks),
                )
                return SourceResult(chunks=chunks, total_found=len(kept), partial=fetched.note(len(kept)))

            return work

        # Nothing before the work checks the question (the work does), so a fault here is the set-up's and is raised.
        return self._guard.branch_outputs(
            branch.sources, "web not selected for this question", prepare, refuse=(), set_up=self.warm_up
        )

    run_async = source_twin(run, SOURCE)
