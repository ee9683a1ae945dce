"""The Qdrant knowledge base (`KnowledgeBase` over `QdrantChunkIndex` and the document registry) against a real
local-mode folder: the shared backend cases, and what is Qdrant's own."""

from __future__ import annotations

import pytest

from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.qdrant_index import document_store_for
from components.settings import Settings
from tests.components.knowledge_base.backend_cases import BackendCases
from tests.components.knowledge_base.conftest import closed_port, environment


@pytest.fixture(scope="module")
def backend_settings(tmp_path_factory):
    return Settings(research_data_dir=tmp_path_factory.mktemp("qdrant-kb"))


def _open(settings: Settings, collection: str, dimension: int = 384) -> KnowledgeBase:
    return knowledge_base_for(document_store_for(settings, collection, dimension), settings.embedding_model)


@pytest.fixture()
def open_store(backend_settings, database_url):
    return lambda collection, **kwargs: _open(backend_settings, collection, **kwargs)


@pytest.fixture()
def unreachable_store():
    settings = Settings(qdrant_url=f"http://127.0.0.1:{closed_port()}", tool_timeout_s=2)
    return lambda: _open(settings, "unreachable")


@pytest.mark.integration
class TestQdrantKnowledgeBase(BackendCases):
    backend = "qdrant"

    def test_two_collections_share_one_local_folder(self, open_store, collection_name):
        first = open_store(collection_name)
        second = open_store(collection_name + "_b")
        try:
            assert first.count_chunks() == 0 and second.count_documents() == 0
            assert first.index.client is second.index.client
        finally:
            first.close()
            second.close()

    def test_qdrant_path_setting_chooses_the_folder(self, tmp_path, collection_name, database_url):
        store = _open(Settings(research_data_dir=tmp_path, qdrant_path=tmp_path / "q"), collection_name)
        try:
            assert store.index.document_store.path == str(tmp_path / "q") and (tmp_path / "q").is_dir()
        finally:
            store.close()


def test_the_catalog_shows_the_qdrant_store_and_round_trips_without_the_key():
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    from pipelines.catalog import PipelineCatalog, build_pipeline

    url = f"http://127.0.0.1:{closed_port()}"
    with environment({"KB_BACKEND": "qdrant", "QDRANT_URL": url, "QDRANT_API_KEY": "MARKER-key"}):
        dumped = PipelineCatalog().dumps()
        assert "haystack_integrations.document_stores.qdrant.document_store.QdrantDocumentStore" in dumped
        assert "MARKER-key" not in dumped and "QDRANT_API_KEY" in dumped
        assert "recreate_index: true" not in dumped and url in dumped
        again = PipelineCatalog.loads(dumped)
        store = build_pipeline(again.spec("documents")).get_component("list_documents").document_store
        assert isinstance(store, QdrantDocumentStore) and store.url == url and store.sparse_idf
        assert store.api_key.resolve_value() == "MARKER-key"
