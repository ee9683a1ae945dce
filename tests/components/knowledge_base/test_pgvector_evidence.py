"""The pgvector chunk index's ranking evidence: sentence vectors and term statistics kept in side tables beside the
integration's table, following every write, replacement and deletion."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import psycopg
import pytest

from components.knowledge_base.chunk_index import ChunkEvidence, ChunkIndex
from components.knowledge_base.factory import open_knowledge_base
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from components.text.analyzer import term_counts
from components.text.language import sentence_spans


def _unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _document(document_id: str, texts: list[str], source: str | None = None, seed: int = 0):
    document = DocumentRecord(
        document_id=document_id,
        title="Notes",
        source=source or f"files/{document_id}.md",
        doc_type="md",
        content_hash=f"hash-{document_id}-{seed}",
        text=" ".join(texts),
    )
    chunks = []
    for index, text in enumerate(texts):
        spans = sentence_spans(text)
        chunks.append(
            ChunkRecord(
                chunk_id=f"{document_id}-{seed}-{index}",
                document_id=document_id,
                chunk_index=index,
                text=text,
                embedding=_unit(seed * 100 + index),
                sentence_spans=spans,
                sentence_embeddings=np.stack([_unit(seed * 100 + index * 10 + k + 1) for k in range(len(spans))]),
                term_counts=term_counts(f"Notes {text}"),
            )
        )
    return document, chunks


@pytest.mark.integration
class TestPgvectorEvidence:
    @pytest.fixture()
    def store(self, database_url, collection_name):
        store = open_knowledge_base(collection=collection_name)
        yield store
        store.drop()
        store.close()

    def _statistics(self, store: KnowledgeBase, terms: list[str]):
        store.index._totals = None  # the chunk totals are cached for a few seconds; these tests change them at once
        return store.term_statistics(terms)

    def test_document_frequencies_follow_upsert_replace_and_delete(self, store):
        store.upsert_document(*_document("a", ["Cats chase mice. Cats sleep.", "Dogs chase cats."]))
        store.upsert_document(*_document("b", ["Dogs bark loudly."]))
        stats = self._statistics(store, ["cat", "dog", "chase", "note", "whale"])
        assert stats.n_chunks == 3
        assert stats.df == {"cat": 2, "dog": 2, "chase": 2, "note": 3, "whale": 0}
        # lengths in terms: "notes cats chase mice cats sleep" 6, "notes dogs chase cats" 4, "notes dogs bark loud" 4
        assert stats.avg_terms == pytest.approx(14 / 3)

        # Replacing "a" (same source, new id) takes its old terms out before the new ones go in.
        store.upsert_document(*_document("a2", ["Whales sing."], source="files/a.md", seed=1))
        stats = self._statistics(store, ["cat", "dog", "chase", "whale", "mice"])
        assert stats.n_chunks == 2
        assert stats.df == {"cat": 0, "dog": 1, "chase": 0, "whale": 1, "mice": 0}
        with store.registry.connection() as conn:
            terms = {row[0] for row in conn.execute(store.index._q("SELECT term FROM {terms}")).fetchall()}
        assert terms == {"note", "whale", "sing", "dog", "bark", "loud"}  # no rows left at zero

        assert store.delete_document("b") is True
        assert self._statistics(store, ["dog", "note"]).df == {"dog": 0, "note": 1}
        assert store.delete_document("a2") is True
        assert self._statistics(store, ["note"]) is None  # nothing with term counts is left

    def test_sentence_similarities_are_the_cosines_of_the_stored_sentences(self, store):
        document, chunks = _document("a", ["Cats chase mice. Cats sleep all day.", "Dogs chase cats."])
        store.upsert_document(document, chunks)
        query = _unit(999)
        similarities = store.sentence_similarities([chunks[0].chunk_id, chunks[1].chunk_id, "missing"], query)
        assert set(similarities) == {chunks[0].chunk_id, chunks[1].chunk_id}
        first = similarities[chunks[0].chunk_id]
        assert [(start, end) for start, end, _ in first] == chunks[0].sentence_spans
        expected = chunks[0].sentence_embeddings @ query
        assert np.allclose([cosine for _, _, cosine in first], expected, atol=1e-5)
        assert store.sentence_similarities([], query) == {}

        # Asked together with the term statistics (one round trip), the ranker gets the very same answers.
        ids, wanted = [chunks[1].chunk_id, "missing", chunks[0].chunk_id], ["cat", "sleep", "unheard"]
        together = store.ranking_evidence(ids, query, wanted)
        assert together == (store.sentence_similarities(ids, query), self._statistics(store, wanted))
        assert together[1].df == {"cat": 2, "sleep": 1, "unheard": 0}
        assert store.ranking_evidence([], query, ["cat"]) == ({}, self._statistics(store, ["cat"]))

        # The sentences go with their document.
        store.delete_document("a")
        assert store.sentence_similarities([chunks[0].chunk_id], query) == {}

    def test_ranking_evidence_is_one_round_trip(self, store, monkeypatch):
        # The ranker waits for this lookup on every question: its sentences and statistics come in one statement.
        document, chunks = _document("a", ["Cats chase mice. Cats sleep all day.", "Dogs chase cats."])
        store.upsert_document(document, chunks)
        ids, wanted, query = [chunks[1].chunk_id, chunks[0].chunk_id], ["cat", "dog"], _unit(5)
        expected = (store.sentence_similarities(ids, query), self._statistics(store, wanted))
        statements = []
        execute = psycopg.Connection.execute

        def counted(connection, query, *args, **kwargs):
            statements.append(query)
            return execute(connection, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Connection, "execute", counted)
        assert store.ranking_evidence(ids, query, wanted) == expected
        assert len(statements) == 1

    def test_copies_keep_the_evidence(self, store, database_url, collection_name):
        document, chunks = _document("a", ["Cats chase mice. Cats sleep.", "Dogs bark."])
        store.upsert_document(document, chunks)
        [(copied_document, copied)] = list(store.iter_chunks())
        assert [c.term_counts for c in copied] == [c.term_counts for c in chunks]
        assert [c.sentence_spans for c in copied] == [c.sentence_spans for c in chunks]
        assert np.allclose(copied[0].sentence_embeddings, chunks[0].sentence_embeddings, atol=1e-6)
        target = open_knowledge_base(collection=f"{collection_name}_copy")
        try:
            target.upsert_document(copied_document, copied)
            target.index._totals = None
            assert target.term_statistics(["cat"]).df == {"cat": 1}
            assert len(target.sentence_similarities([copied[0].chunk_id], _unit(3))[copied[0].chunk_id]) == 2
        finally:
            target.drop()

    def test_chunks_without_evidence_still_write(self, store):
        document, chunks = _document("a", ["Plain chunk."])
        for chunk in chunks:
            chunk.sentence_spans, chunk.sentence_embeddings, chunk.term_counts = [], None, None
        store.upsert_document(document, chunks)
        assert store.count_chunks() == 1
        # Its term counts are what ingestion would count (title and text), so keyword search and BM25 see it.
        assert self._statistics(store, ["plain"]).df == {"plain": 1}
        assert [hit.chunk.chunk_id for hit in store.keyword_search("plain", 3)] == [chunks[0].chunk_id]
        assert store.sentence_similarities([chunks[0].chunk_id], _unit(1)) == {}

    def test_sentence_rows_must_pair_with_spans(self, store):
        document, chunks = _document("a", ["One. Two."])
        chunks[0].sentence_embeddings = chunks[0].sentence_embeddings[:1]
        with pytest.raises(ValueError, match="sentence spans"):
            store.upsert_document(document, chunks)

    def test_a_failing_evidence_statement_leaves_the_pooled_connection_usable(self, store):
        # Both statements share one pooled connection: the server refusing the first must not leave it unusable for
        # the next question (no transaction left open or aborted).
        store.upsert_document(*_document("a", ["Cats chase mice. Cats sleep.", "Dogs chase cats."]))
        ids, query = ["a-0-0", "a-0-1"], _unit(7)
        expected = store.ranking_evidence(ids, query, ["cat"])
        pool = store.index._pool
        for _ in range(pool.max_size + 1):  # more failures than the pool holds connections
            with pytest.raises(Exception, match="different vector dimensions"):
                store.index.ranking_evidence(ids, np.ones(5, dtype=np.float32), ["cat"])
            assert store.ranking_evidence(ids, query, ["cat"]) == expected

    def test_existing_tables_gain_the_evidence_tables(self, store):
        with store.registry.connection() as conn, conn.transaction():
            conn.execute(store.index._q("DROP TABLE {sentences}, {terms}, {chunk_terms}"))
        reopened = open_knowledge_base(collection=store.collection)
        reopened.upsert_document(*_document("a", ["Cats chase mice."]))
        assert self._statistics(reopened, ["cat"]).df == {"cat": 1}


def test_engines_without_a_joint_lookup_answer_both_parts():
    # Qdrant and Milvus: the shared `ranking_evidence` asks the two lookups of the index (the statistics beside).
    index = SimpleNamespace(
        sentence_similarities=lambda ids, query: {chunk_id: [(0, 4, 0.5)] for chunk_id in ids},
        term_statistics=lambda terms: {"asked": terms},
    )
    assert ChunkIndex.ranking_evidence(index, ["x"], np.zeros(3), ["cat"]) == (  # type: ignore[arg-type]
        {"x": [(0, 4, 0.5)]},
        {"asked": ["cat"]},
    )


def test_chunks_without_stored_sentence_vectors_have_no_sentence_similarities():
    # The shared computation (Qdrant, Milvus) reads `evidence`: chunks not enriched yet have none.
    without = SimpleNamespace(dimension=3, evidence=lambda ids: {"x": ChunkEvidence("x", term_counts={"a": 1})})
    assert ChunkIndex.sentence_similarities(without, ["x"], np.zeros(3)) == {}  # type: ignore[arg-type]
