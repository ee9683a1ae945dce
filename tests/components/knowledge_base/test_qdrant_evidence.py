"""Qdrant's in-context sentence vectors for the ranker (a local-mode folder); its term statistics stay absent."""

from __future__ import annotations

import numpy as np
import pytest

from components.knowledge_base.qdrant_store import QdrantKnowledgeBase
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from components.settings import Settings


def _unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _document(sentences: int, seed: int):
    document = DocumentRecord(
        document_id="a", title="T", source="notes/a", doc_type="txt", content_hash=str(seed), text="One. Two. Three."
    )
    chunk = ChunkRecord(
        chunk_id="a-0",
        document_id="a",
        chunk_index=0,
        text="One. Two. Three.",
        embedding=_unit(1),
        sentence_spans=[(0, 4), (5, 9), (10, 16)][:sentences],
        sentence_embeddings=np.stack([_unit(seed * 10 + k) for k in range(sentences)]),
    )
    return document, [chunk]


@pytest.mark.integration
def test_sentence_similarities_follow_replace_and_delete(tmp_path, collection_name):
    store = QdrantKnowledgeBase(collection_name, Settings(research_data_dir=tmp_path))
    try:
        query = _unit(99)
        document, chunks = _document(3, seed=1)
        store.upsert_document(document, chunks)
        found = store.sentence_similarities(["a-0", "missing"], query)
        assert [(start, end) for start, end, _ in found["a-0"]] == [(0, 4), (5, 9), (10, 16)]
        assert np.allclose([c for _, _, c in found["a-0"]], chunks[0].sentence_embeddings @ query, atol=1e-5)

        document, chunks = _document(2, seed=2)  # the replacement has fewer sentences: none of the old ones stay
        store.upsert_document(document, chunks)
        found = store.sentence_similarities(["a-0"], query)["a-0"]
        assert len(found) == 2 and np.allclose([c for _, _, c in found], chunks[0].sentence_embeddings @ query)

        assert store.delete_document("a") is True
        assert store.sentence_similarities(["a-0"], query) == {}
        assert store.term_statistics(["one"]) is None  # no term statistics here: the ranker uses the candidates'
    finally:
        store.drop()
        store.close()
