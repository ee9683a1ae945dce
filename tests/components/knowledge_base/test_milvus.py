"""The knowledge base on Milvus (`KnowledgeBase` over `MilvusChunkIndex` and milvus-haystack's store) against a real
milvus-lite folder: the shared backend cases, and what only Milvus does."""

from __future__ import annotations

from dataclasses import replace

import pytest

from components.contracts import ScoreKind, StatusKind
from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.milvus_index import MilvusChunkIndex, document_store_for, open_milvus_document_store
from components.knowledge_base.registry import DocumentRegistry
from components.settings import Settings
from tests.components.knowledge_base.backend_cases import BackendCases
from tests.components.knowledge_base.conftest import closed_port


@pytest.fixture(scope="module")
def backend_settings(tmp_path_factory):
    return Settings(research_data_dir=tmp_path_factory.mktemp("milvus-kb"))


@pytest.fixture()
def open_store(backend_settings, database_url):
    def open_(collection: str, dimension: int = 384, settings: Settings | None = None):
        store = document_store_for(settings or backend_settings, collection, dimension)
        index = MilvusChunkIndex(store, embedding_model=backend_settings.embedding_model, dimension=dimension)
        # The registry tables the factory gives a Milvus collection (so a fresh process sees the same documents).
        return KnowledgeBase(index, DocumentRegistry(collection, url=database_url, table_prefix=f"milvus_{collection}"))

    return open_


@pytest.fixture()
def unreachable_store():
    settings = Settings(milvus_uri=f"http://127.0.0.1:{closed_port()}")
    return lambda: knowledge_base_for(document_store_for(settings, "unreachable", 384))


@pytest.mark.integration
class TestMilvusKnowledgeBase(BackendCases):
    backend = "milvus"

    def test_invalid_collection_name_is_a_clear_error(self, tmp_path):
        with pytest.raises(ValueError, match="not allowed in Milvus"):
            open_milvus_document_store("bad-name; drop", uri=str(tmp_path / "kb.db"))

    def test_l2_metric_gives_the_same_cosines_and_survives_reopening(
        self, tmp_path, collection_name, documents, embedding_model, open_store
    ):
        store = open_store(collection_name, settings=Settings(research_data_dir=tmp_path, milvus_metric="L2"))
        for document, chunks in documents:
            store.upsert_document(document, chunks)
        query = embedding_model.embed_one("wild yeast fermentation")
        first = store.dense_search(query, 3)
        store.close()
        # Reopened with the COSINE default: the collection's own L2 index decides how distances are read.
        reopened = open_store(collection_name, settings=Settings(research_data_dir=tmp_path))
        try:
            again = reopened.dense_search(query, 3)
            assert [h.score_kind for h in again] == [ScoreKind.L2] * 3
            assert [h.chunk.chunk_id for h in again] == [h.chunk.chunk_id for h in first]
            stored = {c.chunk_id: c for _, cs in reopened.iter_chunks() for c in cs}
            for hit in again:
                assert hit.raw_score == pytest.approx(2.0 - 2.0 * hit.cosine, abs=1e-4)  # squared L2 of unit vectors
                assert hit.cosine == pytest.approx(float(stored[hit.chunk.chunk_id].embedding @ query), abs=1e-4)
        finally:
            reopened.drop()
            reopened.close()

    def test_the_ranker_evidence_round_trips(self, loaded, documents, embedding_model):
        from components.text.analyzer import term_counts

        document, chunks = documents[0]
        chunk = chunks[0]
        cut = chunk.text.index(" ", len(chunk.text) // 2)
        chunk = replace(
            chunk,
            sentence_spans=[(0, cut), (cut + 1, len(chunk.text))],
            sentence_embeddings=embedding_model.embed([chunk.text[:cut], chunk.text[cut + 1 :]]),
            term_counts=term_counts(f"{document.title}\n{chunk.text}"),
        )
        loaded.upsert_document(document, [chunk, *chunks[1:]])
        query = embedding_model.embed_one(chunk.text[:cut])
        similarities = loaded.sentence_similarities([chunk.chunk_id, chunks[-1].chunk_id], query)
        assert list(similarities) == [chunk.chunk_id]
        rows = similarities[chunk.chunk_id]
        assert [(start, end) for start, end, _ in rows] == chunk.sentence_spans
        assert [value for _, _, value in rows] == pytest.approx(list(chunk.sentence_embeddings @ query), abs=2e-3)
        term = next(iter(chunk.term_counts))
        stats = loaded.term_statistics([term, "zzzunseen"])
        assert stats.n_chunks == 1 and stats.df == {term: 1, "zzzunseen": 0}
        assert stats.avg_terms == pytest.approx(sum(chunk.term_counts.values()))
        loaded.delete_document(document.document_id)
        assert loaded.term_statistics([term]) is None
        assert loaded.sentence_similarities([chunk.chunk_id], query) == {}


@pytest.mark.integration
def test_the_catalog_puts_the_milvus_store_in_the_yaml_and_its_components_share_one_client(tmp_path, monkeypatch):
    import yaml

    from components.knowledge_base.search import KnowledgeBaseSearch
    from components.settings import reload_settings
    from pipelines.catalog import PipelineCatalog
    from tests.pipelines.knowledge import REPO_CATALOG

    monkeypatch.setenv("KB_BACKEND", "milvus")
    monkeypatch.setenv("MILVUS_URI", str(tmp_path / "kb.db"))
    monkeypatch.setenv("MILVUS_TOKEN", "s3cret-milvus-token")  # a lite file never uses it; never dumped either way
    reload_settings()
    try:
        dumped = PipelineCatalog(REPO_CATALOG).dumps()
        assert "s3cret-milvus-token" not in dumped
        components = yaml.safe_load(dumped)["pipelines"]["research"]["pipeline"]["components"]
        store = components["kb_dense"]["init_parameters"]["document_store"]
        assert store["type"] == "milvus_haystack.document_store.MilvusDocumentStore"
        params = store["init_parameters"]
        assert params["drop_old"] is False and params["connection_args"] == {"uri": str(tmp_path / "kb.db")}
        assert params["builtin_function"][0]["type"].endswith("BM25BuiltInFunction")
        assert components["ranker"]["init_parameters"]["document_store"] == store
        assert PipelineCatalog.loads(dumped).dumps() == dumped
        # Two components deserialised from the same YAML: two store objects for one file, one client between them.
        dense = KnowledgeBaseSearch.from_dict(components["kb_dense"])
        keyword = KnowledgeBaseSearch.from_dict(components["kb_keyword"])
        dense.warm_up()
        keyword.warm_up()
        assert dense._kb.get().index.client is keyword._kb.get().index.client
        status = dense.run(query="sourdough")["status"]
        assert status.status is StatusKind.SUCCESS and status.total_found == 0, status.message  # reached, empty
    finally:
        monkeypatch.delenv("KB_BACKEND")
        monkeypatch.delenv("MILVUS_URI")
        reload_settings()
        from components.knowledge_base.factory import close_knowledge_bases

        close_knowledge_bases()
