"""The factory: which integration's store `KB_BACKEND` builds, the knowledge base over a given store, one sentence
on failure, and no process-wide registry of stores."""

from __future__ import annotations

import pytest

from components.knowledge_base.factory import (
    backend_of,
    document_store_for,
    knowledge_base_for,
    open_knowledge_base,
)
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.store import KnowledgeBaseUnavailable
from components.settings import Settings
from tests.components.knowledge_base.conftest import closed_port


@pytest.mark.integration
class TestFactory:
    def test_kb_backend_chooses_the_integrations_store(self, collection_name):
        from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

        store = document_store_for(Settings(kb_collection=collection_name))
        assert isinstance(store, PgvectorDocumentStore) and store.table_name == collection_name
        assert store.embedding_dimension == 384 and store.recreate_table is False
        assert backend_of(store) == "pgvector"
        assert document_store_for(Settings(), "other_one").table_name == "other_one"

    def test_every_call_builds_its_own_knowledge_base_over_the_same_tables(self, collection_name):
        first = open_knowledge_base(Settings(), collection_name)
        second = knowledge_base_for(document_store_for(Settings(), collection_name))
        try:
            assert isinstance(first, KnowledgeBase) and first is not second
            assert first.collection == second.collection == collection_name and first.backend == "pgvector"
        finally:
            first.drop()

    def test_a_missing_backend_module_is_one_sentence(self, monkeypatch):
        from components.knowledge_base import factory

        monkeypatch.setitem(factory.BACKENDS, "milvus", ("components.knowledge_base.no_such_index", "X", "name"))
        with pytest.raises(KnowledgeBaseUnavailable, match="not available in this installation"):
            document_store_for(Settings(kb_backend="milvus"), "kb")

    def test_an_unreachable_database_is_one_sentence(self, monkeypatch):
        monkeypatch.setenv("DATABASE_URL", f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2")
        with pytest.raises(KnowledgeBaseUnavailable) as raised:
            open_knowledge_base(Settings(), "kb")
        assert "\n" not in str(raised.value)

    def test_bad_collection_names_and_foreign_objects_are_refused(self):
        with pytest.raises(ValueError, match="not allowed"):
            document_store_for(Settings(), "no spaces; please")
        with pytest.raises(ValueError, match="not a knowledge-base document store"):
            knowledge_base_for(object())
