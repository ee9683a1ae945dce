"""`FileIngester` as a pipeline component over the real knowledge base."""

from __future__ import annotations

import pytest
from haystack import Pipeline

from ingest.file_ingester import FileIngester


class TestFileIngester:
    def test_init_validates(self) -> None:
        with pytest.raises(ValueError, match="collection"):
            FileIngester(collection=" ")
        with pytest.raises(ValueError, match="force"):
            FileIngester(force="yes")  # type: ignore[arg-type]

    def test_to_dict_from_dict(self) -> None:
        data = FileIngester(collection="research", force=True).to_dict()
        assert data == {
            "type": "ingest.file_ingester.FileIngester",
            "init_parameters": {"document_store": None, "collection": "research", "force": True, "document_field": ""},
        }
        restored = FileIngester.from_dict(data)
        assert (restored.collection, restored.force) == ("research", True)
        named = FileIngester.from_dict(FileIngester(document_field=" case_ref ").to_dict())
        assert named.document_field == "case_ref"

    @pytest.mark.integration
    def test_run_in_a_pipeline(self, database_url, collection_name, work_dir) -> None:
        from components.knowledge_base.factory import open_knowledge_base

        (work_dir / "a.md").write_text("# Qdrant\n\nIn January 2024 Qdrant raised a Series A led by Spark Capital.")
        (work_dir / "b.pdf").write_bytes(b"%PDF-1.4 broken")
        pipeline = Pipeline()
        pipeline.add_component("ingester", FileIngester(collection=collection_name))
        result = pipeline.run({"ingester": {"sources": [str(work_dir)]}})["ingester"]
        assert result["report"]["added"] == [str((work_dir / "a.md").resolve())]
        assert result["report"]["failed"][0]["source"] == str((work_dir / "b.pdf").resolve())
        store = open_knowledge_base(collection=collection_name)
        try:
            document, chunks = store.get_document(result["document_ids"][0])
            assert document.title == "Qdrant" and chunks[0].metadata["section_title"] == "Qdrant"
            again = pipeline.run({"ingester": {"sources": [str(work_dir / "a.md")]}})["ingester"]
            assert again["report"]["skipped"] == [str((work_dir / "a.md").resolve())] and again["document_ids"] == []
        finally:
            store.drop()
