"""`GetDocument`: its statuses (construction and serialisation: test_knowledge_base_component.py; the document
itself: test_conformance.py)."""

from __future__ import annotations

import uuid

import pytest

from components.contracts import StatusKind, document_to_chunk
from components.knowledge_base.get_document import GetDocument
from tests.components.knowledge_base.conftest import closed_port, environment
from tests.components.knowledge_base.kb_corpus import conformance_corpus


class TestGetDocument:
    def test_empty_id_is_an_error_status(self):
        result = GetDocument(collection="never_opened").run(document_id="  ")
        assert result["document"] is None and result["chunks"] == []
        assert result["status"].status is StatusKind.ERROR and result["status"].message == "the document id is empty"

    @pytest.mark.integration
    def test_found_and_not_found(self, database_url, embedding_model):
        from components.knowledge_base.factory import open_knowledge_base

        collection = f"t_{uuid.uuid4().hex[:10]}"
        store = open_knowledge_base(collection=collection)
        document, chunks = conformance_corpus(embedding_model)[2]
        store.upsert_document(document, chunks)
        result = GetDocument(collection=collection).run(document_id="sourdough")
        assert result["status"].status is StatusKind.SUCCESS and result["status"].total_found == 2
        assert result["document"]["url"] == "https://example.org/sourdough" and result["document"]["chunk_count"] == 2
        first = document_to_chunk(result["chunks"][0])
        assert first.source_url == "https://example.org/sourdough" and first.metadata["section_title"] == "Starter"
        assert first.metadata["collection_name"] == collection and first.metadata["doc_type"] == "web"
        missing = GetDocument(collection=collection).run(document_id="bread")
        assert missing["document"] is None and missing["status"].status is StatusKind.SUCCESS
        assert missing["status"].message == f"no document with id 'bread' in the knowledge base '{collection}'"

    @pytest.mark.integration
    def test_unreachable_database_is_an_error_status(self):
        url = f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2"
        with environment({"KB_BACKEND": "pgvector", "DATABASE_URL": url, "TOOL_RETRIES": "0"}):
            result = GetDocument(collection="kb_down").run(document_id="a")
        assert result["status"].status is StatusKind.ERROR and "Cannot connect" in result["status"].message
