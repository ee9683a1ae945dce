"""`MilvusRagTool` against a real milvus-lite folder: the seed's Milvus RAG tool contract."""

from __future__ import annotations

import pytest

from components.contracts import StatusKind, document_to_chunk
from components.knowledge_base.milvus_rag_tool import MilvusRagTool, parse_date_range
from components.resilience import SourceError
from tests.components.knowledge_base.conftest import closed_port, environment
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


@pytest.fixture(scope="module")
def milvus_env(tmp_path_factory):
    folder = tmp_path_factory.mktemp("milvus-tool")
    values = {"KB_BACKEND": "milvus", "MILVUS_URI": str(folder / "kb.db")}
    with environment(values):
        yield values
    from components.knowledge_base.factory import close_knowledge_bases

    close_knowledge_bases()


def _load(collection: str, embedding_model, metric: str = "COSINE") -> None:
    from components.knowledge_base.factory import open_knowledge_base
    from components.settings import get_settings

    store = open_knowledge_base(get_settings().model_copy(update={"milvus_metric": metric}), collection)
    for document, chunks in corpus(embedding_model):
        store.upsert_document(document, chunks)


@pytest.fixture(scope="module")
def collection(milvus_env, embedding_model):
    _load("milvus_tool", embedding_model)
    return "milvus_tool"


class TestMilvusRagTool:
    def test_init_clamps_and_validates(self):
        tool = MilvusRagTool(top_k=0, min_relevance=3)
        assert tool.top_k == 1 and tool.min_relevance == 1.0
        assert MilvusRagTool(top_k=500).top_k == 50
        with pytest.raises(ValueError, match="mode"):
            MilvusRagTool(mode="sparse")
        with pytest.raises(ValueError, match="top_k must be a number"):
            MilvusRagTool(top_k="many")

    def test_to_dict_and_from_dict(self):
        tool = MilvusRagTool(collection="books", top_k=7, min_relevance=0.3, mode="hybrid", timeout_s=3)
        data = tool.to_dict()
        assert data["init_parameters"] == {
            "collection": "books",
            "top_k": 7,
            "min_relevance": 0.3,
            "mode": "hybrid",
            "source_name": "kb_milvus",
            "timeout_s": 3.0,
        }
        again = MilvusRagTool.from_dict(data)
        assert again.to_dict() == data

    def test_parse_date_range(self):
        assert parse_date_range({"start": "2023-01-01"})[0].isoformat() == "2023-01-01"
        assert parse_date_range(["2023-01-01", "2023-02-01"])[1].isoformat() == "2023-02-01"
        for bad in ({"start": "soon"}, {"begin": "2023-01-01"}, "2023", {"start": "2024-01-02", "end": "2024-01-01"}):
            with pytest.raises(SourceError):
                parse_date_range(bad)

    @pytest.mark.integration
    def test_run_returns_attributed_chunks_with_the_contract_outputs(self, collection, embedding_model):
        result = MilvusRagTool(collection=collection, top_k=3).run(query="How do I keep a sourdough starter alive?")
        assert result["status"].status is StatusKind.SUCCESS
        assert result["total_found"] == len(result["documents"]) == 3
        assert result["execution_time_ms"] > 0 and result["execution_time_ms"] == result["status"].execution_time_ms
        chunks = [document_to_chunk(document) for document in result["documents"]]
        assert chunks[0].id == "doc-bread:0" and chunks[0].source_title == "Baking sourdough bread"
        for chunk in chunks:
            assert all(key in chunk.metadata for key in KB_META)
            assert chunk.metadata["collection_name"] == collection
            assert chunk.metadata["similarity_score"] == pytest.approx(chunk.raw_score)
            assert 0.0 <= chunk.semantic_relevance <= 1.0
        relevances = [chunk.semantic_relevance for chunk in chunks]
        assert relevances == sorted(relevances, reverse=True)
        assert chunks[0].metadata["document_total_chunks"] == 2

    @pytest.mark.integration
    def test_filters_on_source_type_and_date_range(self, collection):
        tool = MilvusRagTool(collection=collection, top_k=10)
        pdf = tool.run(query="search indexes", filter_source_type=["pdf"])
        assert {d.meta["document_id"] for d in pdf["documents"]} == {"doc-milvus"} and pdf["total_found"] == 3
        dated = tool.run(query="search indexes", filter_date_range={"start": "2023-01-01", "end": "2023-12-31"})
        assert {d.meta["document_id"] for d in dated["documents"]} == {"doc-milvus"}
        both = tool.run(query="bread", filter_source_type="html", filter_date_range={"end": "2022-12-31"})
        assert {d.meta["document_id"] for d in both["documents"]} == {"doc-bread"}

    @pytest.mark.integration
    def test_min_relevance_drops_weak_chunks(self, collection):
        tool = MilvusRagTool(collection=collection, top_k=10)
        everything = tool.run(query="wild yeast", min_relevance=0.0)
        strong = tool.run(query="wild yeast", min_relevance=0.3)
        assert 0 < strong["total_found"] < everything["total_found"]
        assert all(d.meta["semantic_relevance"] >= 0.3 for d in strong["documents"])
        none = tool.run(query="wild yeast", min_relevance=5)  # clamped to 1.0: nothing is that close
        assert none["documents"] == [] and none["status"].status is StatusKind.SUCCESS and none["total_found"] == 0

    @pytest.mark.integration
    def test_l2_collection_gives_the_same_relevance(self, collection, embedding_model):
        _load("milvus_tool_l2", embedding_model, metric="L2")
        query = "sparse vectors for keyword queries"
        cosine = MilvusRagTool(collection=collection, top_k=4).run(query=query)["documents"]
        l2 = MilvusRagTool(collection="milvus_tool_l2", top_k=4).run(query=query)["documents"]
        assert [d.id for d in l2] == [d.id for d in cosine]
        assert [d.meta["semantic_relevance"] for d in l2] == pytest.approx(
            [d.meta["semantic_relevance"] for d in cosine], abs=1e-4
        )
        assert {d.meta["score_kind"] for d in l2} == {"l2"} and {d.meta["score_kind"] for d in cosine} == {"cosine"}

    @pytest.mark.integration
    def test_hybrid_fuses_and_reports_partial_when_one_list_fails(self, collection, monkeypatch):
        from components.knowledge_base.factory import open_knowledge_base
        from components.settings import get_settings

        tool = MilvusRagTool(collection=collection, top_k=3, mode="hybrid")
        fused = tool.run(query="sourdough starter")
        assert fused["status"].status is StatusKind.SUCCESS and fused["documents"][0].id == "doc-bread:0"
        assert {d.meta["score_kind"] for d in fused["documents"]} == {"cosine"}
        store = open_knowledge_base(get_settings(), collection)

        def broken(*args, **kwargs):
            raise RuntimeError("BM25 index unavailable")

        monkeypatch.setattr(store, "keyword_search", broken)
        partial = tool.run(query="sourdough starter loaf")
        assert partial["status"].status is StatusKind.PARTIAL and "keyword search failed" in partial["status"].message
        assert partial["documents"] and partial["documents"][0].meta["document_id"] == "doc-bread"

    @pytest.mark.integration
    def test_bad_input_gives_a_status_not_an_exception(self, collection):
        tool = MilvusRagTool(collection=collection)
        cases = {
            "the question is empty": {"query": "  "},
            "longer than 2,000": {"query": "x" * 2001},
            "start must be a date": {"query": "tea", "filter_date_range": {"start": "last spring"}},
            "after it ends": {"query": "tea", "filter_date_range": {"start": "2024-02-01", "end": "2024-01-01"}},
            "filter_source_type must be": {"query": "tea", "filter_source_type": [3]},
            "top_k must be a number": {"query": "tea", "top_k": "many"},
        }
        for expected, kwargs in cases.items():
            result = tool.run(**kwargs)
            assert result["documents"] == [] and result["total_found"] == 0
            assert result["status"].status is StatusKind.ERROR and expected in result["status"].message, kwargs

    @pytest.mark.integration
    async def test_run_async_matches_run(self, collection):
        tool = MilvusRagTool(collection=collection, top_k=4)
        sync = tool.run(query="HNSW recall", filter_source_type=["md"])
        result = await tool.run_async(query="HNSW recall", filter_source_type=["md"])
        assert [d.id for d in result["documents"]] == [d.id for d in sync["documents"]]
        assert result["status"].status is StatusKind.SUCCESS

    @pytest.mark.integration
    def test_unreachable_milvus_is_an_error_status(self, milvus_env):
        with environment({"MILVUS_URI": f"http://127.0.0.1:{closed_port()}"}):
            result = MilvusRagTool(collection="nowhere", timeout_s=5).run(query="tea", query_embedding=[0.05] * 384)
        assert result["documents"] == [] and result["status"].status is StatusKind.ERROR
        assert "Cannot reach Milvus" in result["status"].message
