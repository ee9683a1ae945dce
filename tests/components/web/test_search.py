"""`WebSearch` through the real firecrawl-py client against the Firecrawl contract server, with the real model."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from components.contracts import SourceType, StatusKind, WebMetadata, document_to_chunk
from components.web import SnapshotStore, WebSearch
from tests.contract_servers import free_port

RAG_PAGE = "https://en.example.org/wiki/Retrieval-augmented_generation"
BLOG_PAGE = "https://blog.example.io/posts/hybrid-retrieval-in-practice"
QUESTION = "retrieval augmented generation"


def make(server, work_dir, **kwargs) -> WebSearch:
    # Generous unless a test is about the timeout: on a loaded machine a healthy search can take over 2 s.
    kwargs.setdefault("timeout_s", 10.0)
    kwargs.setdefault("page_timeout_s", 1.0)
    kwargs.setdefault("retries", 1)
    component = WebSearch(api_url=server.url, snapshot_dir=str(work_dir / "snapshots"), **kwargs)
    component.warm_up()
    return component


class TestWebSearch:
    def test_to_dict_keeps_the_key_out(self, monkeypatch):
        monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-secret-value")
        component = WebSearch(num_results=3, languages=["en"], exclude_patterns=["example.com"], timeout_s=4.0)
        data = component.to_dict()
        assert "fc-secret-value" not in repr(data)
        assert data["init_parameters"]["api_key"] == {
            "type": "env_var",
            "env_vars": ["FIRECRAWL_API_KEY"],
            "strict": False,
        }
        restored = WebSearch.from_dict(data)
        assert restored.num_results == 3
        assert restored.languages == ["en"]
        assert restored.exclude_patterns == ["example.com"]
        assert restored.timeout_s == 4.0
        assert restored.api_key.resolve_value() == "fc-secret-value"

    @pytest.mark.integration
    def test_run_returns_attributed_chunks_best_first(self, firecrawl_server, firecrawl_key, work_dir):
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        status, documents = result["status"], result["documents"]
        assert status.status is StatusKind.SUCCESS, status.message
        assert documents
        scores = [doc.score for doc in documents]
        assert scores == sorted(scores, reverse=True)
        for doc in documents:
            chunk = document_to_chunk(doc)
            assert chunk.source_type is SourceType.WEB
            WebMetadata.model_validate(chunk.metadata)
            assert chunk.source_url == chunk.metadata["page_url"] == chunk.source_id
            assert chunk.metadata["domain"] in chunk.source_url
            assert chunk.metadata["fetch_timestamp"].endswith("Z")
            assert chunk.metadata["content_type"].startswith("text/html")
            assert 0.0 <= chunk.semantic_relevance <= 1.0
        urls = {doc.meta["page_url"] for doc in documents}
        assert RAG_PAGE in urls
        # The default exclusion patterns keep reddit and twitter out even when Firecrawl returns them.
        assert not any("reddit.com" in url or "twitter.com" in url for url in urls)
        rag = next(doc for doc in documents if doc.meta["page_url"] == RAG_PAGE)
        assert rag.meta["source_date"] == "2025-03-14"  # the date the page states
        assert rag.meta["language"] == "en"
        assert status.total_found == len(urls)

    @pytest.mark.integration
    def test_relevance_is_the_cosine_from_the_local_model(
        self, firecrawl_server, firecrawl_key, work_dir, embedding_model
    ):
        documents = make(firecrawl_server, work_dir).run(query=QUESTION)["documents"]
        doc = documents[0]
        # The page title and section heading are embedded with the chunk: they say what the text is about.
        page_text = "\n".join(part for part in (doc.meta["page_title"], doc.meta["section_title"], doc.content) if part)
        expected = float(embedding_model.embed([page_text])[0] @ embedding_model.embed_one(QUESTION))
        assert doc.meta["raw_score"] == pytest.approx(expected, abs=1e-4)
        assert doc.meta["score_kind"] == "cosine"
        # A given query embedding is used as is (here: another question's).
        other = embedding_model.embed_one("German encyclopedia article").tolist()
        again = make(firecrawl_server, work_dir).run(query=QUESTION, query_embedding=other)["documents"]
        same = next(d for d in again if d.id == doc.id)
        assert same.meta["raw_score"] == pytest.approx(
            float(embedding_model.embed([page_text])[0] @ np.asarray(other, dtype=np.float32)), abs=1e-4
        )

    @pytest.mark.integration
    def test_every_page_is_kept_as_a_snapshot(self, firecrawl_server, firecrawl_key, work_dir):
        documents = make(firecrawl_server, work_dir).run(query=QUESTION)["documents"]
        store = SnapshotStore(work_dir / "snapshots")
        for doc in documents:
            snapshot = store.get(doc.meta["snapshot_id"])
            assert snapshot is not None
            assert snapshot.url == doc.meta["page_url"]
            assert snapshot.fetched_at == doc.meta["fetch_timestamp"]
            assert snapshot.content_hash == doc.meta["content_hash"]
            assert snapshot.contains(doc.content)
        assert not store.get(documents[0].meta["snapshot_id"]).contains("A sentence no page ever held.")

    @pytest.mark.integration
    def test_exclusions_and_domains_are_configurable(self, firecrawl_server, firecrawl_key, work_dir):
        unfiltered = make(firecrawl_server, work_dir, exclude_patterns=[], num_results=10).run(query=QUESTION)
        domains = {doc.meta["domain"] for doc in unfiltered["documents"]}
        assert "reddit.com" in domains and "twitter.com" in domains
        glob = make(firecrawl_server, work_dir, exclude_patterns=["*/wiki/*"], num_results=10).run(query=QUESTION)
        assert not any("/wiki/" in doc.meta["page_url"] for doc in glob["documents"])
        only = make(firecrawl_server, work_dir).run(query=QUESTION, include_domains=["example.io"])
        assert {doc.meta["domain"] for doc in only["documents"]} == {"blog.example.io"}
        # The research pipeline's filters carry the analyst's domains to the web branch (knowledge-base keys ignored).
        filtered = make(firecrawl_server, work_dir).run(
            query=QUESTION, filters={"domains": ["example.io"], "doc_types": ["pdf"]}
        )
        assert {doc.meta["domain"] for doc in filtered["documents"]} == {"blog.example.io"}
        without = make(firecrawl_server, work_dir).run(query=QUESTION, exclude_domains=["example.org"])
        assert without["documents"]
        assert not any(doc.meta["domain"].endswith("example.org") for doc in without["documents"])

    @pytest.mark.integration
    def test_languages_and_num_results(self, firecrawl_server, firecrawl_key, work_dir):
        german = make(firecrawl_server, work_dir).run(query=QUESTION, languages=["de"])
        assert german["status"].status is StatusKind.SUCCESS
        assert {doc.meta["language"] for doc in german["documents"]} == {"de"}
        one = make(firecrawl_server, work_dir).run(query=QUESTION, num_results=1)
        assert len({doc.meta["page_url"] for doc in one["documents"]}) == 1
        search = next(r for r in firecrawl_server.requests if r["path"] == "/v2/search")
        assert b'"query": "retrieval augmented generation"' in search["body"]

    @pytest.mark.integration
    def test_a_slow_page_is_skipped_and_the_rest_kept(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.slow_page(BLOG_PAGE, 60.0)  # released when the server is reset after the test
        component = make(firecrawl_server, work_dir, page_timeout_s=1.0)
        started = time.monotonic()
        result = component.run(query=QUESTION)
        elapsed = time.monotonic() - started
        assert result["status"].status is StatusKind.PARTIAL
        assert BLOG_PAGE in result["status"].message and "not read within 1 s" in result["status"].message
        assert result["documents"]
        assert BLOG_PAGE not in {doc.meta["page_url"] for doc in result["documents"]}
        # The page would take 60 s and the search may take 10 s: ending within a few seconds proves the branch gave
        # up on the page after its 1 s (the rest is room for a loaded machine); the lower bound proves it waited.
        assert 0.9 <= elapsed < 1.0 + 4.0

    @pytest.mark.integration
    def test_a_rate_limited_page_gives_partial_results(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("429", path="/v2/scrape", match=RAG_PAGE, retry_after=30)
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        assert result["status"].status is StatusKind.PARTIAL
        assert "rate limited, retry after 30 s" in result["status"].message
        urls = {doc.meta["page_url"] for doc in result["documents"]}
        assert urls and RAG_PAGE not in urls

    @pytest.mark.integration
    def test_a_dropped_page_connection_gives_partial_results(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("drop", path="/v2/scrape", match=BLOG_PAGE)
        result = make(firecrawl_server, work_dir).run(query="hybrid retrieval generation")
        assert result["status"].status is StatusKind.PARTIAL
        assert BLOG_PAGE in result["status"].message and "cannot reach Firecrawl" in result["status"].message
        assert result["documents"] and BLOG_PAGE not in {doc.meta["page_url"] for doc in result["documents"]}

    @pytest.mark.integration
    def test_a_page_429_with_a_short_retry_after_is_retried(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("429", path="/v2/scrape", match=RAG_PAGE, retry_after=0.3, times=1)
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        assert result["status"].status is StatusKind.SUCCESS, result["status"].message
        assert RAG_PAGE in {doc.meta["page_url"] for doc in result["documents"]}
        scrapes = [
            r["at"] for r in firecrawl_server.requests if r["path"] == "/v2/scrape" and RAG_PAGE.encode() in r["body"]
        ]
        assert len(scrapes) == 2 and scrapes[1] - scrapes[0] >= 0.3

    @pytest.mark.integration
    def test_search_429_honours_retry_after(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("429", path="/v2/search", retry_after=0.5, times=1)
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        assert result["status"].status is StatusKind.SUCCESS
        assert result["status"].attempts == 2
        searches = [r["at"] for r in firecrawl_server.requests if r["path"] == "/v2/search"]
        assert searches[1] - searches[0] >= 0.5

    @pytest.mark.integration
    def test_search_429_beyond_the_budget_is_an_error_status(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("429", path="/v2/search", retry_after=60)
        component = make(firecrawl_server, work_dir)
        started = time.monotonic()
        result = component.run(query=QUESTION)
        # Waiting would take 60 s (Retry-After) or 10 s (the timeout): under 4 s means it gave up without waiting.
        assert time.monotonic() - started < 4.0
        assert result["documents"] == []
        assert result["status"].status is StatusKind.ERROR
        assert "rate-limited" in result["status"].message and "429" in result["status"].message

    @pytest.mark.integration
    @pytest.mark.parametrize(
        ("mode", "expected"),
        [("500", "HTTP 500"), ("malformed", "malformed"), ("drop", "cannot reach Firecrawl")],
    )
    def test_service_faults_give_a_status_never_an_exception(
        self, firecrawl_server, firecrawl_key, work_dir, mode, expected
    ):
        firecrawl_server.fail(mode, path="/v2/search")
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        assert result["documents"] == []
        assert result["status"].status is StatusKind.ERROR
        assert expected in result["status"].message
        assert result["status"].attempts == 2  # retried once (retries=1)

    @pytest.mark.integration
    def test_a_hanging_service_times_out_within_the_budget(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.fail("hang", path="/v2/search")
        # Three retries: a hang that were retried, or not cut at its timeout, would take 6 s or more (the service
        # hangs for 120 s). Under 4.5 s proves the 1.5 s timeout ended it, with room for a loaded machine; the lower
        # bound proves it waited for the timeout.
        component = make(firecrawl_server, work_dir, timeout_s=1.5, retries=3)
        started = time.monotonic()
        result = component.run(query=QUESTION)
        elapsed = time.monotonic() - started
        assert result["status"].status is StatusKind.TIMEOUT
        assert result["documents"] == []
        assert 1.4 <= elapsed < 1.5 + 3.0

    @pytest.mark.integration
    def test_faults_can_be_injected_from_another_process(self, firecrawl_server, firecrawl_key, work_dir):
        import requests

        answer = requests.post(
            f"{firecrawl_server.url}/_contract/fail", json={"mode": "500", "path": "/v2/search"}, timeout=2
        )
        assert answer.json() == {"ok": True}
        assert make(firecrawl_server, work_dir).run(query=QUESTION)["status"].status is StatusKind.ERROR
        assert requests.post(f"{firecrawl_server.url}/_contract/reset", timeout=2).json() == {"ok": True}
        assert make(firecrawl_server, work_dir).run(query=QUESTION)["status"].status is StatusKind.SUCCESS
        refused = requests.post(f"{firecrawl_server.url}/_contract/fail", json={"mode": "sometimes"}, timeout=2)
        assert refused.status_code == 400

    @pytest.mark.integration
    def test_a_service_that_is_down_is_an_error_status(self, firecrawl_key, work_dir):
        component = WebSearch(
            api_url=f"http://127.0.0.1:{free_port()}", timeout_s=2.0, retries=0, snapshot_dir=str(work_dir)
        )
        result = component.run(query=QUESTION)
        assert result["status"].status is StatusKind.ERROR
        assert "cannot reach Firecrawl" in result["status"].message

    def test_a_missing_key_is_a_clear_status(self, monkeypatch, work_dir, settings):
        monkeypatch.delenv("FIRECRAWL_API_KEY", raising=False)
        monkeypatch.setattr(settings, "firecrawl_api_key", None)  # a developer's .env must not configure it
        monkeypatch.setattr(settings, "firecrawl_api_url", None)
        component = WebSearch(snapshot_dir=str(work_dir))
        asked = component.run(query=QUESTION, sources=["kb", "web"])
        assert asked["documents"] == []
        assert asked["status"].status is StatusKind.ERROR
        assert "FIRECRAWL_API_KEY" in asked["status"].message
        # Among "every source", an unconfigured web simply does not take part.
        default = component.run(query=QUESTION)
        assert default["status"].status is StatusKind.SKIPPED
        assert "not configured" in default["status"].message

    @pytest.mark.integration
    def test_a_wrong_key_is_a_clear_status(self, firecrawl_server, monkeypatch, work_dir):
        monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-wrong")
        result = make(firecrawl_server, work_dir).run(query=QUESTION)
        assert result["status"].status is StatusKind.ERROR
        assert "refused the API key" in result["status"].message
        assert "fc-wrong" not in result["status"].message

    @pytest.mark.integration
    def test_bad_input_is_a_status(self, firecrawl_server, firecrawl_key, work_dir):
        component = make(firecrawl_server, work_dir)
        empty = component.run(query="   ")
        assert empty["status"].status is StatusKind.ERROR and "empty" in empty["status"].message
        long = component.run(query="word " * 400)
        assert long["status"].status is StatusKind.ERROR and "longer than 1,000 characters" in long["status"].message
        number = component.run(query=42)  # type: ignore[arg-type]
        assert number["status"].status is StatusKind.ERROR and "must be text, not int" in number["status"].message
        count = component.run(query=QUESTION, num_results="five")  # type: ignore[arg-type]
        assert count["status"].status is StatusKind.ERROR and "whole number" in count["status"].message
        domains = component.run(query=QUESTION, include_domains="example.org")  # type: ignore[arg-type]
        assert domains["status"].status is StatusKind.ERROR and "list of strings" in domains["status"].message
        assert firecrawl_server.requests == []

    @pytest.mark.integration
    def test_unselected_or_dated_questions_do_not_run(self, firecrawl_server, firecrawl_key, work_dir):
        component = make(firecrawl_server, work_dir)
        skipped = component.run(query=QUESTION, sources=["kb", "arxiv"])
        assert skipped["status"].status is StatusKind.SKIPPED and skipped["documents"] == []
        dated = component.run(query=QUESTION, as_of="2024-01-01")
        assert dated["status"].status is StatusKind.SKIPPED
        assert "cannot be dated" in dated["status"].message
        assert firecrawl_server.requests == []
        chosen = component.run(query=QUESTION, sources=["web"])
        assert chosen["status"].status is StatusKind.SUCCESS


@pytest.mark.integration
class TestSourceBranches:
    """The web and arXiv branches side by side in a Haystack pipeline, run concurrently."""

    @staticmethod
    def pipeline(firecrawl_server, arxiv_server, work_dir, web_timeout_s: float):
        from haystack import Pipeline
        from haystack.components.joiners import DocumentJoiner

        from components.arxiv import ArxivSearch
        from pipelines.status_collector import SourceStatusCollector

        pipe = Pipeline()
        pipe.add_component("web", make(firecrawl_server, work_dir, timeout_s=web_timeout_s))
        pipe.add_component("arxiv", ArxivSearch(api_url=arxiv_server.url, timeout_s=10.0, min_interval_s=0.0))
        pipe.add_component("joiner", DocumentJoiner(join_mode="reciprocal_rank_fusion"))
        pipe.add_component("statuses", SourceStatusCollector())
        for branch in ("web", "arxiv"):
            pipe.connect(f"{branch}.documents", "joiner.documents")
            pipe.connect(f"{branch}.status", "statuses.statuses")
        pipe.warm_up()
        return pipe

    @staticmethod
    def inputs(sources=None):
        return {"web": {"query": QUESTION, "sources": sources}, "arxiv": {"query": QUESTION, "sources": sources}}

    def test_a_hanging_source_costs_only_its_own_timeout(self, firecrawl_server, firecrawl_key, arxiv_server, work_dir):
        firecrawl_server.fail("hang", path="/v2/search")
        arxiv_server.fail("slow", path="/api/query", delay_s=4.0)
        pipe = self.pipeline(firecrawl_server, arxiv_server, work_dir, web_timeout_s=4.0)
        started = time.monotonic()
        outputs = asyncio.run(pipe.run_async(self.inputs(), include_outputs_from={"web", "arxiv"}))
        elapsed = time.monotonic() - started
        statuses = {status.source: status for status in outputs["statuses"]["statuses"]}
        # Concurrent: the slowest branch (web's 4 s timeout), not the sum with arXiv's 4 s. One after the other cannot
        # beat the 8 s sum however idle the machine; the branches are long so that the 4 s between leaves room for the
        # pipeline's own work on a loaded machine. At least 4 s: the question waited for both branches.
        assert 3.9 <= elapsed < 4.0 + 4.0, elapsed
        # The hang costs web no more than its own timeout (the service would hang for 120 s).
        assert statuses["web"].execution_time_ms < (4.0 + 4.0) * 1000, statuses["web"]
        # The overlap, read from the services: arXiv was asked before web's search had given up, and web before arXiv
        # had answered (one after the other, the second request would come at least 4 s after the first).
        web_at = next(r["at"] for r in firecrawl_server.requests if r["path"] == "/v2/search")
        arxiv_at = arxiv_server.query_requests()[0]["at"]
        assert abs(web_at - arxiv_at) < 4.0, (web_at, arxiv_at)
        assert statuses["web"].status is StatusKind.TIMEOUT
        assert statuses["arxiv"].status is StatusKind.SUCCESS
        sources = {doc.meta["source_type"] for doc in outputs["joiner"]["documents"]}
        assert sources == {"arxiv"}

    def test_unselected_sources_do_not_run(self, firecrawl_server, firecrawl_key, arxiv_server, work_dir):
        pipe = self.pipeline(firecrawl_server, arxiv_server, work_dir, web_timeout_s=10.0)
        outputs = asyncio.run(pipe.run_async(self.inputs(sources=["arxiv"])))
        statuses = {status.source: status.status for status in outputs["statuses"]["statuses"]}
        assert statuses == {"web": StatusKind.SKIPPED, "arxiv": StatusKind.SUCCESS}
        assert firecrawl_server.requests == []
        both = asyncio.run(pipe.run_async(self.inputs(sources=["web", "arxiv"])))
        assert {doc.meta["source_type"] for doc in both["joiner"]["documents"]} == {"web", "arxiv"}
