"""`open_knowledge_base`: one store per backend, collection and location per process; one sentence on failure."""

from __future__ import annotations

import uuid

import pytest

from components.knowledge_base import factory
from components.knowledge_base.factory import close_knowledge_bases, open_knowledge_base
from components.knowledge_base.pgvector_store import PgvectorKnowledgeBase
from components.knowledge_base.store import KnowledgeBaseUnavailable
from components.settings import Settings
from tests.components.knowledge_base.conftest import closed_port


@pytest.mark.integration
class TestOpenKnowledgeBase:
    def test_one_instance_per_collection_and_location(self, settings, database_url):
        name = f"t_{uuid.uuid4().hex[:10]}"
        first = open_knowledge_base(settings, name)
        assert isinstance(first, PgvectorKnowledgeBase) and first.collection == name
        assert open_knowledge_base(settings, name) is first
        assert open_knowledge_base(Settings(), name) is first  # equal settings, same location
        other = open_knowledge_base(settings, f"{name}_b")
        assert other is not first
        elsewhere = Settings(database_url=database_url)
        assert open_knowledge_base(elsewhere, name) is not first  # another location, another instance
        default = open_knowledge_base(Settings(kb_collection=f"{name}_c"))
        assert default.collection == f"{name}_c"
        close_knowledge_bases()
        reopened = open_knowledge_base(settings, name)
        assert reopened is not first and reopened.count_documents() == 0
        for collection in (name, f"{name}_b", f"{name}_c"):
            open_knowledge_base(settings, collection).drop()

    def test_a_missing_backend_module_is_one_sentence(self, monkeypatch):
        monkeypatch.setitem(factory._LAZY_BACKENDS, "milvus", ("components.knowledge_base.no_such_store", "Nope"))
        with pytest.raises(KnowledgeBaseUnavailable, match="milvus knowledge base is not available") as caught:
            open_knowledge_base(Settings(kb_backend="milvus"), "kb")
        assert "\n" not in str(caught.value)

    def test_a_backend_that_cannot_open_is_one_sentence_and_not_cached(self):
        down = Settings(database_url=f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2")
        for _ in range(2):
            with pytest.raises(KnowledgeBaseUnavailable, match="Cannot connect"):
                open_knowledge_base(down, "kb")
        assert all(key[0] != "pgvector" or key[1] != "kb" for key in factory._STORES)

    def test_a_bad_collection_name_is_a_value_error(self, settings, database_url):
        with pytest.raises(ValueError, match="not allowed"):
            open_knowledge_base(settings, "no spaces; please")
