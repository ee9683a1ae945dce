"""`research status` counts the chunks search can return: chunks a crash left without a document record are
shown apart, never in the knowledge base's chunk count."""

from __future__ import annotations

import uuid

import pytest

from pipelines.status import collect_status
from tests.components.knowledge_base.conftest import environment
from tests.components.knowledge_base.kb_corpus import DOCUMENTS, corpus


@pytest.mark.integration
def test_chunks_without_a_document_record_are_not_counted(database_url, embedding_model, monkeypatch):
    from components.knowledge_base.factory import open_knowledge_base

    collection = f"t_counts_{uuid.uuid4().hex[:8]}"
    with environment({"KB_COLLECTION": collection}):
        store = open_knowledge_base(collection=collection)
        records = corpus(embedding_model)
        (first, first_chunks), (second, second_chunks) = records[0], records[1]
        store.upsert_document(first, first_chunks)

        def crash(*args, **kwargs):  # the process dies between the index write and the document record
            raise SystemExit("killed")

        monkeypatch.setattr(store.registry, "put", crash)
        with pytest.raises(SystemExit):
            store.upsert_document(second, second_chunks)
        monkeypatch.undo()

        counts = next(part for part in collect_status()["parts"] if part["name"] == "knowledge base")["counts"]
    assert counts["documents"] == 1
    assert counts["chunks"] == len(first_chunks) == len(DOCUMENTS[0][-1])
    assert counts["chunks without a document"] == len(second_chunks)
