"""`WebScrape` and `ingest_url` through the real firecrawl-py client against the Firecrawl contract server."""

from __future__ import annotations

import pytest

from components.contracts import SourceType, StatusKind, WebMetadata, document_to_chunk
from components.web import SnapshotStore, UrlNotIngested, WebScrape, ingest_url

SURVEY = "https://research.example.net/surveys/transformers"


def make(server, work_dir, **kwargs) -> WebScrape:
    # Generous unless a test is about the timeout: on a loaded machine a healthy scrape can take over 2 s.
    kwargs.setdefault("timeout_s", 10.0)
    kwargs.setdefault("page_timeout_s", 10.0)
    kwargs.setdefault("retries", 0)
    return WebScrape(api_url=server.url, snapshot_dir=str(work_dir / "snapshots"), **kwargs)


class TestWebScrape:
    def test_init_and_serialisation(self):
        with pytest.raises(ValueError, match="max_chunks"):
            WebScrape(max_chunks=0)
        component = WebScrape(page_timeout_s=3.0, max_chunks=7, exclude_patterns=["example.com"])
        restored = WebScrape.from_dict(component.to_dict())
        assert (restored.page_timeout_s, restored.max_chunks, restored.exclude_patterns) == (3.0, 7, ["example.com"])

    @pytest.mark.integration
    def test_a_page_without_a_query_comes_whole_in_order(self, firecrawl_server, firecrawl_key, work_dir):
        result = make(firecrawl_server, work_dir).run(url=SURVEY)
        assert result["status"].status is StatusKind.SUCCESS
        documents = result["documents"]
        assert [doc.meta["chunk_index"] for doc in documents] == list(range(len(documents)))
        assert all(doc.meta["page_total_chunks"] == len(documents) for doc in documents)
        assert [doc.meta["section_title"] for doc in documents] == [
            "1. Tokenisation",
            "2. Attention",
            "3. Positional encodings",
            "4. Feed-forward layers",
            "5. Layer normalisation",
            "6. Training objectives",
            "7. Scaling laws",
            "8. Inference cost",
        ]
        # Cut as the knowledge base cuts Markdown: a chunk opens with its headings (a title with no text of its
        # own joins the first section), then the section's text.
        assert documents[0].content.startswith(
            "A survey of transformer language models\n\n1. Tokenisation\n\nThis section of the transformer survey"
        )
        assert documents[1].content.startswith("2. Attention\n\n")
        assert "#" not in " ".join(doc.content for doc in documents)
        chunk = document_to_chunk(documents[0])
        assert chunk.source_type is SourceType.WEB
        WebMetadata.model_validate(chunk.metadata)
        assert chunk.semantic_relevance == 0.0 and chunk.raw_score is None

    @pytest.mark.integration
    def test_with_a_query_the_most_relevant_chunks_come_first(self, firecrawl_server, firecrawl_key, work_dir):
        result = make(firecrawl_server, work_dir, max_chunks=3).run(url=SURVEY, query="scaling laws of transformers")
        documents = result["documents"]
        assert len(documents) == 3
        assert documents[0].meta["section_title"] == "7. Scaling laws"
        assert documents[0].score >= documents[-1].score > 0

    @pytest.mark.integration
    def test_a_changed_page_leaves_the_old_snapshot_checkable(self, firecrawl_server, firecrawl_key, work_dir):
        component = make(firecrawl_server, work_dir)
        firecrawl_server.set_page(
            "https://blog.example.io/changing", title="Changing", markdown="The launch is planned for March."
        )
        before = component.run(url="https://blog.example.io/changing")["documents"][0]
        firecrawl_server.set_page("https://blog.example.io/changing", markdown="The launch was moved to June.")
        after = component.run(url="https://blog.example.io/changing")["documents"][0]
        store = SnapshotStore(work_dir / "snapshots")
        old = store.get(before.meta["snapshot_id"])
        assert old.contains(before.content) and not old.contains(after.content)
        assert store.get(after.meta["snapshot_id"]).contains("moved to June")
        assert before.id != after.id
        assert len(store.history("https://blog.example.io/changing")) == 2

    @pytest.mark.integration
    @pytest.mark.parametrize(
        ("url", "expected"),
        [
            ("https://docs.vectors.example.com/missing", "HTTP 404"),
            ("https://nowhere.invalid/page", "does not resolve"),
            ("https://www.reddit.com/r/x", "excluded"),
            ("ftp://example.org/file", "not an http(s) URL"),
            ("", "no URL"),
        ],
    )
    def test_unreadable_pages_give_an_error_status(self, firecrawl_server, firecrawl_key, work_dir, url, expected):
        result = make(firecrawl_server, work_dir).run(url=url)
        assert result["documents"] == []
        assert result["status"].status is StatusKind.ERROR
        assert expected in result["status"].message

    @pytest.mark.integration
    def test_a_slow_page_times_out(self, firecrawl_server, firecrawl_key, work_dir):
        firecrawl_server.slow_page(SURVEY, 60.0)  # released when the server is reset after the test
        result = make(firecrawl_server, work_dir, page_timeout_s=1.0).run(url=SURVEY)
        assert result["status"].status is StatusKind.ERROR
        assert "not read within 1 s" in result["status"].message


@pytest.mark.integration
class TestIngestUrl:
    def test_a_page_lands_in_the_knowledge_base(self, firecrawl_server, firecrawl_key, work_dir, store):
        from ingest.ingestor import Ingestor

        report = ingest_url(SURVEY, ingestor=Ingestor(store=store, hooks=[]), scraper=make(firecrawl_server, work_dir))
        assert report.ok and report.added == [SURVEY]
        record = store.find_by_source(SURVEY)
        assert record is not None
        assert record.doc_type == "web"
        assert record.url == SURVEY
        assert record.title == "A survey of transformer language models"
        assert record.metadata["domain"] == "research.example.net"
        assert SnapshotStore(work_dir / "snapshots").get(record.metadata["snapshot_id"]) is not None
        assert store.count_chunks() >= 2

    def test_an_unreadable_page_is_one_clear_error(self, firecrawl_server, firecrawl_key, work_dir, store):
        from ingest.ingestor import Ingestor

        with pytest.raises(UrlNotIngested, match="HTTP 404"):
            ingest_url(
                "https://docs.vectors.example.com/missing",
                ingestor=Ingestor(store=store, hooks=[]),
                scraper=make(firecrawl_server, work_dir),
            )
        assert store.count_documents() == 0
