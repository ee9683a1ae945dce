"""`DocumentRegistry` against the session's embedded PostgreSQL: replacing, deleting, attributing, listing."""

from __future__ import annotations

import datetime as dt

import pytest

from components.knowledge_base.registry import DocumentRegistry, validate_collection
from components.knowledge_base.store import DocumentRecord, KnowledgeBaseMismatch, SearchFilters


def _document(document_id: str, source: str | None = None, **fields) -> DocumentRecord:
    values = {
        "title": f"Title {document_id}",
        "source": source or f"files/{document_id}.md",
        "doc_type": "md",
        "content_hash": f"hash-{document_id}",
        "text": f"Text of {document_id}.",
    }
    values.update(fields)
    return DocumentRecord(document_id=document_id, **values)


@pytest.mark.integration
class TestDocumentRegistry:
    @pytest.fixture()
    def registry(self, database_url, collection_name):
        registry = DocumentRegistry(collection_name, url=database_url)
        yield registry
        registry.drop()

    def test_put_returns_the_chunks_the_new_version_no_longer_has(self, registry):
        assert registry.put(_document("a"), ["a:0", "a:1", "a:2"]) == []
        assert registry.put(_document("a", content_hash="v2"), ["a:0", "a:3"]) == ["a:1", "a:2"]
        record, chunk_ids = registry.get("a")
        assert record.content_hash == "v2" and record.text == "Text of a." and chunk_ids == ["a:0", "a:3"]
        assert registry.chunk_documents(["a:0", "a:3", "a:1"]) == {"a:0": ("a", 0), "a:3": ("a", 1)}

    def test_a_new_id_for_the_same_source_replaces_the_older_document(self, registry):
        registry.put(_document("old", source="papers/x.pdf"), ["old:0", "old:1"])
        stale = registry.put(_document("new", source="papers/x.pdf"), ["new:0"])
        assert sorted(stale) == ["old:0", "old:1"]
        assert registry.get("old") is None and registry.find_by_source("papers/x.pdf").document_id == "new"
        assert registry.count() == 1 and registry.chunk_documents(["old:0"]) == {}

    def test_delete_returns_the_chunk_ids_and_runs_also_in_its_transaction(self, registry):
        registry.put(_document("a"), ["a:0", "a:1"])
        seen = []
        assert registry.delete("a", also=lambda conn: seen.append(conn.execute("SELECT 1").fetchone()[0])) == [
            "a:0",
            "a:1",
        ]
        assert seen == [1]
        assert registry.delete("a", also=seen.append) is None and seen == [1]

    def test_a_failing_also_rolls_the_document_back(self, registry):
        registry.put(_document("a"), ["a:0"])

        def fail(conn) -> None:
            raise RuntimeError("graph write failed")

        with pytest.raises(RuntimeError):
            registry.put(_document("a", content_hash="v2"), ["a:9"], also=fail)
        assert registry.get("a") == (registry.get("a")[0], ["a:0"])
        assert registry.get("a")[0].content_hash == "hash-a"

    def test_get_many_list_and_filters(self, registry):
        registry.put(_document("a", doc_type="pdf", date=dt.date(2023, 1, 1)), ["a:0", "a:1"])
        registry.put(_document("b", title="Sourdough_100%"), ["b:0"])
        registry.put(_document("c", doc_type="pdf", date=dt.date(2024, 6, 1)), [])
        many = registry.get_many(["a", "b", "missing"])
        assert set(many) == {"a", "b"} and many["a"][1] == 2 and many["a"][0].text == ""
        page, total = registry.list(limit=2)
        assert total == 3 and [s.document.document_id for s in page] == ["c", "b"]
        assert registry.list(search="dough_100%")[1] == 1 and registry.list(search="dough_1000")[1] == 0
        typed, total = registry.list(filters=SearchFilters(doc_types=("pdf",), date_from=dt.date(2024, 1, 1)))
        assert total == 1 and typed[0].document.document_id == "c" and typed[0].chunk_count == 0
        assert [(d.document_id, ids) for d, ids in registry.iter_documents(batch_size=2)] == [
            ("a", ["a:0", "a:1"]),
            ("b", ["b:0"]),
            ("c", []),
        ]

    def test_an_earlier_layout_is_one_sentence(self, database_url, collection_name):
        from components.database import connection_pool_for

        with connection_pool_for(database_url).connection() as conn:
            conn.execute(f'CREATE TABLE "{collection_name}_documents" (document_id text PRIMARY KEY)')
        try:
            with pytest.raises(KnowledgeBaseMismatch, match="earlier version") as raised:
                DocumentRegistry(collection_name, url=database_url)
            assert "\n" not in str(raised.value)
        finally:
            with connection_pool_for(database_url).connection() as conn:
                conn.execute(f'DROP TABLE "{collection_name}_documents"')

    @pytest.mark.parametrize("bad", ["", "1abc", "no spaces", "x" * 38, "semi;colon"])
    def test_collection_names_are_checked(self, bad):
        with pytest.raises(ValueError, match="not allowed"):
            validate_collection(bad)


@pytest.mark.integration
def test_same_named_collections_on_two_engines_keep_two_registries(database_url, collection_name):
    pgvector = DocumentRegistry(collection_name, url=database_url)
    qdrant = DocumentRegistry(collection_name, url=database_url, table_prefix=f"qdrant_{collection_name}")
    try:
        pgvector.put(_document("a"), ["a:0"])
        assert qdrant.count() == 0 and qdrant.collection == pgvector.collection == collection_name
        qdrant.put(_document("a"), ["a:0", "a:1"])
        assert pgvector.get("a")[1] == ["a:0"] and qdrant.delete("a") == ["a:0", "a:1"] and pgvector.count() == 1
    finally:
        qdrant.drop()
        pgvector.drop()
