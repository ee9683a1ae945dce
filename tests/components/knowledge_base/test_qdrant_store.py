"""The Qdrant backend against a real local-mode folder (and the shared backend cases)."""

from __future__ import annotations

import socket

import pytest

from components.knowledge_base.qdrant_store import QdrantKnowledgeBase, point_id
from components.settings import Settings
from tests.components.knowledge_base.backend_cases import BackendCases


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def backend_settings(tmp_path_factory):
    return Settings(research_data_dir=tmp_path_factory.mktemp("qdrant-kb"))


@pytest.fixture()
def open_store(backend_settings):
    def open_(collection: str, **kwargs):
        return QdrantKnowledgeBase(collection, backend_settings, **kwargs)

    return open_


@pytest.fixture()
def unreachable_store():
    settings = Settings(qdrant_url=f"http://127.0.0.1:{_closed_port()}")
    return lambda: QdrantKnowledgeBase("unreachable", settings)


@pytest.mark.integration
class TestQdrantKnowledgeBase(BackendCases):
    backend = "qdrant"

    def test_point_ids_are_stable_uuids(self):
        assert point_id("doc:1") == point_id("doc:1") != point_id("doc:2")
        assert len(point_id("doc:1")) == 36

    def test_two_collections_share_one_local_folder(self, backend_settings, collection_name):
        first = QdrantKnowledgeBase(collection_name, backend_settings)
        second = QdrantKnowledgeBase(collection_name + "_b", backend_settings)
        try:
            assert first.count_chunks() == 0 and second.count_documents() == 0
        finally:
            first.close()
            second.close()

    def test_qdrant_path_setting_chooses_the_folder(self, tmp_path, collection_name):
        store = QdrantKnowledgeBase(collection_name, Settings(research_data_dir=tmp_path, qdrant_path=tmp_path / "q"))
        try:
            assert "local mode" in store.describe() and str(tmp_path / "q") in store.describe()
            assert (tmp_path / "q").is_dir()
        finally:
            store.close()
