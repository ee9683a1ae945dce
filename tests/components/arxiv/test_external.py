"""The arXiv source against the real arXiv API: runs only when RESEARCH_TEST_ARXIV_API_URL is set.

The suite points ARXIV_API_URL at a closed local port so no other test reaches the network; this one opts in
with its own variable (e.g. RESEARCH_TEST_ARXIV_API_URL=https://export.arxiv.org/api/query).
"""

from __future__ import annotations

import os

import pytest

from components.arxiv import ArxivSearch
from components.contracts import StatusKind

pytestmark = [
    pytest.mark.external,
    pytest.mark.skipif(
        not os.environ.get("RESEARCH_TEST_ARXIV_API_URL"), reason="RESEARCH_TEST_ARXIV_API_URL is not set"
    ),
]


class TestArxivSearchExternal:
    def test_a_real_search(self):
        result = ArxivSearch(num_results=3, timeout_s=20, api_url=os.environ["RESEARCH_TEST_ARXIV_API_URL"]).run(
            query='ti:"attention is all you need"'
        )
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        assert "1706.03762" in {doc.meta["paper_id"] for doc in result["documents"]}
