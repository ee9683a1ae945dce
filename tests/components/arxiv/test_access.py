"""`ArxivAccess` against the arXiv contract server: the Atom feed read into papers, paging, and a broken answer."""

from __future__ import annotations

import datetime as dt

import pytest

from components.arxiv.access import ArxivAccess
from components.resilience import RetryableError

QUERY = "all:retrieval OR all:language OR all:model OR all:graph"


def make(server, **kwargs) -> ArxivAccess:
    return ArxivAccess(server.url, request_timeout_s=5, page_interval_s=0.0, **kwargs)


def test_a_paper_is_read_from_its_feed_entry(arxiv_server):
    [paper] = make(arxiv_server).fetch(["arXiv:2005.11401"])
    assert (paper.paper_id, paper.version) == ("2005.11401", "v4")
    assert paper.title == "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks"
    assert paper.abstract.startswith("Summary for tests:") and "  " not in paper.abstract
    assert isinstance(paper.published, dt.date) and isinstance(paper.updated, dt.date)
    assert paper.published <= paper.updated
    assert paper.authors and all(paper.authors)
    assert paper.primary_category == paper.categories[0]
    assert paper.pdf_url == f"{arxiv_server.base_url}/pdf/2005.11401v4"
    assert paper.arxiv_url == "https://arxiv.org/abs/2005.11401"


def test_pages_are_read_until_the_results_run_out(arxiv_server):
    whole = make(arxiv_server).search(QUERY, max_results=7)
    assert len(whole) >= 3, "the query must match more papers than a page holds"
    arxiv_server.reset()
    paged = make(arxiv_server, page_size=2).search(QUERY, max_results=7)
    assert [paper.paper_id for paper in paged] == [paper.paper_id for paper in whole]
    starts = [int(arxiv_server.query_params(request["query"])["start"]) for request in arxiv_server.query_requests()]
    assert starts == list(range(0, len(whole), 2))


def test_a_malformed_feed_is_retryable(arxiv_server):
    arxiv_server.fail("malformed", path="/api/query")
    with pytest.raises(RetryableError, match="malformed feed"):
        make(arxiv_server).search(QUERY, max_results=3)
