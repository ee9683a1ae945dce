"""The research tools' contracts, run through the executor over the demo corpus (knowledge base and graph), the
Firecrawl and arXiv contract servers and Qdrant: every tool returns its schema's shape, answers within its
timeout (+1 s), never raises when its backend raises, attributes every chunk, and clamps at both ends."""

from __future__ import annotations

import threading
import time
import uuid

import jsonschema
import pytest

from components.contracts import ContextChunk, StatusKind
from components.tools.executor import ToolExecutor
from components.tools.profiles import ToolProfiles
from components.tools.registry import get_tool, tool_names
from tests.components.knowledge_base.conftest import environment
from tests.contract_servers.arxiv import arxiv_server, arxiv_server_session  # noqa: F401 - fixtures
from tests.contract_servers.firecrawl import firecrawl_server, firecrawl_server_session  # noqa: F401 - fixtures

RESEARCH = [name for name in tool_names() if get_tool(name).source is not None]
KB_TOOLS = ["rag_search", "vector_search", "hybrid_search", "list_documents", "get_document"]
GRAPH_TOOLS = ["graph_search", "get_entity_relationships", "get_entity_timeline", "perform_comprehensive_search"]


@pytest.fixture(scope="module")
def demo(database_url):  # noqa: ANN001, ANN201
    """The demo corpus (15 documents, their chunks and graph facts) in a collection of its own for the module."""
    from components.knowledge_base.factory import open_knowledge_base
    from ingest.demo import ensure_demo_corpus

    name = f"tools_{uuid.uuid4().hex[:8]}"
    with environment({"KB_COLLECTION": name}):
        report = ensure_demo_corpus(open_knowledge_base(collection=name))
        assert report is not None and report.chunks_written > 0
        yield report


def calls(demo) -> dict[str, dict]:  # noqa: ANN001
    """A good call of every local research tool."""
    return {
        "rag_search": {"query": "When did pgvector add the HNSW index type?", "min_relevance": 0.0},
        "vector_search": {"query": "HNSW index in PostgreSQL"},
        "hybrid_search": {"query": "HNSW index in PostgreSQL", "text_weight": 0.7},
        "list_documents": {"limit": 5},
        "get_document": {"document_id": demo.document_ids["demo:pgvector.md"]},
        "graph_search": {"query": "Who started writing the Qdrant engine?"},
        "get_entity_relationships": {"entity_name": "Qdrant", "depth": 2},
        "get_entity_timeline": {"entity_name": "PostgreSQL", "start_date": "1990", "end_date": "2030"},
        "perform_comprehensive_search": {"query": "pgvector HNSW index", "limit": 3},
    }


def _patch_backend(name: str, monkeypatch, behaviour) -> None:  # noqa: ANN001
    """Make the backend under tool `name` misbehave (`behaviour()` is called where the backend would work)."""

    def broken(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        return behaviour()

    if name in KB_TOOLS or name == "perform_comprehensive_search":
        # Every knowledge-base component reaches its store through KnowledgeBaseAccess.get.
        monkeypatch.setattr("components.knowledge_base.attribution.KnowledgeBaseAccess.get", broken)
    if name in GRAPH_TOOLS:
        for method in ("search_hits", "relationship_hits", "timeline_hits"):
            monkeypatch.setattr(f"components.graph.tools.GraphTools.{method}", broken)
        # graph_search is the research pipeline's graph branch: its backend is the walk over the passage graph.
        monkeypatch.setattr("components.graph.passage_walk.EntityPassageGraph.top_passages", broken)
    if name == "memory_recall":
        monkeypatch.setattr("components.memory.recall.MemoryRecall._recall", broken)


def _check_attribution(outcome) -> None:  # noqa: ANN001
    for chunk in outcome.chunks:
        assert isinstance(chunk, ContextChunk)
        assert chunk.id and chunk.source_id and chunk.source_type and chunk.text
        assert chunk.source_title or chunk.source_url
    for item in (outcome.output or {}).get("chunks", []):
        assert item["source_id"] and item["source_type"] and (item["source_title"] or item["source_url"])


class TestSchemas:
    def test_every_research_tool_declares_valid_described_schemas(self) -> None:
        assert len(RESEARCH) == 13
        for name in RESEARCH:
            spec = get_tool(name)
            jsonschema.Draft202012Validator.check_schema(spec.input_schema)
            jsonschema.Draft202012Validator.check_schema(spec.output_schema)
            assert spec.input_schema["additionalProperties"] is False and spec.output_schema["type"] == "object"
            assert all(prop.get("description") for prop in spec.input_schema["properties"].values()), name

    @pytest.mark.parametrize(("name", "arguments"), [("rag_search", {}), ("get_document", {"document_id": 3})])
    def test_invalid_arguments_are_refused_before_any_work(self, name, arguments) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run(name, arguments)
        assert outcome.status.status is StatusKind.ERROR and outcome.status.message.startswith("invalid input")


@pytest.mark.integration
class TestLocalResearchTools:
    @pytest.mark.parametrize("name", [*KB_TOOLS, *GRAPH_TOOLS])
    def test_returns_its_schema_shape_with_attributed_chunks(self, demo, name) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run(name, calls(demo)[name])
        assert outcome.status.ok, outcome.status.message
        jsonschema.validate(outcome.output, get_tool(name).output_schema)
        if name != "list_documents":
            assert outcome.chunks, name
        _check_attribution(outcome)

    def test_memory_recall_returns_its_schema_shape(self, demo) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run("memory_recall", {"query": "HNSW", "num_results": 2})
        assert outcome.status.ok, outcome.status.message
        jsonschema.validate(outcome.output, get_tool("memory_recall").output_schema)

    @pytest.mark.parametrize("name", [*KB_TOOLS, *GRAPH_TOOLS, "memory_recall"])
    def test_never_raises_when_the_backend_raises(self, demo, name, monkeypatch) -> None:  # noqa: ANN001
        def explode():  # noqa: ANN202
            raise RuntimeError("the backend is on fire")

        _patch_backend(name, monkeypatch, explode)
        arguments = {**calls(demo), "memory_recall": {"query": "HNSW"}}[name]
        outcome = ToolExecutor(profile="reader").run(name, arguments)
        assert outcome.status.status in (StatusKind.ERROR, StatusKind.PARTIAL), name
        if outcome.output is not None:
            jsonschema.validate(outcome.output, get_tool(name).output_schema)
        if outcome.status.status is StatusKind.ERROR:
            assert outcome.chunks == []

    @pytest.mark.parametrize("name", [*KB_TOOLS, *GRAPH_TOOLS, "memory_recall"])
    def test_answers_within_its_timeout_plus_one_second(self, demo, name, monkeypatch) -> None:  # noqa: ANN001
        release = threading.Event()
        _patch_backend(name, monkeypatch, lambda: release.wait(60))
        profiles = ToolProfiles.from_mapping({"policy": {name: {"timeout_s": 1}}})
        arguments = {**calls(demo), "memory_recall": {"query": "HNSW"}}[name]
        started = time.monotonic()
        try:
            outcome = ToolExecutor(profile="reader", profiles=profiles).run(name, arguments)
        finally:
            release.set()
        # The backend would take 60 s: ending within a few seconds proves the 1 s timeout ended the call. On an idle
        # machine that is within one second of the timeout; the bound leaves 3 s for scheduling on a loaded one.
        # The lower bound proves the tool really waited for its timeout.
        assert 0.9 <= time.monotonic() - started < 1 + 3.0
        assert outcome.status.status is StatusKind.TIMEOUT and "within 1 s" in outcome.status.message

    @pytest.mark.parametrize(
        ("name", "arguments", "check"),
        [
            ("rag_search", {"top_k": 0, "min_relevance": 0}, lambda o: len(o["chunks"]) == 1),
            ("rag_search", {"top_k": 999, "min_relevance": 0}, lambda o: len(o["chunks"]) == 50),
            ("rag_search", {"top_k": 5, "min_relevance": -4}, lambda o: len(o["chunks"]) == 5),
            ("rag_search", {"top_k": 5, "min_relevance": 7}, lambda o: o["chunks"] == [] and o["total_found"] == 0),
            ("vector_search", {"limit": 0}, lambda o: len(o["chunks"]) == 1),
            ("vector_search", {"limit": 999}, lambda o: len(o["chunks"]) == 50),
            ("hybrid_search", {"limit": -3}, lambda o: len(o["chunks"]) == 1),
            ("hybrid_search", {"limit": 999}, lambda o: len(o["chunks"]) == 50),
            ("list_documents", {"limit": 0}, lambda o: len(o["documents"]) == 1 and o["total"] == 15),
            ("list_documents", {"limit": 999}, lambda o: len(o["documents"]) == 15),
            ("list_documents", {"limit": 3, "offset": -9}, lambda o: len(o["documents"]) == 3),
            ("graph_search", {"limit": 0}, lambda o: len(o["facts"]) == 1),
            ("graph_search", {"limit": 999}, lambda o: 1 <= len(o["facts"]) <= 50),
            ("get_entity_relationships", {"depth": 0}, lambda o: o["depth"] == 1 and o["related_facts"]),
            ("get_entity_relationships", {"depth": 99}, lambda o: o["depth"] == 5 and o["related_facts"]),
            ("perform_comprehensive_search", {"limit": 0}, lambda o: len(o["vector_results"]) == 1),
            ("perform_comprehensive_search", {"limit": 999}, lambda o: 10 < len(o["vector_results"]) <= 50),
        ],
    )
    def test_clamps_at_both_ends(self, demo, name, arguments, check) -> None:  # noqa: ANN001
        base = {key: value for key, value in calls(demo)[name].items() if key not in ("limit", "depth", "top_k")}
        outcome = ToolExecutor(profile="reader").run(name, {**base, **arguments})
        assert outcome.status.ok, outcome.status.message
        assert check(outcome.output), outcome.output

    def test_hybrid_text_weight_clamps_to_its_ends(self, demo) -> None:  # noqa: ANN001
        executor = ToolExecutor(profile="reader")

        def ids(weight: float) -> list[str]:
            arguments = {"query": "HNSW index builds in parallel", "limit": 8, "text_weight": weight}
            return [chunk["id"] for chunk in executor.run("hybrid_search", arguments).output["chunks"]]

        assert ids(-2) == ids(0) and ids(9) == ids(1)

    def test_timeline_dates_really_filter_and_bad_dates_are_a_status(self, demo) -> None:  # noqa: ANN001
        executor = ToolExecutor(profile="reader")
        everything = executor.run("get_entity_timeline", {"entity_name": "PostgreSQL"}).output["timeline"]
        dated = [item["valid_at"] for item in everything if item["valid_at"]]
        assert len(dated) >= 2
        cut = sorted(dated)[len(dated) // 2][:4]
        later = executor.run("get_entity_timeline", {"entity_name": "PostgreSQL", "start_date": cut}).output
        assert later["timeline"] and all(item["valid_at"][:4] >= cut for item in later["timeline"])
        bad = executor.run("get_entity_timeline", {"entity_name": "PostgreSQL", "start_date": "last spring"})
        assert bad.status.status is StatusKind.ERROR and "is not an ISO date" in bad.status.message
        jsonschema.validate(bad.output, get_tool("get_entity_timeline").output_schema)

    def test_rag_search_filters_by_source_type_and_date_range(self, demo) -> None:  # noqa: ANN001
        executor = ToolExecutor(profile="reader")
        query = {"query": "a web page about wikipedia", "top_k": 50, "min_relevance": 0}
        html = executor.run("rag_search", {**query, "filter_source_type": ["html"]}).output["chunks"]
        assert html and {chunk["metadata"]["doc_type"] for chunk in html} == {"html"}
        bad = executor.run("rag_search", {**query, "filter_date_range": {"start": "2024-05-01", "end": "2023"}})
        assert bad.status.status is StatusKind.ERROR and "filter_date_range" in bad.status.message
        jsonschema.validate(bad.output, get_tool("rag_search").output_schema)


class TestNetworkResearchTools:
    @pytest.fixture()
    def services(self, firecrawl_server, arxiv_server, monkeypatch):  # noqa: ANN001, ANN201, F811
        from components.settings import reload_settings

        monkeypatch.setenv("FIRECRAWL_API_KEY", firecrawl_server.api_key)
        monkeypatch.setenv("FIRECRAWL_API_URL", firecrawl_server.url)
        monkeypatch.setenv("ARXIV_API_URL", arxiv_server.url)
        monkeypatch.setenv("ARXIV_MIN_INTERVAL_S", "0")
        reload_settings()
        yield firecrawl_server, arxiv_server
        monkeypatch.undo()
        reload_settings()

    @pytest.mark.parametrize(
        ("name", "arguments"),
        [
            ("firecrawl_search", {"query": "What is retrieval-augmented generation?", "num_results": 2}),
            ("arxiv_search", {"query": "retrieval-augmented generation", "num_results": 2}),
        ],
    )
    def test_returns_its_schema_shape_with_attributed_chunks(self, services, name, arguments) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="analyst").run(name, arguments)
        assert outcome.status.ok, outcome.status.message
        jsonschema.validate(outcome.output, get_tool(name).output_schema)
        assert outcome.chunks
        _check_attribution(outcome)

    def test_arxiv_search_accepts_every_sort_order_its_schema_offers(self, services) -> None:  # noqa: ANN001
        # The schema once offered arXiv's API names (lastUpdatedDate, submittedDate) the component refused.
        offered = get_tool("arxiv_search").input_schema["properties"]["sort_by"]["enum"]
        assert offered
        for sort_by in offered:
            outcome = ToolExecutor(profile="analyst").run("arxiv_search", {"query": "retrieval", "sort_by": sort_by})
            assert outcome.status.ok, (sort_by, outcome.status.message)
            jsonschema.validate(outcome.output, get_tool("arxiv_search").output_schema)

    def test_arxiv_search_refuses_a_sort_order_it_does_not_offer(self, services) -> None:  # noqa: ANN001
        _, arxiv = services
        outcome = ToolExecutor(profile="analyst").run("arxiv_search", {"query": "retrieval", "sort_by": "citations"})
        assert outcome.status.status is StatusKind.ERROR and outcome.status.message.startswith("invalid input")
        assert "citations" in outcome.status.message
        # The component, called past the schema, says which orders it takes.
        status = get_tool("arxiv_search").factory().run(query="retrieval", sort_by="citations")["status"]
        assert status.status is StatusKind.ERROR
        assert "sort_by must be one of relevance, date, not 'citations'" in status.message
        assert arxiv.query_requests() == []

    @pytest.mark.parametrize("name", ["firecrawl_search", "arxiv_search"])
    def test_a_failing_service_is_a_status(self, services, name) -> None:  # noqa: ANN001
        for server in services:
            server.fail("500")
        outcome = ToolExecutor(profile="analyst").run(name, {"query": "retrieval"})
        assert outcome.status.status in (StatusKind.ERROR, StatusKind.TIMEOUT)
        if outcome.output is not None:
            jsonschema.validate(outcome.output, get_tool(name).output_schema)

    @pytest.mark.parametrize("name", ["firecrawl_search", "arxiv_search"])
    def test_answers_within_its_timeout_plus_one_second(self, services, name) -> None:  # noqa: ANN001
        for server in services:
            server.fail("slow", delay_s=60)  # released when the server is reset after the test
        profiles = ToolProfiles.from_mapping({"policy": {name: {"timeout_s": 1}}})
        started = time.monotonic()
        outcome = ToolExecutor(profile="analyst", profiles=profiles).run(name, {"query": "retrieval"})
        # The service would answer after 60 s: ending within a few seconds proves the 1 s timeout ended the call
        # (within one second on an idle machine; 3 s of slack for a loaded one); the lower bound proves it waited.
        assert 0.9 <= time.monotonic() - started < 1 + 3.0 and outcome.status.status is StatusKind.TIMEOUT
