"""What every knowledge-base tool component shares (`KnowledgeBaseComponent`): its construction checks, defaults and
serialisation."""

from __future__ import annotations

import pytest

from components.knowledge_base.book_content import BookContentRetriever
from components.knowledge_base.get_document import GetDocument
from components.knowledge_base.list_documents import ListDocuments
from components.knowledge_base.search import KnowledgeBaseSearch

COMPONENTS = [
    (GetDocument, "kb_document"),
    (ListDocuments, "kb_documents"),
    (BookContentRetriever, "kb_books"),
    (KnowledgeBaseSearch, "kb_dense"),
]


@pytest.mark.parametrize(("component", "source_name"), COMPONENTS)
class TestKnowledgeBaseComponent:
    def test_init(self, component, source_name, settings):
        made = component()
        # The timeout is the setting in force when the component is built, and serialised as such.
        assert (made.document_store, made.collection, made.timeout_s) == (None, None, settings.tool_timeout_s)
        assert made.to_dict()["init_parameters"]["timeout_s"] == settings.tool_timeout_s
        assert made.source_name == source_name
        assert component(source_name="kb_mine").source_name == "kb_mine"
        for refused in ({"collection": ""}, {"source_name": " "}, {"timeout_s": -1}):
            with pytest.raises(ValueError, match=next(iter(refused))):
                component(**refused)

    def test_to_dict_and_from_dict(self, component, source_name):
        data = component(collection="papers", timeout_s=2).to_dict()
        assert data["type"] == f"{component.__module__}.{component.__name__}"
        expected = {"document_store": None, "collection": "papers", "source_name": source_name, "timeout_s": 2.0}
        assert {key: data["init_parameters"][key] for key in expected} == expected
        assert component.from_dict(data).to_dict() == data
