"""The Milvus backend against a real milvus-lite folder (and the shared backend cases)."""

from __future__ import annotations

import socket

import pytest

from components.contracts import ScoreKind
from components.knowledge_base.milvus_store import MilvusKnowledgeBase, filter_expression
from components.knowledge_base.store import SearchFilters
from components.settings import Settings
from tests.components.knowledge_base.backend_cases import BackendCases


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def backend_settings(tmp_path_factory):
    return Settings(research_data_dir=tmp_path_factory.mktemp("milvus-kb"))


@pytest.fixture()
def open_store(backend_settings):
    def open_(collection: str, **kwargs):
        return MilvusKnowledgeBase(collection, backend_settings, **kwargs)

    return open_


@pytest.fixture()
def unreachable_store():
    settings = Settings(milvus_uri=f"http://127.0.0.1:{_closed_port()}")
    return lambda: MilvusKnowledgeBase("unreachable", settings)


@pytest.mark.integration
class TestMilvusKnowledgeBase(BackendCases):
    backend = "milvus"

    def test_filter_expression_quotes_values(self):
        assert filter_expression(None) == ""
        expr = filter_expression(SearchFilters(doc_types=('pd"f',), document_ids=("a\\b",)))
        assert expr == 'doc_type in ["pd\\"f"] and document_id in ["a\\\\b"]'

    def test_invalid_collection_name_is_a_clear_error(self, backend_settings):
        with pytest.raises(ValueError, match="must start with a letter"):
            MilvusKnowledgeBase("bad-name; drop", backend_settings)

    def test_l2_metric_gives_the_same_cosines_and_survives_reopening(
        self, tmp_path, collection_name, documents, embedding_model
    ):
        l2 = Settings(research_data_dir=tmp_path, milvus_metric="L2")
        store = MilvusKnowledgeBase(collection_name, l2)
        for document, chunks in documents:
            store.upsert_document(document, chunks)
        query = embedding_model.embed_one("wild yeast fermentation")
        first = store.dense_search(query, 3)
        store.close()
        # Reopened with the COSINE default: the collection's own L2 index decides how distances are read.
        reopened = MilvusKnowledgeBase(collection_name, Settings(research_data_dir=tmp_path))
        try:
            again = reopened.dense_search(query, 3)
            assert reopened.metric == "L2"
            assert [h.score_kind for h in again] == [ScoreKind.L2] * 3
            assert [h.chunk.chunk_id for h in again] == [h.chunk.chunk_id for h in first]
            for hit in again:
                assert hit.raw_score == pytest.approx(2.0 - 2.0 * hit.cosine, abs=1e-4)  # squared L2 of unit vectors
                stored = [c for d, cs in reopened.iter_chunks() for c in cs if c.chunk_id == hit.chunk.chunk_id][0]
                assert hit.cosine == pytest.approx(float(stored.embedding @ query), abs=1e-4)
        finally:
            reopened.close()
