"""`BookContentRetriever` and `retrieve_book_content` on a real Qdrant local folder (auth: a gate on 127.0.0.1)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from components.contracts import StatusKind
from components.knowledge_base.book_content import BookContentRetriever
from tests.components.knowledge_base.conftest import closed_port, environment, qdrant_books
from tests.contract_servers import ContractServer, Reply

_SHARED = BookContentRetriever()


def retrieve_book_content(query, top_k=None, min_score=None):  # noqa: ANN001, ANN201
    """The tool's answer from one shared retriever (as the executor keeps one per tool)."""
    return _SHARED.run(query=query, top_k=top_k, min_score=min_score)["result"]


class QdrantKeyGate(ContractServer):
    """Qdrant's API-key check: every request without the right `api-key` header gets Qdrant's 401 answer."""

    name = "qdrant"
    key_header = "api-key"
    key_scheme = ""

    def handle(self, method, path, query, body, headers) -> Reply:
        if not self.authorized(headers):
            return Reply(401, {"status": {"error": "Invalid API key or JWT"}, "time": 0.0})
        return Reply(404, {"status": {"error": f"Not found: {path}"}, "time": 0.0})


@pytest.fixture(scope="module")
def books(tmp_path_factory, embedding_model):
    with qdrant_books(tmp_path_factory.mktemp("qdrant-books"), embedding_model) as store:
        yield store


class TestBookContentRetriever:
    def test_init_clamps_and_serialises(self):
        tool = BookContentRetriever(top_k=50, min_score=-1)
        assert tool.top_k == 10 and tool.min_score == 0.0
        assert BookContentRetriever(top_k=0).top_k == 1
        data = BookContentRetriever(collection="books", top_k=3, min_score=0.4).to_dict()
        assert data["init_parameters"]["top_k"] == 3 and data["init_parameters"]["min_score"] == 0.4
        assert BookContentRetriever.from_dict(data).to_dict() == data
        with pytest.raises(ValueError, match="collection"):
            BookContentRetriever(collection=" ")

    @pytest.mark.integration
    def test_results_carry_pages_sections_and_the_query_embedding(self, books, embedding_model):
        query = "How does Milvus compute BM25 sparse vectors?"
        out = BookContentRetriever().run(query=query, min_score=0.3)
        result = out["result"]
        assert out["status"].status is StatusKind.SUCCESS
        top = result["results"][0]
        assert top["id"] == "doc-milvus:0" and top["content"].startswith("Milvus computes BM25")
        assert top["page_number"] == 1 and top["section_title"] is None
        assert top["metadata"]["document_title"] == "Full-text search in Milvus"
        assert top["metadata"]["document_total_chunks"] == 3
        assert all(0.3 <= item["score"] <= 1.0 for item in result["results"])
        assert [item["score"] for item in result["results"]] == sorted(
            (item["score"] for item in result["results"]), reverse=True
        )
        used = np.asarray(result["query_embedding_used"], dtype=np.float32)
        assert used.shape == (384,) and float(used @ embedding_model.embed_one(query)) == pytest.approx(1.0, abs=1e-4)
        bread = BookContentRetriever().run(query="sourdough starter wild yeast", top_k=1, min_score=0.3)["result"]
        assert bread["results"][0]["section_title"] == "Starter"
        assert bread["results"][0]["source_url"] == "https://example.org/bread.html"

    @pytest.mark.integration
    def test_top_k_is_clamped_to_ten_and_defaults_to_five(self, books):
        assert len(BookContentRetriever().run(query="text", top_k=99, min_score=0)["result"]["results"]) == 8
        assert len(BookContentRetriever().run(query="text", top_k=0, min_score=0)["result"]["results"]) == 1
        assert len(BookContentRetriever().run(query="text", min_score=0)["result"]["results"]) == 5

    @pytest.mark.integration
    def test_nothing_above_the_floor_is_the_empty_answer(self, books):
        result = retrieve_book_content("quarterly tax filing deadlines for corporations", min_score=0.9)
        assert result["results"] == [] and result["message"] == "No relevant content found"

    @pytest.mark.integration
    def test_invalid_queries_get_the_invalid_query_code(self, books):
        for kwargs in ({"query": ""}, {"query": "   "}, {"query": "x" * 1001}, {"query": "tea", "top_k": "many"}):
            result = retrieve_book_content(**kwargs)
            assert result["code"] == "INVALID_QUERY" and result["error"], kwargs
            assert "results" not in result

    @pytest.mark.integration
    def test_concurrent_calls_get_the_same_answers(self, books):
        queries = ["sourdough crust", "HNSW recall", "photovoltaic efficiency", "reciprocal rank fusion"] * 4
        expected = {q: [r["id"] for r in retrieve_book_content(q, top_k=3, min_score=0.2)["results"]] for q in queries}
        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(lambda q: retrieve_book_content(q, top_k=3, min_score=0.2), queries))
        for query, answer in zip(queries, answers, strict=True):
            assert [r["id"] for r in answer["results"]] == expected[query]

    @pytest.mark.integration
    def test_an_unreachable_server_is_a_connection_error(self, books):
        with environment({"QDRANT_URL": f"http://127.0.0.1:{closed_port()}", "TOOL_RETRIES": "0"}):
            result = BookContentRetriever(collection="elsewhere").run(query="bread")["result"]
        assert result["code"] == "CONNECTION_ERROR" and "Cannot reach Qdrant" in result["error"]

    @pytest.mark.integration
    def test_a_refused_api_key_is_an_auth_error(self, books):
        with QdrantKeyGate(api_key="right") as gate:
            with environment({"QDRANT_URL": gate.base_url, "QDRANT_API_KEY": "wrong"}):
                result = BookContentRetriever(collection="elsewhere").run(query="bread")["result"]
            assert gate.requests and gate.requests[0]["path"].startswith("/collections/")
        assert result["code"] == "AUTH_ERROR" and "QDRANT_API_KEY" in result["error"]
        assert "wrong" not in result["error"]
