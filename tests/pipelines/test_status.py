import pytest

from pipelines.status import collect_status
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures


def parts(report):
    return {part["name"]: part for part in report["parts"]}


@pytest.mark.integration
class TestStatusReport:
    def test_every_part_is_probed_with_counts_and_sentences(self, database_url):
        report = collect_status()
        found = parts(report)
        assert set(found) == {"knowledge base", "embedder", "generator", "knowledge graph", "memory", "web", "arXiv"}
        assert report["healthy"] is True
        assert found["knowledge base"]["reachable"] and "documents" in found["knowledge base"]["counts"]
        assert found["knowledge graph"]["reachable"] and "facts" in found["knowledge graph"]["counts"]
        assert not found["web"]["reachable"] and "FIRECRAWL_API_KEY" in found["web"]["detail"]
        # The suite points the arXiv API at a closed local port: one sentence, not a trace.
        assert not found["arXiv"]["reachable"] and "cannot be reached" in found["arXiv"]["detail"]

    def test_a_configured_web_source_is_reachable(self, database_url, firecrawl_server, monkeypatch):  # noqa: F811
        from components.settings import reload_settings

        monkeypatch.setenv("FIRECRAWL_API_URL", firecrawl_server.url)
        monkeypatch.setenv("FIRECRAWL_API_KEY", "fc-test-key")
        reload_settings()
        try:
            web = parts(collect_status())["web"]
            assert web["reachable"] and firecrawl_server.url in web["detail"]
            assert "fc-test-key" not in str(web)
        finally:
            monkeypatch.delenv("FIRECRAWL_API_URL")
            monkeypatch.delenv("FIRECRAWL_API_KEY")
            reload_settings()


def test_the_graph_part_says_how_many_documents_have_no_graph_because_extraction_failed(monkeypatch):
    from unittest.mock import Mock

    import pipelines.status as status
    from components.graph.extraction import LanguageExtractor
    from components.graph.store import GraphStore
    from components.settings import Settings

    store = Mock(spec=GraphStore)
    store.counts.return_value = {"entities": 3, "facts": 9, "aliases": 0}
    stamp = LanguageExtractor().stamp
    store.extractor_stamp_counts.return_value = {stamp: 4, f"{stamp}+failed3": 2}
    monkeypatch.setattr(status, "graph_store_from_settings", lambda collection, settings: store)
    detail, counts = status._graph(Settings(graph_extractor="spacy"))
    assert counts == {"entities": 3, "facts": 9}
    assert detail.endswith(
        ". 2 documents have no knowledge graph because extraction of their new or changed text failed (2 of them 3 "
        "times in a row, which are tried again only by `research ingest --reextract` on their files)."
    )
    # A document whose re-extraction failed on the same text keeps its earlier graph, and the status says so.
    store.extractor_stamp_counts.return_value = {stamp: 4, f"{stamp}+failed@1f0c9a2e+kept": 1}
    assert status._graph(Settings(graph_extractor="spacy"))[0].endswith(
        ". 1 document kept its earlier graph because extracting it again failed; the next ingest tries again."
    )
    store.extractor_stamp_counts.return_value = {stamp: 4}
    assert status._graph(Settings(graph_extractor="spacy"))[0].endswith("extractor spacy")
    store.close.assert_called()


def test_a_probe_failure_is_told_by_its_first_line_that_says_something():
    from components.settings import Settings
    from pipelines.status import _probe

    def fails(settings):
        raise RuntimeError("\nthe server at 127.0.0.1:7687 refused the connection\nTraceback (most recent call last):")

    part = _probe("graph", True, fails, Settings())
    assert part["reachable"] is False
    assert part["detail"] == "unreachable: the server at 127.0.0.1:7687 refused the connection"
    assert _probe("graph", True, lambda settings: (_ for _ in ()).throw(TimeoutError()), Settings())["detail"] == (
        "unreachable: TimeoutError"
    )
