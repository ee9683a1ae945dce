"""`KnowledgeBase`: the order of its writes and how it attributes hits, with the index mocked and a real registry."""

from __future__ import annotations

from unittest.mock import Mock

import numpy as np
import pytest
from haystack import Document

from components.contracts import ScoreKind
from components.knowledge_base.chunk_index import ChunkIndex, IndexHit
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.registry import DocumentRegistry
from components.knowledge_base.store import ChunkRecord, DocumentRecord, SearchFilters


def _unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=8).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _document(document_id: str, chunks: int, source: str | None = None):
    document = DocumentRecord(document_id, f"Title {document_id}", source or f"files/{document_id}.md", "md", "h")
    records = [ChunkRecord(f"{document_id}:{i}", document_id, i, f"text {i}", _unit(i)) for i in range(chunks)]
    return document, records


@pytest.fixture()
def index():
    index = Mock(spec=ChunkIndex)
    index.backend, index.collection, index.embedding_model, index.dimension = "mock", "unused", "model", 8
    return index


@pytest.fixture()
def kb(index, database_url, collection_name):
    registry = DocumentRegistry(collection_name, url=database_url)
    yield KnowledgeBase(index, registry)
    registry.drop()


@pytest.mark.integration
class TestKnowledgeBase:
    def test_upsert_writes_the_index_first_and_deletes_stale_chunks_last(self, kb, index):
        calls = []
        index.write.side_effect = lambda docs, evidence: calls.append(("write", [d.id for d in docs]))
        index.delete.side_effect = lambda ids: calls.append(("delete", ids))
        kb.upsert_document(*_document("a", 3))
        document, chunks = _document("a", 1)
        table = f'"{kb.collection}_documents"'

        def also(conn) -> None:
            calls.append(("also", conn.execute(f"SELECT chunk_ids FROM {table}").fetchone()[0]))

        kb.upsert_document(document, chunks, also=also)
        assert calls == [
            ("write", ["a:0", "a:1", "a:2"]),
            ("write", ["a:0"]),
            ("also", ["a:0"]),  # inside the registry's transaction: it sees the new row
            ("delete", ["a:1", "a:2"]),
        ]
        written = index.write.call_args_list[0].args[0][1]
        assert written.meta["document_id"] == "a" and written.meta["chunk_index"] == 1 and written.embedding

    def test_a_failed_index_write_leaves_the_registry_untouched(self, kb, index):
        index.write.side_effect = RuntimeError("index down")
        with pytest.raises(RuntimeError):
            kb.upsert_document(*_document("a", 2))
        assert kb.count_documents() == 0

    def test_delete_goes_registry_first_then_index(self, kb, index):
        kb.upsert_document(*_document("a", 2))
        assert kb.delete_document("a") is True
        index.delete.assert_called_once_with(["a:0", "a:1"])
        assert kb.delete_document("a") is False and index.delete.call_count == 1

    def test_chunks_are_checked_before_anything_is_written(self, kb, index):
        document, chunks = _document("a", 1)
        chunks[0].embedding = None
        with pytest.raises(ValueError, match="no embedding"):
            kb.upsert_document(document, chunks)
        chunks[0].embedding = np.ones(3, dtype=np.float32)
        with pytest.raises(ValueError, match="3 embedding dimensions"):
            kb.upsert_document(document, chunks)
        index.write.assert_not_called()

    def test_hits_get_their_documents_and_orphans_are_dropped(self, kb, index):
        kb.upsert_document(*_document("a", 2))
        kb.upsert_document(*_document("b", 1))
        own = Document(id="a:1", content="text 1", meta={"document_id": "a", "chunk_index": 1, "page_number": 4})
        foreign = Document(id="b:0", content="written by someone else", meta={"file_path": "x.txt"})
        orphan = Document(id="gone:0", content="a crash between writes", meta={"document_id": "gone"})
        index.dense.return_value = [
            IndexHit(own, 0.9, ScoreKind.COSINE, 0.9),
            IndexHit(orphan, 0.8, ScoreKind.COSINE, 0.8),
            IndexHit(foreign, 0.7, ScoreKind.COSINE, 0.7),
        ]
        hits = kb.dense_search(_unit(1), 3, SearchFilters(doc_types=("md",)))
        assert [(h.chunk.chunk_id, h.document.document_id, h.total_chunks) for h in hits] == [
            ("a:1", "a", 2),
            ("b:0", "b", 1),
        ]
        assert hits[0].chunk.metadata == {"page_number": 4} and hits[1].chunk.metadata == {"file_path": "x.txt"}
        filters = index.dense.call_args.args[2]
        assert filters["conditions"] == [{"field": "meta.doc_type", "operator": "in", "value": ["md"]}]
        with pytest.raises(ValueError, match="dimensions"):
            kb.dense_search(np.ones(5, dtype=np.float32), 3)

    def test_get_document_orders_the_chunks_by_the_registry(self, kb, index):
        kb.upsert_document(*_document("a", 3))
        index.fetch.return_value = [Document(id=f"a:{i}", content=f"text {i}", meta={}) for i in (2, 0, 1)]
        document, chunks = kb.get_document("a")
        index.fetch.assert_called_once_with(["a:0", "a:1", "a:2"])
        assert [(c.chunk_id, c.chunk_index) for c in chunks] == [("a:0", 0), ("a:1", 1), ("a:2", 2)]
        assert kb.get_document("missing") is None

    def test_get_document_with_evidence_gives_the_chunks_stored_sentence_vectors(self, kb, index):
        from components.knowledge_base.chunk_index import ChunkEvidence

        kb.upsert_document(*_document("a", 2))
        index.fetch.return_value = [Document(id=f"a:{i}", content=f"text {i}", meta={}) for i in (0, 1)]
        vectors = np.stack([_unit(7)])
        index.evidence.return_value = {"a:1": ChunkEvidence("a:1", [(0, 6)], vectors, {"text": 1})}
        _, chunks = kb.get_document("a", with_evidence=True)
        index.evidence.assert_called_once_with(["a:0", "a:1"])
        assert chunks[0].sentence_embeddings is None and chunks[1].sentence_spans == [(0, 6)]
        assert np.allclose(chunks[1].sentence_embeddings, vectors)
        index.evidence.reset_mock()
        _, plain = kb.get_document("a")  # by default no evidence is read
        index.evidence.assert_not_called()
        assert plain[1].sentence_embeddings is None
