"""`ArxivSearch` through arXiv's Atom API (the product's capped session, lxml) against the arXiv contract server,
with the real model."""

from __future__ import annotations

import time

import pytest

from components.arxiv import ArxivSearch
from components.contracts import ArxivMetadata, SourceType, StatusKind, document_to_chunk
from tests.contract_servers import free_port

QUESTION = "retrieval augmented generation"


def make(server, **kwargs) -> ArxivSearch:
    kwargs.setdefault("timeout_s", 2.0)
    kwargs.setdefault("retries", 1)
    kwargs.setdefault("min_interval_s", 0.0)
    kwargs.setdefault("allow_private_addresses", True)  # the contract server's PDF links name 127.0.0.1
    component = ArxivSearch(api_url=server.url, **kwargs)
    component.warm_up()
    return component


class TestArxivSearch:
    def test_to_dict_from_dict(self):
        component = ArxivSearch(
            num_results=7,
            sort_by="date",
            categories=["cs.CL"],
            date_from="2020-01-01",
            full_text=True,
            min_interval_s=3.0,
            api_url="http://127.0.0.1:9/api/query",
        )
        restored = ArxivSearch.from_dict(component.to_dict())
        assert restored.to_dict() == component.to_dict()
        assert (restored.sort_by, restored.categories, restored.full_text) == ("date", ["cs.CL"], True)

    @pytest.mark.integration
    def test_run_returns_attributed_abstract_chunks(self, arxiv_server):
        result = make(arxiv_server).run(query=QUESTION)
        status, documents = result["status"], result["documents"]
        assert status.status is StatusKind.SUCCESS, status.message
        assert {doc.meta["paper_id"] for doc in documents} == {"2005.11401", "2312.10997"}
        assert [doc.score for doc in documents] == sorted((doc.score for doc in documents), reverse=True)
        rag = next(doc for doc in documents if doc.meta["paper_id"] == "2005.11401")
        chunk = document_to_chunk(rag)
        assert chunk.source_type is SourceType.ARXIV
        meta = ArxivMetadata.model_validate(chunk.metadata)
        assert meta.paper_title == "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks"
        assert meta.authors[:2] == ["Patrick Lewis", "Ethan Perez"]
        assert meta.publication_date == "2020-05-22"
        assert meta.arxiv_categories == ["cs.CL", "cs.LG"]
        assert meta.arxiv_url == chunk.source_url == "https://arxiv.org/abs/2005.11401"
        assert meta.pdf_url == f"{arxiv_server.base_url}/pdf/2005.11401v4"
        assert chunk.text == meta.abstract and chunk.metadata["text_source"] == "abstract"
        assert chunk.metadata["version"] == "v4"
        assert str(chunk.source_date) == "2020-05-22"
        assert chunk.score_kind.value == "cosine" and 0 < chunk.semantic_relevance <= 1
        dpr = make(arxiv_server).run(query="dense passage retrieval")["documents"][0]
        assert dpr.meta["doi"] == "10.18653/v1/2020.emnlp-main.550"

    @pytest.mark.integration
    def test_filters_and_order(self, arxiv_server):
        component = make(arxiv_server, num_results=10)
        by_date = component.run(query="retrieval", sort_by="date")
        assert by_date["status"].ok
        query = arxiv_server.query_requests()[-1]["query"]
        assert "sortBy=submittedDate" in query and "sortOrder=descending" in query
        dated = component.run(query="retrieval", date_from="2020-01-01", date_to="2020-12-31")
        assert {doc.meta["paper_id"] for doc in dated["documents"]} == {"2005.11401", "2004.04906"}
        assert "submittedDate%3A%5B202001010000+TO+202012312359%5D" in arxiv_server.query_requests()[-1]["query"]
        as_of = component.run(query="retrieval", as_of="2020-04-30")
        assert {doc.meta["paper_id"] for doc in as_of["documents"]} == {"2004.04906"}
        ir = component.run(query="nearest neighbour search", categories=["cs.IR"])
        assert {doc.meta["paper_id"] for doc in ir["documents"]} == {"1603.09320"}
        from_filters = component.run(query="nearest neighbour search", filters={"arxiv_categories": "cs.IR"})
        assert {doc.meta["paper_id"] for doc in from_filters["documents"]} == {"1603.09320"}
        fielded = component.run(query='ti:"attention is all you need"')
        assert [doc.meta["paper_id"] for doc in fielded["documents"]] == ["1706.03762"]
        nothing = component.run(query="quantum gravity", date_to="2001-01-01")
        assert nothing["status"].status is StatusKind.SUCCESS and nothing["documents"] == []

    @pytest.mark.integration
    def test_full_text_from_the_pdf(self, arxiv_server):
        result = make(arxiv_server, timeout_s=4.0).run(
            query="dense index generator", full_text=True, categories=["cs.CL"], date_to="2020-12-31"
        )
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        rag = [doc for doc in result["documents"] if doc.meta["paper_id"] == "2005.11401"]
        assert rag and rag[0].meta["text_source"] == "full_text"
        assert "marginalises over them" in " ".join(doc.content for doc in rag)
        assert any(r["path"].startswith("/pdf/2005.11401") for r in arxiv_server.requests)

    @pytest.mark.integration
    def test_the_abstract_stands_in_when_a_pdf_fails(self, arxiv_server):
        arxiv_server.fail("500", path="/pdf/2005.11401")
        result = make(arxiv_server, timeout_s=4.0).run(query=QUESTION, full_text=True)
        assert result["status"].status is StatusKind.PARTIAL
        assert "2005.11401" in result["status"].message and "used the abstract" in result["status"].message
        rag = next(doc for doc in result["documents"] if doc.meta["paper_id"] == "2005.11401")
        assert rag.meta["text_source"] == "abstract"
        survey = next(doc for doc in result["documents"] if doc.meta["paper_id"] == "2312.10997")
        assert survey.meta["text_source"] == "full_text"

    @pytest.mark.integration
    def test_requests_are_spaced_by_the_rate_limit(self, arxiv_server):
        # A 1.5 s interval: a refusal that waited for a slot would take about that long, one that did not takes
        # milliseconds, and the 1 s bound between them leaves room for a loaded machine.
        component = make(arxiv_server, min_interval_s=1.5)
        for _ in range(3):
            assert component.run(query="attention")["status"].ok
            started = time.monotonic()
            refused = component.run(query="attention", date_from="2024-99-99")  # bad input takes no slot
            assert refused["status"].status is StatusKind.ERROR and time.monotonic() - started < 1.0
        times = [request["at"] for request in arxiv_server.query_requests()]
        assert len(times) == 3
        assert min(later - earlier for earlier, later in zip(times, times[1:], strict=False)) >= 1.45

    def test_pages_of_one_search_are_spaced_by_the_component_interval(self, arxiv_server, monkeypatch):
        # A search longer than one page pauses between its pages by the component's own interval, not the
        # declared default of the setting.
        import components.arxiv.search as search_module

        intervals: list[float] = []

        class Recording(search_module.ArxivAccess):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                intervals.append(self.page_interval_s)

        monkeypatch.setattr(search_module, "ArxivAccess", Recording)
        assert make(arxiv_server, min_interval_s=0.25).run(query="attention")["status"].ok
        assert intervals == [0.25]

    @pytest.mark.integration
    def test_429_honours_retry_after(self, arxiv_server):
        arxiv_server.fail("429", path="/api/query", retry_after=0.5, times=1)
        result = make(arxiv_server).run(query="attention")
        assert result["status"].status is StatusKind.SUCCESS and result["status"].attempts == 2
        times = [request["at"] for request in arxiv_server.query_requests()]
        assert times[1] - times[0] >= 0.5

    @pytest.mark.integration
    @pytest.mark.parametrize(
        ("mode", "expected"),
        [("500", "HTTP 500"), ("malformed", "malformed feed"), ("429", "slow down"), ("drop", "cannot reach")],
    )
    def test_service_faults_give_a_status_never_an_exception(self, arxiv_server, mode, expected):
        arxiv_server.fail(mode, path="/api/query", retry_after=30 if mode == "429" else None)
        result = make(arxiv_server).run(query="attention")
        assert result["documents"] == []
        assert result["status"].status is StatusKind.ERROR
        assert expected in result["status"].message

    @pytest.mark.integration
    def test_a_hanging_service_times_out_within_the_budget(self, arxiv_server):
        arxiv_server.fail("hang", path="/api/query")
        # Three retries: a hang that were retried, or not cut at its timeout, would take 6 s or more (the service
        # hangs for 120 s). Under 4.5 s proves the 1.5 s timeout ended it, with room for a loaded machine; the lower
        # bound proves it waited for the timeout.
        component = make(arxiv_server, timeout_s=1.5, retries=3)
        started = time.monotonic()
        result = component.run(query="attention")
        assert result["status"].status is StatusKind.TIMEOUT
        assert 1.4 <= time.monotonic() - started < 1.5 + 3.0

    def test_a_service_that_is_down_is_an_error_status(self):
        component = ArxivSearch(
            api_url=f"http://127.0.0.1:{free_port()}/api/query", timeout_s=2.0, retries=0, min_interval_s=0.0
        )
        result = component.run(query="attention")
        assert result["status"].status is StatusKind.ERROR
        assert "cannot reach the arXiv API" in result["status"].message

    @pytest.mark.integration
    @pytest.mark.parametrize(
        ("kwargs", "expected"),
        [
            ({"query": ""}, "empty"),
            ({"query": "the of and"}, "no words"),
            ({"query": "x " * 600}, "longer than 1,000 characters"),
            ({"query": "attention", "date_from": "2024-13-01"}, "date_from must be a date"),
            ({"query": "attention", "date_from": "2024-02-01", "date_to": "2024-01-01"}, "after"),
            ({"query": "attention", "categories": ["cs CL; DROP"]}, "not an arXiv category"),
            ({"query": "attention", "sort_by": "popularity"}, "sort_by"),
            ({"query": 3.5}, "the question must be text, not float"),
            ({"query": "attention", "num_results": "three"}, "num_results must be a whole number"),
            ({"query": "attention", "categories": 5}, "categories must be a list"),
            ({"query": None}, "empty"),
            ({"query": "id:abc", "num_results": 3}, None),
            ({"query": "2005.11401"}, "2005.11401"),
        ],
    )
    def test_bad_input_is_a_status(self, arxiv_server, kwargs, expected):
        result = make(arxiv_server).run(**kwargs)
        if expected is None:  # arXiv's own answer to a query it finds nothing for
            assert result["status"].status is StatusKind.SUCCESS and result["documents"] == []
            return
        if expected == "2005.11401":  # a bare identifier is looked up
            assert [doc.meta["paper_id"] for doc in result["documents"]] == ["2005.11401"]
            assert "id_list=2005.11401" in arxiv_server.query_requests()[-1]["query"]
            return
        assert result["status"].status is StatusKind.ERROR
        assert expected in result["status"].message
        assert arxiv_server.query_requests() == []

    @pytest.mark.integration
    def test_unselected_questions_do_not_run(self, arxiv_server):
        component = make(arxiv_server)
        skipped = component.run(query="attention", sources=["kb", "web"])
        assert skipped["status"].status is StatusKind.SKIPPED
        assert arxiv_server.query_requests() == []
        assert component.run(query="attention", sources=["auto"])["status"].ok
