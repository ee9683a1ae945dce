"""The served wrappers over a stand-in catalog: what each makes of the pipeline's outputs and of bad input."""

from __future__ import annotations

import asyncio
import importlib.util
import time
from types import ModuleType
from unittest.mock import AsyncMock, Mock

import pytest
from fastapi import HTTPException

from components.contracts import SourceStatus
from components.contracts.selection import DEFAULT_SOURCES
from pipelines.research_result import ResearchResult
from pipelines.serving.server import WRAPPERS_DIR


def wrapper_module(name: str) -> ModuleType:
    """A wrapper folder's `pipeline_wrapper.py`, loaded the way Hayhooks loads it (by path)."""
    spec = importlib.util.spec_from_file_location(f"wrapper_{name}", WRAPPERS_DIR / name / "pipeline_wrapper.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def wrapper(name: str, outputs: dict | None = None):
    """The wrapper with its catalog replaced by a mock answering `outputs`."""
    instance = wrapper_module(name).PipelineWrapper()
    instance.catalog = Mock()
    instance.catalog.run.return_value = outputs or {}
    instance.catalog.research_async = AsyncMock(return_value=ResearchResult(question="q", answer=""))
    return instance


class TestDocuments:
    def test_a_knowledge_base_that_is_down_is_an_error_the_client_sees(self) -> None:
        down = SourceStatus.refused("kb_documents", "the knowledge base cannot be reached", time.monotonic())
        documents = wrapper("documents", {"documents": [], "total": 0, "status": down})
        with pytest.raises(HTTPException) as raised:
            documents.run_api()
        assert raised.value.status_code == 503
        assert "the knowledge base cannot be reached" in raised.value.detail

    def test_an_empty_knowledge_base_is_an_empty_page(self) -> None:
        fine = SourceStatus(source="kb_documents", status="success", execution_time_ms=1.0)
        page = wrapper("documents", {"documents": [], "total": 0, "status": fine}).run_api()
        assert page["documents"] == [] and page["total"] == 0


class TestDocument:
    def test_a_knowledge_base_that_is_down_is_not_a_missing_document(self) -> None:
        down = SourceStatus.refused("kb_document", "the knowledge base cannot be reached", time.monotonic())
        document = wrapper("document", {"document": None, "chunks": [], "status": down})
        with pytest.raises(HTTPException) as raised:
            document.run_api("doc_1")
        assert raised.value.status_code == 503

    def test_a_missing_document_is_404(self) -> None:
        fine = SourceStatus(source="kb_document", status="success", execution_time_ms=1.0)
        with pytest.raises(HTTPException) as raised:
            wrapper("document", {"document": None, "chunks": [], "status": fine}).run_api("doc_1")
        assert raised.value.status_code == 404

    def test_a_chunk_shows_no_metadata_only_the_pipeline_reads(self) -> None:
        from haystack import Document

        fine = SourceStatus(source="kb_document", status="success", execution_time_ms=1.0)
        chunk = Document(
            id="doc_1:0",
            content="Quillon Works opened in 1961.",
            meta={"chunk_index": 0, "page_number": 2, "sentence_terms": "quillon work open 1961|"},
        )
        found = {"document": {"document_id": "doc_1", "title": "Quillon"}, "chunks": [chunk], "status": fine}
        detail = wrapper("document", found).run_api("doc_1")
        assert detail["chunks"][0]["metadata"] == {"chunk_index": 0, "page_number": 2}


class TestResearchSources:
    @pytest.mark.parametrize(
        "sources,asked",
        [
            (["auto"], ["auto"]),
            (["all"], ["kb", "graph", "web", "arxiv", "memory"]),
            ([" Web ", "kb"], ["web", "kb"]),
            (None, list(DEFAULT_SOURCES)),  # no sources: the one default of every surface (auto)
        ],
    )
    def test_the_catalogs_selections_are_accepted(self, sources, asked) -> None:
        research = wrapper("research")
        asyncio.run(research.run_api_async(question="Who won?", sources=sources))
        assert research.catalog.research_async.await_args.kwargs.get("sources") == asked

    def test_an_unknown_source_is_a_422_that_names_the_choices(self) -> None:
        with pytest.raises(HTTPException) as raised:
            asyncio.run(wrapper("research").run_api_async(question="Who won?", sources=["tv"]))
        assert raised.value.status_code == 422
        assert "Unknown source tv; choose from kb, graph, web, arxiv, memory, auto" in raised.value.detail


class TestWrappersReadTheirPipelinesOutputs:
    def test_every_output_a_wrapper_reads_is_one_its_catalog_pipeline_names(self) -> None:
        """A wrapper reading an output its pipeline does not have (a `list_status` for `status`) sees None and
        answers an empty 200 for a source that is down; the names must agree with pipelines.yaml."""
        import ast

        from pipelines.catalog import PipelineCatalog
        from tests.pipelines.knowledge import REPO_CATALOG

        catalog = PipelineCatalog(REPO_CATALOG)
        checked = 0
        for folder in sorted(path for path in WRAPPERS_DIR.iterdir() if (path / "pipeline_wrapper.py").is_file()):
            name = getattr(wrapper_module(folder.name).PipelineWrapper, "pipeline_name", None)
            if name not in catalog.names():
                continue
            tree = ast.parse((folder / "pipeline_wrapper.py").read_text())
            read = {
                node.slice.value
                for node in ast.walk(tree)
                if isinstance(node, ast.Subscript)
                and getattr(node.value, "id", None) == "outputs"
                and isinstance(node.slice, ast.Constant)
            } | {
                node.args[0].value
                for node in ast.walk(tree)
                if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and getattr(node.func.value, "id", None) == "outputs"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            }
            assert read <= set(catalog.spec(name).outputs), (folder.name, read - set(catalog.spec(name).outputs))
            checked += bool(read)
        assert checked >= 5
