"""A Firecrawl v2 contract server: `POST /v2/search` and `POST /v2/scrape` with the documented response shapes.

Search answers `{"success": true, "data": {"web": [{url, title, description, position}]}, "creditsUsed": n}`,
adding `markdown` and `metadata` to each result when `scrapeOptions.formats` asks for markdown. Scrape answers
`{"success": true, "data": {"markdown": ..., "metadata": {title, description, language, sourceURL, url,
statusCode, contentType, scrapeId, ...}}}`. Errors are `{"success": false, "error": ...}` with the HTTP status
Firecrawl uses (401 bad key, 400 bad request, 429 rate limit, 500). Pages can be slowed one by one
(`slow_page`) and changed (`set_page`), so per-page timeouts and snapshots can be tested.

Use it as the `firecrawl_server` fixture (import it into a conftest), or serve it for manual runs with
`python -m tests.contract_servers.firecrawl`.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tests.contract_servers import ContractServer, Reply, contract_fixtures

DEFAULT_API_KEY = "fc-contract-test-key"

_STOPWORDS = frozenset(
    "a an and are as at be by for from how in is it of on or that the this to was what when where which who why with"
    " does do did can".split()
)


@dataclass
class Page:
    """One page the fake web holds."""

    url: str
    title: str
    markdown: str
    description: str = ""
    language: str = "en"
    published: str | None = None
    content_type: str = "text/html; charset=utf-8"
    status_code: int = 200
    delay_s: float = 0.0
    extra_metadata: dict[str, Any] = field(default_factory=dict)


def _pages() -> list[Page]:
    rag = (
        "# Retrieval-augmented generation\n\n"
        "Retrieval-augmented generation (RAG) combines a retriever with a language model. The retriever finds "
        "passages relevant to a question in a document collection, and the generator writes an answer conditioned "
        "on those passages, so the answer can cite its sources.\n\n"
        "## Why retrieval helps\n\n"
        "A language model's parameters hold what it saw in training and nothing newer. Retrieval brings in fresh "
        "and private documents at question time, reduces hallucinated facts and lets a reader check each claim "
        "against the passage it came from.\n\n"
        "## Dense and sparse retrievers\n\n"
        "Sparse retrievers such as BM25 score exact term overlap. Dense retrievers embed the question and the "
        "passages into one vector space and return the nearest neighbours by cosine similarity. Hybrid systems "
        "fuse both rankings, for example with reciprocal rank fusion.\n\n"
        "## Evaluation\n\n"
        "Retrieval is measured with recall and mean reciprocal rank over labelled questions; answers are measured "
        "for faithfulness to the retrieved passages and for correctness."
    )
    pgvector = (
        "# pgvector: vector similarity search for PostgreSQL\n\n"
        "pgvector is an open-source PostgreSQL extension that stores embeddings in a vector column and finds nearest "
        "neighbours with L2 distance, inner product or cosine distance.\n\n"
        "## Indexes\n\n"
        "Exact search scans every row. Approximate indexes trade a little recall for speed: HNSW builds a layered "
        "proximity graph and gives the best speed-recall trade-off, while IVFFlat clusters the vectors into lists "
        "and searches the closest lists.\n\n"
        "## Hybrid search\n\n"
        "Because the vectors live next to ordinary columns, one SQL query can combine full-text search, metadata "
        "filters and vector similarity, and a transaction can replace a document and its embeddings atomically."
    )
    long_sections = []
    for number, topic in enumerate(
        [
            "tokenisation",
            "attention",
            "positional encodings",
            "feed-forward layers",
            "layer normalisation",
            "training objectives",
            "scaling laws",
            "inference cost",
        ],
        start=1,
    ):
        long_sections.append(
            f"## {number}. {topic.capitalize()}\n\n"
            f"This section of the transformer survey covers {topic}. The transformer architecture processes a "
            f"sequence of tokens in parallel; its treatment of {topic} shapes both quality and cost. Researchers "
            f"compared many variants of {topic} across model sizes and datasets, reporting perplexity, downstream "
            f"accuracy and wall-clock time. The consensus is that careful choices in {topic} matter most at small "
            f"scale and that their effect shrinks as models and data grow, though exceptions exist for long "
            f"contexts where memory use dominates."
        )
    transformer = "# A survey of transformer language models\n\n" + "\n\n".join(long_sections)
    return [
        Page(
            "https://en.example.org/wiki/Retrieval-augmented_generation",
            "Retrieval-augmented generation - Example Encyclopedia",
            rag,
            "An overview of retrieval-augmented generation (RAG) for language models.",
            published="2025-03-14T09:00:00Z",
        ),
        Page(
            "https://docs.vectors.example.com/pgvector/overview",
            "pgvector overview | Vector Docs",
            pgvector,
            "How pgvector stores embeddings in PostgreSQL and searches them with HNSW and IVFFlat indexes.",
        ),
        Page(
            "https://research.example.net/surveys/transformers",
            "A survey of transformer language models",
            transformer,
            "A long survey of the transformer architecture and its components.",
            published="2024-11-02",
        ),
        Page(
            "https://www.reddit.com/r/MachineLearning/comments/abc123/rag_vs_finetuning",
            "RAG vs fine-tuning? : r/MachineLearning",
            "# RAG vs fine-tuning?\n\nIs retrieval-augmented generation better than fine-tuning for company "
            "documents? In my experience retrieval wins when documents change often.",
            "A discussion thread about retrieval-augmented generation.",
        ),
        Page(
            "https://twitter.com/someone/status/1234567890",
            "Someone on X: retrieval-augmented generation is all you need",
            "Retrieval-augmented generation is all you need. Change my mind.",
            "A post about retrieval-augmented generation.",
        ),
        Page(
            "https://de.example.org/wiki/Retrieval-Augmented_Generation",
            "Retrieval-Augmented Generation - Beispiel-Enzyklopädie",
            "# Retrieval-Augmented Generation\n\nRetrieval-Augmented Generation verbindet ein Suchsystem mit einem "
            "Sprachmodell. Das Suchsystem findet passende Textstellen, das Sprachmodell formuliert daraus eine "
            "Antwort mit Quellenangaben.",
            "Ein Überblick über Retrieval-Augmented Generation.",
            language="de",
        ),
        Page(
            "https://blog.example.io/posts/hybrid-retrieval-in-practice",
            "Hybrid retrieval in practice",
            "# Hybrid retrieval in practice\n\nWe run BM25 and a dense retriever side by side and fuse the two "
            "rankings with reciprocal rank fusion. On our support questions, hybrid retrieval raised recall at ten "
            "from 0.71 to 0.83 compared with dense retrieval alone, and the generator's answers cited the right "
            "passage more often.\n\nThe cost is a second index and a little latency; both were worth it for us.",
            "Notes from running hybrid (BM25 + dense) retrieval for retrieval-augmented generation.",
            published="2025-06-01",
        ),
    ]


def _terms(text: str) -> list[str]:
    return [term for term in re.findall(r"[a-z0-9]+", text.lower()) if term not in _STOPWORDS and len(term) > 1]


def _domain_matches(host: str, domains: list[str]) -> bool:
    host = host.lower()
    for domain in domains:
        domain = domain.lower().lstrip(".")
        if host == domain or host.endswith("." + domain):
            return True
    return False


class FirecrawlContractServer(ContractServer):
    """Answers Firecrawl v2 search and scrape over a small fake web; see the module docstring."""

    name = "firecrawl"
    malformed_body = b"<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
    malformed_content_type = "text/html"

    def __init__(self, port: int = 0, api_key: str | None = DEFAULT_API_KEY) -> None:
        super().__init__(port, api_key)
        self._pages: dict[str, Page] = {}
        self.reset_pages()

    @property
    def url(self) -> str:
        """The API URL to give the client (`FIRECRAWL_API_URL`)."""
        return self.base_url

    def settings_lines(self) -> list[str]:
        return [f"FIRECRAWL_API_URL={self.url}"] + ([f"FIRECRAWL_API_KEY={self.api_key}"] if self.api_key else [])

    def reset(self) -> None:
        super().reset()
        self.reset_pages()

    def reset_pages(self) -> None:
        with self.data_lock:
            self._pages = {page.url: page for page in _pages()}

    def pages(self) -> list[Page]:
        with self.data_lock:
            return list(self._pages.values())

    def set_page(self, url: str, **changes: Any) -> Page:
        """Add a page or change one (markdown, title, language, delay_s, status_code, ...)."""
        with self.data_lock:
            page = self._pages.get(url) or Page(url, changes.pop("title", url), changes.pop("markdown", ""))
            for key, value in changes.items():
                setattr(page, key, value)
            self._pages[url] = page
            return page

    def slow_page(self, url: str, delay_s: float) -> None:
        """Make scraping one page take `delay_s` seconds."""
        self.set_page(url, delay_s=delay_s)

    # -- the API ------------------------------------------------------------------------------------------------

    def handle(self, method: str, path: str, query: str, body: bytes, headers: dict[str, str]) -> Reply:
        if not self.authorized(headers):
            return Reply(401, {"success": False, "error": "Unauthorized: Invalid token"})
        if method != "POST" or path not in ("/v2/search", "/v2/scrape"):
            return Reply(404, {"success": False, "error": f"Cannot {method} {path}"})
        try:
            request = json.loads(body or b"{}")
        except json.JSONDecodeError:
            return Reply(400, {"success": False, "error": "Bad Request", "details": "body is not JSON"})
        if path == "/v2/search":
            return self._search(request)
        return self._scrape(request)

    def _search(self, request: dict[str, Any]) -> Reply:
        query = str(request.get("query") or "").strip()
        if not query:
            return Reply(
                400, {"success": False, "error": "Bad Request", "details": [{"path": ["query"], "message": "Required"}]}
            )
        limit = int(request.get("limit") or 5)
        include = list(request.get("includeDomains") or [])
        exclude = list(request.get("excludeDomains") or [])
        wanted = _terms(query)
        scored: list[tuple[int, Page]] = []
        for page in self.pages():
            host = urlsplit(page.url).hostname or ""
            if include and not _domain_matches(host, include):
                continue
            if exclude and _domain_matches(host, exclude):
                continue
            text_terms = _terms(page.title + " " + page.description + " " + page.markdown)
            score = sum(text_terms.count(term) for term in set(wanted))
            if score:
                scored.append((score, page))
        scored.sort(key=lambda item: -item[0])
        formats = (request.get("scrapeOptions") or {}).get("formats") or []
        with_markdown = any(
            fmt == "markdown" or (isinstance(fmt, dict) and fmt.get("type") == "markdown") for fmt in formats
        )
        results = []
        for position, (_, page) in enumerate(scored[:limit], start=1):
            item: dict[str, Any] = {
                "url": page.url,
                "title": page.title,
                "description": page.description,
                "position": position,
            }
            if with_markdown:
                item["markdown"] = page.markdown
                item["metadata"] = self._metadata(page)
            results.append(item)
        return Reply(200, {"success": True, "data": {"web": results}, "creditsUsed": max(1, len(results))})

    def _scrape(self, request: dict[str, Any]) -> Reply:
        url = str(request.get("url") or "").strip()
        if not url:
            return Reply(
                400, {"success": False, "error": "Bad Request", "details": [{"path": ["url"], "message": "Required"}]}
            )
        with self.data_lock:
            page = self._pages.get(url)
        if page is None:
            host = urlsplit(url).hostname or ""
            if not host.endswith((".example.org", ".example.com", ".example.net", ".example.io")):
                return Reply(
                    200,
                    {
                        "success": False,
                        "code": "SCRAPE_DNS_RESOLUTION_ERROR",
                        "error": f"DNS resolution failed for hostname: {host}",
                    },
                )
            page = Page(
                url, "404 Not Found", "# Not Found\n\nThe requested URL was not found on this server.", status_code=404
            )
        if page.delay_s:
            self._released.wait(timeout=page.delay_s)
        return Reply(200, {"success": True, "data": {"markdown": page.markdown, "metadata": self._metadata(page)}})

    @staticmethod
    def _metadata(page: Page) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            "title": page.title,
            "description": page.description,
            "language": page.language,
            "sourceURL": page.url,
            "url": page.url,
            "statusCode": page.status_code,
            "contentType": page.content_type,
            "scrapeId": str(uuid.uuid4()),
            "proxyUsed": "basic",
            "cacheState": "miss",
            "creditsUsed": 1,
        }
        if page.published:
            metadata["publishedTime"] = page.published
        metadata.update(page.extra_metadata)
        return metadata

    def rate_limited_reply(self, headers: dict[str, str]) -> Reply:
        return Reply(
            429,
            {
                "success": False,
                "error": "Rate limit exceeded. Consumed (req/min): 11, Remaining "
                "(req/min): 0. Upgrade your plan or try again after 1 s.",
            },
            headers=headers,
        )

    def server_error_reply(self) -> Reply:
        return Reply(
            500,
            {
                "success": False,
                "error": "An unexpected error occurred. Please contact "
                "help@firecrawl.com for help. Your exception ID is abc123",
            },
        )


firecrawl_server_session, firecrawl_server = contract_fixtures(FirecrawlContractServer, "firecrawl")


if __name__ == "__main__":
    FirecrawlContractServer.serve_by_hand("Serve the Firecrawl contract server on 127.0.0.1.", 0, DEFAULT_API_KEY)
