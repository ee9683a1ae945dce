"""Talking to Firecrawl (v2 API, through `firecrawl-py`): search, scrape, and what each failure means.

Every failure leaves here as one of the tool contract's errors: `RetryableError` (429 with its Retry-After,
5xx, dropped connections, timeouts, malformed bodies) or `SourceError` (missing or refused key, bad request,
unreachable page) with a one-sentence message. The client's own retries are off: the guard retries, within budget.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from components.redaction import cut
from components.resilience import RetryableError, SourceError
from components.resilience.errors import parse_retry_after
from components.resilience.transport import capped_session
from components.text.dates import parse_date
from components.tools import public_address
from components.web.faults import connection_fault
from components.web.snapshots import utc_now

HOSTED_API_URL = "https://api.firecrawl.dev"
NOT_CONFIGURED = "web search is not configured: set FIRECRAWL_API_KEY (or FIRECRAWL_API_URL for a self-hosted one)"
_SCRAPE_RESUMES: bool | None = None  # whether this firecrawl-py's scrape() takes auto_resume (newer 4.x)


@dataclass
class SearchHit:
    """One search result before its page is fetched."""

    url: str
    title: str = ""
    description: str = ""
    position: int | None = None


@dataclass
class FetchedPage:
    """A page Firecrawl fetched, as Markdown with what it said about the page."""

    url: str
    markdown: str
    title: str
    fetched_at: str
    language: str | None = None
    content_type: str | None = None
    published: dt.date | None = None
    status_code: int | None = None
    description: str = ""

    @property
    def domain(self) -> str:
        """The host of the page's URL, lower case, without a leading `www.`."""
        return (urlsplit(self.url).hostname or "").lower().removeprefix("www.")


def matches_pattern(url: str, pattern: str) -> bool:
    """True when `url` falls under `pattern`: a domain (its subdomains too) or a glob over the whole URL."""
    pattern = pattern.strip().lower()
    if not pattern:
        return False
    if any(char in pattern for char in "*?[/:"):
        return fnmatch.fnmatch(url.lower(), pattern)
    host = (urlsplit(url).hostname or "").lower()
    pattern = pattern.lstrip(".")
    return host == pattern or host.endswith("." + pattern)


def _date_from(metadata: dict[str, Any]) -> dt.date | None:
    for key in (
        "published_time",
        "publishedTime",
        "dc_date",
        "dc_terms_created",
        "dc_date_created",
        "article:published_time",
        "modified_time",
    ):
        value = metadata.get(key)
        if isinstance(value, list):
            value = value[0] if value else None
        date = parse_date(value) if isinstance(value, str) else None
        if date is not None:
            return date
    return None


def check_address(url: str, allow_private: bool) -> str:
    """`url` rebuilt from its parsed parts (`public_address.canonical_url`: what Firecrawl is to be sent), or a
    `SourceError` when its host is not public or the URL is ambiguous (the page fetcher's address policy,
    `public_address`): Firecrawl, self-hosted above all, fetches whatever it is asked to, cloud metadata and inside
    services included."""
    try:
        public_address.check_url(url, allow_private)
        return public_address.canonical_url(url)
    except public_address.RefusedAddress as exc:
        raise SourceError(str(exc)) from None


def firecrawl_endpoint(api_key: Any, api_url: str | None, fallback_key: Any = None) -> tuple[str | None, str | None]:
    """(key, URL) from a component's `api_key` (a `Secret` or None), else `fallback_key` (the settings'
    FIRECRAWL_API_KEY, a `SecretStr`, when it was written in `.env`), and `api_url`; None where none gives one."""
    key = api_key.resolve_value() if api_key else None
    if not key and fallback_key is not None:
        key = fallback_key.get_secret_value()
    return key or None, api_url or None


def _raise_for(exc: Exception, action: str) -> None:
    """Re-raise a client exception as the contract's error; returns only if `exc` is not one it knows."""
    from firecrawl.v2.utils.error_handler import FirecrawlError

    if isinstance(exc, requests.exceptions.JSONDecodeError):
        raise RetryableError(f"Firecrawl answered the {action} with a malformed body (not JSON)") from exc
    if isinstance(exc, requests.exceptions.Timeout):
        raise RetryableError(f"Firecrawl did not answer the {action} in time", kind="timeout") from exc
    if isinstance(exc, requests.exceptions.ConnectionError):
        raise connection_fault(exc, "Firecrawl") from exc
    if isinstance(exc, FirecrawlError):
        code = exc.status_code
        response = exc.response
        retry_after = parse_retry_after(response.headers.get("Retry-After")) if response is not None else None
        if code == 429:
            message = f"Firecrawl rate-limited the {action} (HTTP 429)"
            raise RetryableError(message, retry_after, "rate_limited") from exc
        if code is not None and code >= 500:
            raise RetryableError(f"Firecrawl failed the {action} (HTTP {code})", retry_after) from exc
        if code in (401, 403) and type(exc).__name__ in ("UnauthorizedError", "FirecrawlError"):
            raise SourceError(f"Firecrawl refused the API key (HTTP {code}): check FIRECRAWL_API_KEY") from exc
        if code == 402:
            raise SourceError("Firecrawl says the account is out of credits (HTTP 402)") from exc
        reason = cut(str(exc).split(" - ")[0], 200)
        raise SourceError(f"Firecrawl could not {action}: {reason}") from exc


def api_origin(api_url: str) -> str:
    """`api_url` without a trailing slash when it is an absolute http(s) URL with a host and nothing after its path
    (no query, fragment or credentials); otherwise a `SourceError`. Every request goes to this origin."""
    parts = urlsplit(api_url)
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
    ):
        raise SourceError("FIRECRAWL_API_URL must be an http(s) URL like https://api.firecrawl.dev")
    return api_url.rstrip("/")


def pinned_url(api_url: str, endpoint: str) -> str:
    """The URL of `endpoint` on the API: a path is resolved against `api_url`; an absolute URL (a next page the API
    names) is kept only on the API's own origin (scheme, host and port), so the key is never sent elsewhere."""
    target = urlsplit(endpoint)
    if target.scheme or target.netloc:
        base = urlsplit(api_url)
        if (target.scheme, target.hostname, target.port) != (base.scheme, base.hostname, base.port):
            raise SourceError("Firecrawl named a URL outside its API's origin; it was not requested")
        return endpoint
    return urljoin(api_url + "/", endpoint)


def _not_redirected(response: requests.Response) -> requests.Response:
    """`response`, unless it redirects: a redirect is not followed (it could point anywhere, an inside service
    included), but refused in one sentence."""
    if response.is_redirect:
        response.close()
        raise SourceError(
            f"Firecrawl answered with a redirect (HTTP {response.status_code}); it was not followed: "
            "check FIRECRAWL_API_URL"
        )
    return response


@functools.cache
def _capped_http_client_class() -> type:
    from firecrawl.v2.utils.http_client import HttpClient

    class CappedHttpClient(HttpClient):
        """firecrawl-py's HTTP client (the client's public `http_client`) sending through a session whose adapter caps
        every answer (`CappedAdapter`), to the API's origin only (`pinned_url`); one attempt per call (the guard
        retries)."""

        def __init__(
            self, api_key: str | None, api_url: str, timeout: float, origin: str | None, max_bytes: int
        ) -> None:
            super().__init__(api_key, api_url, timeout=timeout, max_retries=1, backoff_factor=0.0, origin=origin)
            self.session = capped_session(max_bytes, "Firecrawl")

        def headers(self) -> dict[str, str]:
            """JSON, and the key when there is one."""
            headers = {"Content-Type": "application/json"}
            if self.api_key:
                headers["Authorization"] = f"Bearer {self.api_key}"
            return headers

        def post(
            self,
            endpoint: str,
            data: dict[str, Any],
            headers: dict[str, str] | None = None,
            timeout: float | None = None,
            **_: Any,
        ) -> requests.Response:
            payload = {**data, "origin": data.get("origin") or self.origin}
            return _not_redirected(
                self.session.post(
                    pinned_url(self.api_url, endpoint),
                    headers=headers or self.headers(),
                    json=payload,
                    timeout=timeout or self.timeout,
                    allow_redirects=False,
                )
            )

        def get(
            self, endpoint: str, headers: dict[str, str] | None = None, timeout: float | None = None, **_: Any
        ) -> requests.Response:
            return _not_redirected(
                self.session.get(
                    pinned_url(self.api_url, endpoint),
                    headers=headers or self.headers(),
                    timeout=timeout or self.timeout,
                    allow_redirects=False,
                )
            )

    return CappedHttpClient


def capped_http_client(original: Any, max_bytes: int) -> Any:
    """An HTTP client like firecrawl-py's `original` (its key, API URL, timeout and attribution) whose answers are
    capped at `max_bytes` each."""
    return _capped_http_client_class()(original.api_key, original.api_url, original.timeout, original.origin, max_bytes)


class FirecrawlAccess:
    """Firecrawl v2 search and scrape with the contract's errors.

    Usage:
    ```python
    access = FirecrawlAccess(api_key="fc-...", api_url=None, request_timeout_s=5)
    hits = access.search("retrieval augmented generation", limit=5)
    page = access.scrape(hits[0].url, timeout_s=5)
    ```
    """

    def __init__(self, api_key: str | None, api_url: str | None, request_timeout_s: float, max_bytes: int) -> None:
        self.api_url = api_origin(api_url or HOSTED_API_URL)
        if not api_key and self.api_url == HOSTED_API_URL:
            raise SourceError(NOT_CONFIGURED)
        global _SCRAPE_RESUMES
        from firecrawl.v2 import FirecrawlClient

        # The v2 client (what `firecrawl.Firecrawl` delegates search and scrape to). max_retries=1: one attempt per
        # call; the guard owns retries so they respect the time budget.
        self._client = FirecrawlClient(
            api_key=api_key or None, api_url=self.api_url, timeout=request_timeout_s, max_retries=1, backoff_factor=0.0
        )
        # Every answer is read through the capped transport: an endless body stops at the limit or the deadline. The
        # client takes no session; its public HTTP client is replaced by one that reads through the cap.
        self._client.http_client = capped_http_client(self._client.http_client, max_bytes)
        self.request_timeout_s = request_timeout_s
        if _SCRAPE_RESUMES is None:
            _SCRAPE_RESUMES = "auto_resume" in inspect.signature(self._client.scrape).parameters

    @staticmethod
    def _request(action: str, refused: str, call: Callable[[], Any]) -> Any:
        """`call()` (one request of the client) with its errors translated into the contract's; `refused` begins
        the message for a request the client refuses as invalid."""
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - translated into the contract's errors
            _raise_for(exc, action)
            if isinstance(exc, ValueError):
                raise SourceError(f"{refused}: {exc}") from exc
            raise

    def search(
        self,
        query: str,
        limit: int,
        include_domains: list[str] | None = None,
        exclude_domains: list[str] | None = None,
    ) -> list[SearchHit]:
        """Web results for `query` (URLs, titles, snippets), best first."""
        data = self._request(
            "search",
            "the web search request is invalid",
            lambda: self._client.search(
                query,
                limit=limit,
                include_domains=include_domains or None,
                exclude_domains=None if include_domains else (exclude_domains or None),
                timeout=int(self.request_timeout_s * 1000),
            ),
        )
        hits = []
        for item in data.web or []:
            url = getattr(item, "url", None)
            metadata = getattr(item, "metadata", None)
            if url is None and metadata is not None:
                url = metadata.url or metadata.source_url
            if not url:
                continue
            hits.append(
                SearchHit(
                    url=url,
                    title=getattr(item, "title", None) or (metadata.title if metadata is not None else "") or "",
                    description=getattr(item, "description", None) or "",
                    position=getattr(item, "position", None),
                )
            )
        return hits

    def scrape(self, url: str, timeout_s: float, languages: list[str] | None = None) -> FetchedPage:
        """The page at `url` as Markdown (main content only)."""
        kwargs: dict[str, Any] = {"formats": ["markdown"], "only_main_content": True, "timeout": int(timeout_s * 1000)}
        if languages:
            from firecrawl.v2.types import Location

            kwargs["location"] = Location(languages=list(languages))
        if _SCRAPE_RESUMES:
            # Resuming a still-processing page sleeps 5 s or more: longer than a page's whole budget.
            kwargs["auto_resume"] = False
        document = self._request("scrape", f"cannot scrape {url!r}", lambda: self._client.scrape(url, **kwargs))
        metadata = document.metadata_typed
        return FetchedPage(
            url=metadata.url or metadata.source_url or url,
            markdown=document.markdown or "",
            title=(metadata.title or metadata.og_title or "").strip(),
            fetched_at=utc_now(),
            language=metadata.language if isinstance(metadata.language, str) else None,
            content_type=metadata.content_type,
            published=_date_from(metadata.model_dump()),
            status_code=metadata.status_code,
            description=(metadata.description or "").strip(),
        )
