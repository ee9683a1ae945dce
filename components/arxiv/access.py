"""Talking to arXiv's API through the `arxiv` library: the query it understands, papers, PDFs, and failures.

The API URL comes from the settings (`ARXIV_API_URL`), so a mirror or a contract server can stand in. The library's
own retries are off and every request gets a timeout: the guard retries within budget and spaces requests
`ARXIV_MIN_INTERVAL_S` apart (arXiv asks for one request every three seconds). Failures leave as the tool
contract's errors with one-sentence messages.
"""

from __future__ import annotations

import datetime as dt
import io
import re
import time
from dataclasses import dataclass
from typing import Any

import requests

from components.resilience import RetryableError, SourceError
from components.resilience.errors import parse_retry_after, raise_for_busy
from components.resilience.transport import BodyTooLarge, BodyTooSlow, CappedBody, CappedTransport, capped_session
from components.settings import default_setting
from components.text.dates import date_bounds
from components.web.chunking import query_terms
from components.web.faults import connection_fault

_FIELD_QUERY = re.compile(r"\b(ti|au|abs|co|jr|cat|rn|id|all|submittedDate):", re.IGNORECASE)
_CATEGORY = re.compile(r"^[a-z\-]+(\.[A-Za-z\-]+)?$")
_NEW_ID = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_OLD_ID = re.compile(r"^[a-z\-]+(\.[A-Z]{2})?/\d{7}(v\d+)?$")
MAX_PDF_BYTES = 30 * 1024 * 1024
UPSTREAM_MAX_BYTES: int = default_setting("upstream_max_bytes")


@dataclass
class ArxivPaper:
    """What the API says about one paper."""

    paper_id: str  # without version: 2005.11401, hep-ex/0307015
    version: str | None
    title: str
    authors: list[str]
    abstract: str
    published: dt.date | None
    updated: dt.date | None
    categories: list[str]
    primary_category: str
    arxiv_url: str
    pdf_url: str | None
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None

    def metadata(self) -> dict[str, Any]:
        """The `ArxivMetadata` fields (plus version, primary category, journal reference, comment)."""
        return {
            "paper_id": self.paper_id,
            "paper_title": self.title,
            "authors": list(self.authors),
            "publication_date": self.published.isoformat() if self.published else None,
            "arxiv_categories": list(self.categories),
            "arxiv_url": self.arxiv_url,
            "pdf_url": self.pdf_url,
            "abstract": self.abstract,
            "doi": self.doi,
            "version": self.version,
            "primary_category": self.primary_category,
            "journal_ref": self.journal_ref,
            "comment": self.comment,
            "updated_date": self.updated.isoformat() if self.updated else None,
        }


def normalise_id(value: str) -> str:
    """An arXiv identifier from an id, an `arXiv:` reference or an abs/pdf URL; `SourceError` if it is none."""
    text = (value or "").strip()
    text = re.sub(r"^(arxiv:)", "", text, flags=re.IGNORECASE)
    match = re.search(r"arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?/?$", text)
    if match:
        text = match.group(1)
    if not (_NEW_ID.match(text) or _OLD_ID.match(text)):
        raise SourceError(f"{value!r} is not an arXiv identifier (like 2005.11401 or hep-ex/0307015)")
    return text


def strip_version(paper_id: str) -> str:
    """An arXiv identifier without its version suffix (2005.11401v2 -> 2005.11401)."""
    return re.sub(r"v\d+$", "", paper_id)


def date_range(date_from: Any, date_to: Any, as_of: Any = None) -> tuple[dt.date | None, dt.date | None]:
    """The inclusive submission-date range to search (`date_bounds`: `as_of` caps `date_to`); errors are one
    sentence."""
    bounds = date_bounds(as_of, date_from, date_to, SourceError)
    return bounds.date_from, bounds.date_to


def build_query(query: str, categories: list[str] | None, start: dt.date | None, end: dt.date | None) -> str:
    """arXiv's `search_query` for a question: field syntax passes through; plain words become `all:` terms.

    Up to four content words must all match (AND); longer questions match any word (OR) and rely on arXiv's
    relevance order and the local model's re-scoring.
    """
    text = (query or "").strip()
    parts: list[str] = []
    if text:
        if _FIELD_QUERY.search(text):
            parts.append(f"({text})")
        else:
            terms = query_terms(text)[:10]
            if not terms:
                raise SourceError("the question has no words arXiv can search for")
            joiner = " AND " if len(terms) <= 4 else " OR "
            parts.append("(" + joiner.join(f"all:{term}" for term in terms) + ")")
    cats = [category.strip() for category in categories or [] if category.strip()]
    for category in cats:
        if not _CATEGORY.match(category):
            raise SourceError(f"{category!r} is not an arXiv category (like cs.CL or hep-ex)")
    if cats:
        parts.append("(" + " OR ".join(f"cat:{category}" for category in cats) + ")")
    if start or end:
        low = (start or dt.date(1991, 1, 1)).strftime("%Y%m%d") + "0000"
        high = (end or dt.date.today() + dt.timedelta(days=1)).strftime("%Y%m%d") + "2359"
        parts.append(f"submittedDate:[{low} TO {high}]")
    if not parts:
        raise SourceError("the question is empty")
    return " AND ".join(parts)


class _RecordingSession(requests.Session):
    """A session that gives every request a timeout and remembers the last response (the library drops it)."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__()
        self.timeout_s = timeout_s
        self.last: requests.Response | None = None

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> requests.Response:  # type: ignore[override]
        kwargs.setdefault("timeout", self.timeout_s)
        response = super().request(method, url, *args, **kwargs)
        self.last = response
        return response


def _error_summary(response: requests.Response | None) -> str | None:
    if response is None:
        return None
    match = re.search(rb"<summary>(.*?)</summary>", response.content or b"", re.DOTALL)
    return match.group(1).decode("utf-8", "replace").strip() if match else None


def _check_feed(response: requests.Response | None) -> None:
    """Raise when arXiv answered 200 with something that is not a well-formed Atom feed."""
    if response is None:
        return
    from lxml import etree

    try:
        root = etree.fromstring(response.content, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise RetryableError("arXiv answered with a malformed feed") from exc
    if root is None or root.tag != "{http://www.w3.org/2005/Atom}feed":
        raise RetryableError("arXiv answered with something that is not an Atom feed")


def _to_paper(result: Any) -> ArxivPaper:
    paper_id, version = re.fullmatch(r"(.*?)(v\d+)?", result.get_short_id(), re.DOTALL).groups()
    return ArxivPaper(
        paper_id=paper_id,
        version=version,
        title=" ".join((result.title or "").split()),
        authors=[author.name for author in result.authors],
        abstract=" ".join((result.summary or "").split()),
        published=result.published.date() if result.published and result.published.year > 1 else None,
        updated=result.updated.date() if result.updated and result.updated.year > 1 else None,
        categories=list(result.categories),
        primary_category=result.primary_category or (result.categories[0] if result.categories else ""),
        arxiv_url=f"https://arxiv.org/abs/{paper_id}",
        pdf_url=result.pdf_url,
        doi=result.doi or None,
        journal_ref=result.journal_ref or None,
        comment=result.comment or None,
    )


class ArxivAccess:
    """Searches and fetches papers through the `arxiv` library against the configured API URL.

    Usage:
    ```python
    access = ArxivAccess("https://export.arxiv.org/api/query", request_timeout_s=5)
    papers = access.search("all:transformer AND cat:cs.CL", max_results=5, sort_by="relevance")
    ```
    """

    def __init__(self, api_url: str, request_timeout_s: float, page_interval_s: float = 3.0,
                 max_bytes: int = UPSTREAM_MAX_BYTES) -> None:
        if not api_url or not api_url.startswith(("http://", "https://")):
            raise SourceError("ARXIV_API_URL must be an http(s) URL")
        self.api_url = api_url
        self.request_timeout_s = request_timeout_s
        self.page_interval_s = page_interval_s
        self.max_bytes = max_bytes

    def _run(self, search: Any) -> list[ArxivPaper]:
        import arxiv

        # One page per call in practice; a longer id list pages, and the library spaces those pages itself.
        client = arxiv.Client(page_size=max(1, min(search.max_results or 50, 100)),
                              delay_seconds=self.page_interval_s, num_retries=0)
        client.query_url_format = self.api_url.split("?")[0] + "?{}"
        # Every answer is read through the capped transport: an endless feed stops at the limit or the deadline.
        session = capped_session(self.max_bytes, "the arXiv API", _RecordingSession(self.request_timeout_s))
        client._session = session  # the library has no timeout option; this session adds one
        try:
            results = list(client.results(search))
        except arxiv.HTTPError as exc:
            headers = session.last.headers if session.last is not None else {}
            retry_after = parse_retry_after(headers.get("Retry-After"))
            if exc.status == 429 or exc.status == 503:
                raise RetryableError(f"arXiv asked to slow down (HTTP {exc.status})", retry_after,
                                     "rate_limited") from exc
            if exc.status >= 500:
                raise RetryableError(f"arXiv failed the request (HTTP {exc.status})", retry_after) from exc
            detail = _error_summary(session.last)
            raise SourceError(f"arXiv rejected the request (HTTP {exc.status})" + (f": {detail}" if detail else "")) \
                from exc
        except arxiv.UnexpectedEmptyPageError as exc:
            raise RetryableError("arXiv returned an unexpectedly empty page") from exc
        except requests.exceptions.Timeout as exc:
            raise RetryableError("arXiv did not answer in time", kind="timeout") from exc
        except requests.exceptions.ConnectionError as exc:
            raise connection_fault(exc, "the arXiv API") from exc
        _check_feed(session.last)
        papers = []
        for result in results:
            if "/api/errors" in (result.entry_id or ""):
                raise SourceError(f"arXiv rejected the request: {' '.join((result.summary or '').split())}")
            papers.append(_to_paper(result))
        return papers

    def search(self, search_query: str, max_results: int, sort_by: str = "relevance") -> list[ArxivPaper]:
        """Papers matching `search_query` (arXiv syntax), by relevance or newest submission first."""
        import arxiv

        criterion = arxiv.SortCriterion.SubmittedDate if sort_by == "date" else arxiv.SortCriterion.Relevance
        return self._run(arxiv.Search(query=search_query, max_results=max_results, sort_by=criterion,
                                      sort_order=arxiv.SortOrder.Descending))

    def fetch(self, paper_ids: list[str]) -> list[ArxivPaper]:
        """The papers with these identifiers (one request), in the order given."""
        import arxiv

        ids = [normalise_id(paper_id) for paper_id in paper_ids]
        papers = self._run(arxiv.Search(id_list=ids, max_results=len(ids)))
        order = {strip_version(paper_id): index for index, paper_id in enumerate(ids)}
        return sorted(papers, key=lambda paper: order.get(paper.paper_id, len(order)))


def pdf_text(pdf_url: str, timeout_s: float, *, allow_private: bool = False) -> str:
    """The text of the PDF at `pdf_url` (pypdf), downloaded within `timeout_s` in all (not per read: a server that
    sends a few bytes at a time cannot hold the caller past it); errors as the contract's errors.

    The link comes from the feed, so it is checked like every URL the product fetches (`public_address.check_url`):
    before the first request and before every redirect hop, a host that is not public is refused with one sentence
    (`SourceError`) unless `allow_private` (ALLOW_PRIVATE_ADDRESSES) is set."""
    import httpx
    import pypdf

    from components.tools import public_address

    late = RetryableError(f"the PDF did not arrive within {timeout_s:g} s", kind="timeout")
    deadline = time.monotonic() + timeout_s

    def check(url: str) -> None:
        try:
            public_address.check_url(url, allow_private)
        except public_address.RefusedAddress as exc:
            raise SourceError(f"the PDF link was refused: {str(exc).rstrip('.')}") from None

    def before_each_request(request: httpx.Request) -> None:
        """Each request (a redirect is a new one) is checked against the address policy and gets what is left of
        the download's time, not `timeout_s` anew."""
        check(str(request.url))
        left = deadline - time.monotonic()
        if left <= 0:
            raise late
        request.extensions["timeout"] = httpx.Timeout(left).as_dict()

    check(pdf_url)  # before httpx reads it: a link it cannot parse is refused in the same words
    # The capped transport stops reading at the byte limit or at the deadline (the request's time, or the question's).
    transport = CappedTransport(MAX_PDF_BYTES, "the PDF server")
    hooks = {"request": [before_each_request]}
    try:
        with httpx.Client(
            timeout=timeout_s, transport=transport, follow_redirects=True, event_hooks=hooks
        ) as client, client.stream(
            "GET", pdf_url, headers={"User-Agent": "research-assistant (arXiv full text)"}
        ) as response:
            raise_for_busy(response.status_code, response.headers, "the PDF server")
            if response.status_code != 200:
                raise SourceError(f"the PDF is not available (HTTP {response.status_code})")
            # The cap again on the decoded bytes: a server may compress the body though it was asked not to.
            body = CappedBody(response.iter_bytes(), MAX_PDF_BYTES)
            data = b"".join(body)
            if body.cut:
                raise BodyTooLarge("the PDF is larger than its limit")
    except BodyTooLarge as exc:
        raise SourceError("the PDF is larger than 30 MB") from exc
    except (BodyTooSlow, httpx.TimeoutException) as exc:
        raise late from exc
    except httpx.TransportError as exc:
        raise RetryableError("cannot reach the PDF server: the connection dropped", kind="connection") from exc
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        text = "\n\n".join((page.extract_text() or "") for page in reader.pages)
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on broken files
        raise SourceError(f"the PDF cannot be read: {type(exc).__name__}") from exc
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    if not text:
        raise SourceError("the PDF has no extractable text")
    return text
