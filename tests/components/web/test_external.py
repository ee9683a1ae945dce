"""The web source against the real Firecrawl service: runs only when FIRECRAWL_API_KEY is set."""

from __future__ import annotations

import os

import pytest

from components.contracts import StatusKind
from components.web import WebScrape, WebSearch

pytestmark = [
    pytest.mark.external,
    pytest.mark.skipif(not os.environ.get("FIRECRAWL_API_KEY"), reason="FIRECRAWL_API_KEY is not set"),
]


class TestWebSearchExternal:
    def test_a_real_search_returns_attributed_chunks(self, work_dir):
        result = WebSearch(num_results=3, timeout_s=20, snapshot_dir=str(work_dir)).run(query="Haystack deepset")
        assert result["status"].status in (StatusKind.SUCCESS, StatusKind.PARTIAL), result["status"].message
        assert result["documents"]
        assert all(doc.meta["page_url"].startswith("http") for doc in result["documents"])


class TestWebScrapeExternal:
    def test_a_real_page(self, work_dir):
        result = WebScrape(timeout_s=20, page_timeout_s=15, snapshot_dir=str(work_dir)).run(url="https://example.com")
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        assert "Example Domain" in " ".join(doc.content for doc in result["documents"])
