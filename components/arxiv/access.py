"""Talking to arXiv's Atom API: the query it understands, papers, PDFs, and failures.

The API URL comes from the settings (`ARXIV_API_URL`), so a mirror or a contract server can stand in. Requests go
through the product's capped session with a timeout each, and the Atom feed is read with lxml (as arXiv's own Python
client reads it); there are no retries here: the guard retries within budget and spaces requests
`ARXIV_MIN_INTERVAL_S` apart (arXiv asks for one request every three seconds). Failures leave as the tool contract's
errors with one-sentence messages.
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
from components.tools import public_address
from components.web.chunking import query_terms
from components.web.faults import connection_fault

_FIELD_QUERY = re.compile(r"\b(ti|au|abs|co|jr|cat|rn|id|all|submittedDate):", re.IGNORECASE)
_CATEGORY = re.compile(r"^[a-z\-]+(\.[A-Za-z\-]+)?$")
_NEW_ID = re.compile(r"^\d{4}\.\d{4,5}(v\d+)?$")
_OLD_ID = re.compile(r"^[a-z\-]+(\.[A-Z]{2})?/\d{7}(v\d+)?$")
MAX_PDF_BYTES = 30 * 1024 * 1024
UPSTREAM_MAX_BYTES: int = default_setting("upstream_max_bytes")
MIN_INTERVAL_S: float = default_setting("arxiv_min_interval_s")


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


_ATOM = "{http://www.w3.org/2005/Atom}"
_NAMESPACES = {
    "atom": "http://www.w3.org/2005/Atom",
    "arxiv": "http://arxiv.org/schemas/atom",
    "opensearch": "http://a9.com/-/spec/opensearch/1.1/",
}
_USER_AGENT = "research-assistant (arXiv search)"


@dataclass
class _Page:
    """One page of an arXiv feed: its entries and how many results the whole query has."""

    entries: list[Any]
    total: int


def _error_summary(response: requests.Response | None) -> str | None:
    if response is None:
        return None
    match = re.search(rb"<summary>(.*?)</summary>", response.content or b"", re.DOTALL)
    return match.group(1).decode("utf-8", "replace").strip() if match else None


def _read_feed(content: bytes) -> _Page:
    """The entries of an arXiv Atom feed (lxml, without entities or network); `RetryableError` when the answer is not
    a well-formed Atom feed."""
    from lxml import etree

    try:
        root = etree.fromstring(content, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as exc:
        raise RetryableError("arXiv answered with a malformed feed") from exc
    if root is None or root.tag != f"{_ATOM}feed":
        raise RetryableError("arXiv answered with something that is not an Atom feed")
    total = (root.findtext("opensearch:totalResults", "", _NAMESPACES) or "").strip()
    return _Page(list(root.iterfind("atom:entry", _NAMESPACES)), int(total) if total.isdigit() else 0)


def _timestamp(text: str | None) -> dt.date | None:
    """The date of an Atom timestamp (RFC 3339, `Z` or an offset), in UTC; None when missing or unreadable."""
    if not text:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(dt.UTC)
    return moment.date()


def _to_paper(entry: Any) -> ArxivPaper | None:
    """The paper an Atom `<entry>` describes; None for an entry without an id or its dates (as arXiv's own client
    skips them)."""

    def text(path: str) -> str | None:
        found = entry.find(path, _NAMESPACES)
        return found.text if found is not None and found.text is not None else None

    entry_id = text("atom:id")
    published, updated = _timestamp(text("atom:published")), _timestamp(text("atom:updated"))
    if not entry_id or published is None or updated is None:
        return None
    short_id = entry_id.split("arxiv.org/abs/")[-1]
    paper_id, version = re.fullmatch(r"(.*?)(v\d+)?", short_id, re.DOTALL).groups()
    categories = [term for term in (node.get("term") for node in entry.iterfind("atom:category", _NAMESPACES)) if term]
    primary = entry.find("arxiv:primary_category", _NAMESPACES)
    pdf_links = [
        link.get("href")
        for link in entry.iterfind("atom:link", _NAMESPACES)
        if link.get("title") == "pdf" and link.get("href")
    ]
    return ArxivPaper(
        paper_id=paper_id,
        version=version,
        title=" ".join((text("atom:title") or "").split()),
        authors=[
            node.findtext("atom:name", "", _NAMESPACES) or "" for node in entry.iterfind("atom:author", _NAMESPACES)
        ],
        abstract=" ".join((text("atom:summary") or "").split()),
        published=published,
        updated=updated,
        categories=categories,
        primary_category=(primary.get("term") if primary is not None else "") or (categories[0] if categories else ""),
        arxiv_url=f"https://arxiv.org/abs/{paper_id}",
        pdf_url=pdf_links[0] if pdf_links else None,
        doi=text("arxiv:doi") or None,
        journal_ref=text("arxiv:journal_ref") or None,
        comment=text("arxiv:comment") or None,
    )


class ArxivAccess:
    """Searches and fetches papers from arXiv's Atom API at the configured URL.

    Every page is one GET through the product's capped session (a timeout on every request; an endless answer stops
    at the byte limit or the deadline); the feed is read with lxml. Pages after the first are spaced
    `page_interval_s` apart; there are no retries here (the guard retries within budget).

    Usage:
    ```python
    access = ArxivAccess("https://export.arxiv.org/api/query", request_timeout_s=5)
    papers = access.search("all:transformer AND cat:cs.CL", max_results=5, sort_by="relevance")
    ```
    """

    def __init__(
        self,
        api_url: str,
        request_timeout_s: float,
        page_interval_s: float = MIN_INTERVAL_S,
        max_bytes: int = UPSTREAM_MAX_BYTES,
        page_size: int = 100,
    ) -> None:
        if not api_url or not api_url.startswith(("http://", "https://")):
            raise SourceError("ARXIV_API_URL must be an http(s) URL")
        self.api_url = api_url
        self.request_timeout_s = request_timeout_s
        self.page_interval_s = page_interval_s
        self.max_bytes = max_bytes
        self.page_size = max(1, page_size)

    def _page(self, session: requests.Session, arguments: dict[str, str], first: bool) -> _Page:
        """One page of the query; the API's failures as the contract's errors."""
        try:
            response = session.get(
                self.api_url.split("?")[0],
                params=arguments,
                timeout=self.request_timeout_s,
                headers={"User-Agent": _USER_AGENT},
            )
        except requests.exceptions.Timeout as exc:
            raise RetryableError("arXiv did not answer in time", kind="timeout") from exc
        except requests.exceptions.ConnectionError as exc:
            raise connection_fault(exc, "the arXiv API") from exc
        status = response.status_code
        if status != 200:
            retry_after = parse_retry_after(response.headers.get("Retry-After"))
            if status in (429, 503):
                raise RetryableError(f"arXiv asked to slow down (HTTP {status})", retry_after, "rate_limited")
            if status >= 500:
                raise RetryableError(f"arXiv failed the request (HTTP {status})", retry_after)
            detail = _error_summary(response)
            raise SourceError(f"arXiv rejected the request (HTTP {status})" + (f": {detail}" if detail else ""))
        page = _read_feed(response.content)
        if not page.entries and not first:
            raise RetryableError("arXiv returned an unexpectedly empty page")
        return page

    def _run(self, arguments: dict[str, str], max_results: int) -> list[ArxivPaper]:
        """Up to `max_results` papers of the query, a page of up to `page_size` at a time."""
        page_size = min(max_results, self.page_size)
        papers: list[ArxivPaper] = []
        with capped_session(self.max_bytes, "the arXiv API") as session:
            offset, first = 0, True
            while len(papers) < max_results:
                if not first:
                    time.sleep(self.page_interval_s)  # arXiv asks for a pause between requests
                size = min(page_size, max_results - len(papers))
                page = self._page(session, {**arguments, "start": str(offset), "max_results": str(size)}, first)
                for entry in page.entries:
                    if "/api/errors" in (entry.findtext("atom:id", "", _NAMESPACES) or ""):
                        summary = " ".join((entry.findtext("atom:summary", "", _NAMESPACES) or "").split())
                        raise SourceError(f"arXiv rejected the request: {summary}")
                    paper = _to_paper(entry)
                    if paper is not None:
                        papers.append(paper)
                offset += len(page.entries)
                first = False
                if not page.entries or offset >= page.total:
                    break
        return papers[:max_results]

    def search(self, search_query: str, max_results: int, sort_by: str = "relevance") -> list[ArxivPaper]:
        """Papers matching `search_query` (arXiv syntax), by relevance or newest submission first."""
        arguments = {
            "search_query": search_query,
            "id_list": "",
            "sortBy": "submittedDate" if sort_by == "date" else "relevance",
            "sortOrder": "descending",
        }
        return self._run(arguments, max_results)

    def fetch(self, paper_ids: list[str]) -> list[ArxivPaper]:
        """The papers with these identifiers (one request), in the order given."""
        ids = [normalise_id(paper_id) for paper_id in paper_ids]
        arguments = {"search_query": "", "id_list": ",".join(ids), "sortBy": "relevance", "sortOrder": "descending"}
        papers = self._run(arguments, len(ids))
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
        with (
            httpx.Client(timeout=timeout_s, transport=transport, follow_redirects=True, event_hooks=hooks) as client,
            client.stream("GET", pdf_url, headers={"User-Agent": "research-assistant (arXiv full text)"}) as response,
        ):
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
