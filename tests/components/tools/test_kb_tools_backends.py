"""`rag_search` on every knowledge-base backend (the Milvus RAG tool contract, now one tool over whichever backend is
configured) and `retrieve_book_content` on Qdrant, both through the executor."""

from __future__ import annotations

import jsonschema
import pytest

from components.contracts import StatusKind
from components.tools.executor import ToolExecutor
from components.tools.registry import get_tool
from tests.components.knowledge_base.conftest import KB_BACKENDS, backend_env, environment, qdrant_books
from tests.components.knowledge_base.kb_corpus import corpus

KB_META = (
    "document_id",
    "document_title",
    "collection_name",
    "chunk_index",
    "embedding_model",
    "similarity_score",
    "document_total_chunks",
)


@pytest.fixture(scope="module", params=KB_BACKENDS)
def backend(request, tmp_path_factory, embedding_model, database_url):  # noqa: ANN001, ANN201
    """The small test corpus on one backend, in a collection the tools (which read the settings) search."""
    folder = tmp_path_factory.mktemp(f"kb-tools-{request.param}")
    collection = f"kbtools_{request.param}"
    with environment({**backend_env(request.param, folder), "KB_COLLECTION": collection}):
        from components.knowledge_base.factory import close_knowledge_bases, open_knowledge_base

        store = open_knowledge_base()
        for document, chunks in corpus(embedding_model):
            store.upsert_document(document, chunks)
        yield request.param
        close_knowledge_bases()


@pytest.mark.integration
class TestRagSearchOnEveryBackend:
    def test_attributed_chunks_with_the_contract_outputs(self, backend) -> None:  # noqa: ANN001
        arguments = {"query": "How do I keep a sourdough starter alive?", "top_k": 3, "min_relevance": 0}
        outcome = ToolExecutor(profile="reader").run("rag_search", arguments)
        assert outcome.status.status is StatusKind.SUCCESS, outcome.status.message
        output = outcome.output
        jsonschema.validate(output, get_tool("rag_search").output_schema)
        assert output["total_found"] == len(output["chunks"]) == 3 and output["execution_time_ms"] > 0
        first = output["chunks"][0]
        assert first["id"] == "doc-bread:0" and first["source_title"] == "Baking sourdough bread"
        for chunk in output["chunks"]:
            assert all(key in chunk["metadata"] for key in KB_META), backend
            assert 0.0 <= chunk["semantic_relevance"] <= 1.0
        relevances = [chunk["semantic_relevance"] for chunk in output["chunks"]]
        assert relevances == sorted(relevances, reverse=True)

    def test_filters_on_source_type_and_date_range(self, backend) -> None:  # noqa: ANN001
        executor = ToolExecutor(profile="reader")

        def documents(**arguments) -> set[str]:  # noqa: ANN003
            query = {"query": "search indexes", "top_k": 10, "min_relevance": 0, **arguments}
            return {chunk["metadata"]["document_id"] for chunk in executor.run("rag_search", query).output["chunks"]}

        assert documents(filter_source_type=["pdf"]) == {"doc-milvus"}
        assert documents(filter_date_range={"start": "2023-01-01", "end": "2023-12-31"}) == {"doc-milvus"}
        assert documents(filter_source_type=["html"], filter_date_range={"end": "2022-12-31"}) == {"doc-bread"}

    def test_default_min_relevance_is_half(self, backend) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run("rag_search", {"query": "wild yeast", "top_k": 10})
        assert all(chunk["semantic_relevance"] >= 0.5 for chunk in outcome.output["chunks"])


@pytest.fixture(scope="module")
def books(tmp_path_factory, embedding_model):  # noqa: ANN001, ANN201
    with qdrant_books(tmp_path_factory.mktemp("qdrant-book-tool"), embedding_model) as store:
        yield store


@pytest.mark.integration
class TestRetrieveBookContentTool:
    @pytest.mark.parametrize(
        ("arguments", "check"),
        [
            ({"top_k": 0, "min_score": 0}, lambda o: len(o["results"]) == 1),
            ({"top_k": 99, "min_score": 0}, lambda o: len(o["results"]) == 8),  # clamped to 10; 8 chunks in all
            ({"top_k": 3, "min_score": -2}, lambda o: len(o["results"]) == 3),
            ({"top_k": 3, "min_score": 9}, lambda o: o["results"] == [] and o["message"]),
        ],
    )
    def test_contract_shape_and_clamps(self, books, arguments, check) -> None:  # noqa: ANN001
        query = {"query": "What is a sourdough starter?", **arguments}
        outcome = ToolExecutor(profile="reader").run("retrieve_book_content", query)
        assert outcome.status.ok, outcome.status.message
        jsonschema.validate(outcome.output, get_tool("retrieve_book_content").output_schema)
        assert check(outcome.output), outcome.output
        for result in outcome.output["results"]:
            assert {"page_number", "section_title", "source_url"} <= set(result)

    def test_an_invalid_query_is_its_error_code(self, books) -> None:  # noqa: ANN001
        outcome = ToolExecutor(profile="reader").run("retrieve_book_content", {"query": "   "})
        assert outcome.status.status is StatusKind.ERROR
        assert outcome.output["code"] == "INVALID_QUERY"
        jsonschema.validate(outcome.output, get_tool("retrieve_book_content").output_schema)
