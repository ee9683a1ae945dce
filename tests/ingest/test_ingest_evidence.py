"""Ingestion writes the ranker's evidence: in-context sentence vectors and term counts, from the same pass."""

from __future__ import annotations

import numpy as np
import pytest

from components.text.analyzer import sentence_terms_counts, sentence_terms_record, term_counts
from ingest.ingestor import Ingestor

TEXT = (
    "PostgreSQL began as the POSTGRES project at the University of California, Berkeley, in 1986. "
    "Michael Stonebraker led it for eight years. In 1996 the project was renamed PostgreSQL.\n\n"
    "The pgvector extension adds vector similarity search. It supports HNSW and IVFFlat indexes."
)


@pytest.mark.integration
class TestIngestedEvidence:
    def test_sentences_and_term_counts_are_stored(self, store, embedding_model):
        report = Ingestor(store=store, hooks=[]).ingest_text(TEXT, title="Postgres history", source="notes/pg")
        [(document, chunks)] = list(store.iter_chunks())
        assert report.chunks_written == len(chunks) >= 1
        for chunk in chunks:
            # Every sentence of the chunk got a vector from the chunk's own forward pass.
            assert len(chunk.sentence_spans) >= 2
            assert chunk.sentence_embeddings.shape == (len(chunk.sentence_spans), embedding_model.dimension)
            pieces = [chunk.text[start:end] for start, end in chunk.sentence_spans]
            assert all(piece == piece.strip() and piece for piece in pieces)
            # The same sentences are in the chunk's metadata, which every backend returns with a search hit.
            assert chunk.metadata["sentence_spans"] == [[start, end] for start, end in chunk.sentence_spans]
            # Their terms too, so that ranking a retrieved chunk reads them instead of analysing it again.
            assert chunk.metadata["sentence_terms"] == sentence_terms_record(chunk.text, chunk.sentence_spans)
            assert sentence_terms_counts(chunk.metadata["sentence_terms"], len(chunk.sentence_spans)) == term_counts(
                chunk.text
            )
            assert chunk.term_counts == term_counts(f"{document.title}\n{chunk.text}")
            # The chunk vector is still exactly what the embedder gives for the chunk text.
            assert np.allclose(chunk.embedding, embedding_model.embed([chunk.text])[0], atol=1e-4)
        # "It supports HNSW ..." names pgvector only through its context, and its in-context vector knows that.
        last = chunks[-1]
        question = embedding_model.embed_one("Which index types does pgvector support?")
        cosines = {
            last.text[s:e]: c for s, e, c in store.sentence_similarities([last.chunk_id], question)[last.chunk_id]
        }
        history = [c for sentence, c in cosines.items() if "PostgreSQL" in sentence or "Stonebraker" in sentence]
        assert len(history) == 3 and cosines["It supports HNSW and IVFFlat indexes."] > max(history)

        store.index._totals = None
        statistics = store.term_statistics(["postgresql", "stonebrak", "hnsw", "absent"])
        assert statistics.n_chunks == len(chunks)
        assert statistics.df["stonebrak"] >= 1 and statistics.df["absent"] == 0

    def test_reingesting_a_changed_document_replaces_its_terms(self, store):
        ingestor = Ingestor(store=store, hooks=[])
        ingestor.ingest_text("Cats chase mice in the barn.", title="Animals", source="notes/animals")
        ingestor.ingest_text("Dogs guard the farm at night.", title="Animals", source="notes/animals")
        store.index._totals = None
        statistics = store.term_statistics(["cat", "dog", "anim"])
        assert statistics.n_chunks == 1
        assert statistics.df == {"cat": 0, "dog": 1, "anim": 1}
