"""`ListDocuments`: clamps and statuses (construction and serialisation: test_knowledge_base_component.py;
paging itself: test_conformance.py)."""

from __future__ import annotations

import uuid

import pytest

from components.contracts import StatusKind
from components.knowledge_base.list_documents import ListDocuments
from tests.components.knowledge_base.conftest import closed_port, environment
from tests.components.knowledge_base.kb_corpus import conformance_corpus


class TestListDocuments:
    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"limit": "all"}, "limit must be a number"),
            ({"filters": {"date_from": "2024-02-30"}}, "date_from must be a date"),
            ({"filters": {"tags": ["x"]}}, "unknown filter tags"),
            ({"search": "s" * 2001}, "longer than 2,000 characters"),
        ],
    )
    def test_bad_input_is_an_error_status(self, kwargs, message):
        result = ListDocuments(collection="never_opened").run(**kwargs)
        assert result["documents"] == [] and result["total"] == 0
        assert result["status"].status is StatusKind.ERROR and message in result["status"].message

    @pytest.mark.integration
    def test_clamps_and_counts(self, database_url, embedding_model):
        from components.knowledge_base.factory import open_knowledge_base

        collection = f"t_{uuid.uuid4().hex[:10]}"
        store = open_knowledge_base(collection=collection)
        for document, chunks in conformance_corpus(embedding_model):
            store.upsert_document(document, chunks)
        listing = ListDocuments(collection=collection)
        one = listing.run(limit=-3)
        assert len(one["documents"]) == 1 and one["total"] == 5 and one["status"].total_found == 5
        everything = listing.run(limit=1000, offset=-1)
        assert len(everything["documents"]) == 5 and sum(d["chunk_count"] for d in everything["documents"]) == 10
        assert listing.run(offset=5)["documents"] == [] and listing.run(offset=5)["total"] == 5
        dated = listing.run(filters={"date_from": "2022-01-01", "date_to": "2023-12-31"})
        assert {d["document_id"] for d in dated["documents"]} == {"fulltext", "solar"}

    @pytest.mark.integration
    def test_unreachable_database_is_an_error_status(self):
        url = f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2"
        with environment({"KB_BACKEND": "pgvector", "DATABASE_URL": url, "TOOL_RETRIES": "0"}):
            result = ListDocuments(collection="kb_down").run()
        assert result["status"].status is StatusKind.ERROR and result["total"] == 0
