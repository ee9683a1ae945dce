"""Fetching a set of pages under a per-page timeout, and turning pages into attributed, scored chunks.

Shared by `WebSearch` (pages found by a search) and `WebScrape` (a page asked for by URL). A page that is slow,
rate-limited, failing or unreadable is skipped with a reason; the others are kept.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from typing import Any

from haystack import logging
from haystack.utils import Secret

from components.contracts import ContextChunk, SourceType
from components.redaction import cut
from components.resilience import RetryableError, SourceError
from components.resilience.scheduling import map_until
from components.serialization import with_base_parameters
from components.settings import get_settings, setting_or
from components.validation import positive, string_list
from components.web.chunking import fetched_chunk, markdown_chunks, page_text, pick_chunks, query_cosines, query_terms
from components.web.fetching_source import FetchingSource
from components.web.firecrawl_access import FetchedPage, FirecrawlAccess, SearchHit, check_address, firecrawl_endpoint
from components.web.snapshots import PageSnapshot, SnapshotStore

logger = logging.getLogger(__name__)

# Pages are fetched in parallel, but a handful at a time: Firecrawl's plans limit concurrent requests.
_PAGE_WORKERS = 5


class WebSource(FetchingSource):
    """What `WebSearch` and `WebScrape` share: their Firecrawl, page-timeout, exclusion, snapshot and model init
    parameters (checked, kept under their own names), the source's guard, the embedding model and Firecrawl
    client library loaded in `warm_up()`, and their serialisation (every init parameter). A subclass names its
    guard's `SOURCE` and takes these parameters as `**shared` (`with_base_parameters`)."""

    SOURCE, API_URL_SETTING = "web", "firecrawl_api_url"

    @with_base_parameters(FetchingSource.__init__)
    def __init__(
        self,
        page_timeout_s: float | None = None,
        exclude_patterns: list[str] | None = None,
        api_key: Secret | None = None,
        snapshot_dir: str | None = None,
        **shared: Any,
    ) -> None:
        """The parameters of both web components: a None takes the setting in force as the component is built
        (WEB_PAGE_TIMEOUT_S, WEB_EXCLUDE_PATTERNS, FIRECRAWL_API_KEY as an env-var secret, the data folder's
        snapshots; the others as in `FetchingSource`, the URL FIRECRAWL_API_URL); `to_dict` writes the values used."""
        settings = get_settings()
        if page_timeout_s is not None:
            positive("page_timeout_s", page_timeout_s)
        self.page_timeout_s = page_timeout_s or settings.web_page_timeout_s
        self.exclude_patterns = string_list("exclude_patterns", setting_or(exclude_patterns, "web_exclude_patterns"))
        self.api_key = api_key or Secret.from_env_var("FIRECRAWL_API_KEY", strict=False)
        # A key written in the settings' `.env` file (not the environment) counts; it is never serialised.
        self._env_file_key = settings.firecrawl_api_key
        self.snapshot_dir = snapshot_dir or str(settings.data_dir / "snapshots")
        FetchingSource.__init__(self, **shared)

    def _endpoint(self) -> tuple[str | None, str | None]:
        """(key, URL) of Firecrawl for this component (see `firecrawl_endpoint`)."""
        return firecrawl_endpoint(self.api_key, self.api_url, self._env_file_key)

    def _load_client(self) -> None:
        import firecrawl  # noqa: F401 - its import takes seconds on a busy machine; not a search's latency

    def _run_settings(self) -> tuple[float, float, list[str], SnapshotStore]:
        """(the page timeout, the call's budget, the exclusion patterns, the snapshot store) of a run."""
        return (
            self.page_timeout_s,
            self._guard.policy.timeout_s,
            list(self.exclude_patterns),
            SnapshotStore(self.snapshot_dir),
        )


@dataclass
class PageFetch:
    """The outcome of fetching several pages: the pages read (with their snapshots) and the ones skipped."""

    pages: list[tuple[SearchHit, FetchedPage, PageSnapshot | None]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (url, reason)
    rate_limited: list[float | None] = field(default_factory=list)  # Retry-After of each page refused with 429
    filtered: list[tuple[str, str]] = field(default_factory=list)  # (url, reason): read, but not what was asked

    def note(self, total: int) -> str | None:
        """The status message when some pages were skipped, else None."""
        if not self.skipped:
            return None
        reasons = "; ".join(f"{url} ({reason})" for url, reason in self.skipped[:5])
        more = f" and {len(self.skipped) - 5} more" if len(self.skipped) > 5 else ""
        return f"read {len(self.pages)} of {total} pages; skipped {reasons}{more}"


def _fetch_one(
    access: FirecrawlAccess,
    url: str,
    page_timeout_s: float,
    until: float,
    languages: list[str] | None,
    allow_private: bool,
) -> FetchedPage:
    # Firecrawl fetches whatever it is asked to: the policy applies before, and Firecrawl is sent the URL as checked.
    target = check_address(url, allow_private)
    left = until - time.monotonic()
    try:
        page = access.scrape(target, timeout_s=max(0.5, min(page_timeout_s, left)), languages=languages)
    except RetryableError as exc:
        # One polite retry when the server says when, and that moment still fits this page's time.
        if exc.kind != "rate_limited" or exc.retry_after is None or exc.retry_after + 0.5 >= left:
            raise
        time.sleep(exc.retry_after)
        page = access.scrape(target, timeout_s=max(0.5, until - time.monotonic()), languages=languages)
    check_address(page.url, allow_private)  # where it ended up: a redirect to an inside address is dropped
    return page


def fetch_pages(
    access: FirecrawlAccess,
    hits: list[SearchHit],
    *,
    page_timeout_s: float,
    deadline: float,
    languages: list[str] | None = None,
    snapshots: SnapshotStore | None = None,
    allow_private: bool = False,
) -> PageFetch:
    """Scrape each hit's page in parallel; a page not read within `page_timeout_s` (or by `deadline`) is skipped, as
    is one whose address the address policy refuses (`allow_private`: ALLOW_PRIVATE_ADDRESSES)."""
    outcome = PageFetch()
    if not hits:
        return outcome
    until = min(time.monotonic() + page_timeout_s, deadline)
    futures, done, _ = map_until(
        lambda hit: _fetch_one(access, hit.url, page_timeout_s, until, languages, allow_private),
        hits,
        until,
        workers=min(_PAGE_WORKERS, len(hits)),
        name="web-page",
    )
    for future, hit in futures.items():  # search order, not completion order
        if future not in done:
            outcome.skipped.append((hit.url, f"not read within {page_timeout_s:g} s"))
            continue
        try:
            page = future.result()
        except (RetryableError, SourceError) as exc:
            reason = str(exc)
            if isinstance(exc, RetryableError) and exc.kind == "rate_limited":
                outcome.rate_limited.append(exc.retry_after)
                reason = "rate limited" + (f", retry after {exc.retry_after:g} s" if exc.retry_after else "")
            outcome.skipped.append((hit.url, reason))
            continue
        except Exception as exc:  # noqa: BLE001 - one bad page must not lose the others
            logger.warning("Page {url} failed: {error}", url=hit.url, error=cut(str(exc), 200))
            outcome.skipped.append((hit.url, type(exc).__name__))
            continue
        if page.status_code is not None and page.status_code >= 400:
            outcome.skipped.append((hit.url, f"the page answered HTTP {page.status_code}"))
            continue
        if (
            languages
            and page.language
            and not any(page.language.lower().split("-")[0] == wanted.lower().split("-")[0] for wanted in languages)
        ):
            outcome.filtered.append((hit.url, f"language {page.language} not asked for"))
            continue
        if not page_text(page.markdown).strip():
            outcome.skipped.append((hit.url, "no readable text"))
            continue
        snapshot = None
        if snapshots is not None:
            try:
                snapshot = snapshots.save(
                    page.url,
                    page.markdown,
                    title=page.title or hit.title,
                    fetched_at=page.fetched_at,
                    metadata={
                        "language": page.language,
                        "content_type": page.content_type,
                        "status_code": page.status_code,
                    },
                )
            except OSError as exc:
                logger.warning("Cannot keep a snapshot of {url}: {error}", url=page.url, error=str(exc))
        outcome.pages.append((hit, page, snapshot))
    return outcome


def page_metadata(page: FetchedPage, snapshot: PageSnapshot | None, title: str | None = None) -> dict[str, Any]:
    """The `WebMetadata` of a fetched page (`title`: its title when the page itself gives none): where and when it
    was read, and the snapshot that keeps it."""
    return {
        "domain": page.domain,
        "page_url": page.url,
        "page_title": title or page.title,
        "fetch_timestamp": page.fetched_at,
        "language": page.language,
        "content_type": page.content_type,
        "snapshot_id": snapshot.snapshot_id if snapshot else None,
        "content_hash": snapshot.content_hash if snapshot else hashlib.sha256(page.markdown.encode()).hexdigest(),
    }


def page_chunks(
    fetched: list[tuple[SearchHit, FetchedPage, PageSnapshot | None]],
    query: str,
    query_embedding: list[float] | None,
    model,  # noqa: ANN001 - components.embedding.EmbeddingModel
    *,
    chunk_tokens: int,
    max_chunks_per_page: int | None,
) -> list[ContextChunk]:
    """Chunks of each page with attribution; relevance is the cosine to the query (all chunks embedded at once)."""
    terms = query_terms(query) if query else []
    prepared: list[tuple[SearchHit, FetchedPage, PageSnapshot | None, int, int, str, str | None]] = []
    for hit, page, snapshot in fetched:
        # Chunks never straddle a heading; the heading goes to metadata, the text stays what the page says.
        pieces = markdown_chunks(page.markdown, chunk_tokens, model.name)
        texts = [piece for _, piece in pieces]
        keep = range(len(texts)) if max_chunks_per_page is None else pick_chunks(texts, terms, max_chunks_per_page)
        for index in keep:
            prepared.append((hit, page, snapshot, index, len(pieces), pieces[index][1], pieces[index][0]))
    if not prepared:
        return []
    relevance: list[float | None] = [None] * len(prepared)
    if query or query_embedding:
        texts = ["\n".join(part for part in (item[1].title, item[6], item[5]) if part) for item in prepared]
        relevance = list(query_cosines(model, query, query_embedding, texts))
    chunks = []
    for (hit, page, snapshot, index, total, text, section), cosine in zip(prepared, relevance, strict=True):
        metadata = {
            **page_metadata(page, snapshot, page.title or hit.title),
            "chunk_index": index,
            "page_total_chunks": total,
            "section_title": section,
            "search_position": hit.position,
        }
        chunks.append(
            fetched_chunk(
                SourceType.WEB,
                f"web\n{page.url}\n{metadata['content_hash']}\n{index}",
                text,
                cosine,
                source_id=page.url,
                source_title=page.title or hit.title or page.domain,
                source_url=page.url,
                source_date=page.published,
                metadata=metadata,
            )
        )
    chunks.sort(key=lambda chunk: chunk.semantic_relevance, reverse=True)
    return chunks
