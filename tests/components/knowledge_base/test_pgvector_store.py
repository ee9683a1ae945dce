"""`PgvectorKnowledgeBase` against the session's embedded PostgreSQL: what the conformance suite cannot see."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from components.contracts import ScoreKind
from components.knowledge_base.pgvector_store import PgvectorKnowledgeBase, validate_collection
from components.knowledge_base.store import (
    ChunkRecord,
    DocumentRecord,
    KnowledgeBaseMismatch,
    KnowledgeBaseUnavailable,
    SearchFilters,
)
from tests.components.knowledge_base.conftest import closed_port


def _unit(seed: int, dimension: int = 384) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=dimension).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _document(document_id: str, chunks: int, *, doc_type: str = "md", date: dt.date | None = None, seed: int = 0):
    document = DocumentRecord(
        document_id=document_id,
        title=f"Title {document_id}",
        source=f"files/{document_id}.{doc_type}",
        doc_type=doc_type,
        content_hash=f"hash-{document_id}",
        text=f"Full text of {document_id}.",
        date=date,
    )
    records = [
        ChunkRecord(
            chunk_id=f"{document_id}-{index}",
            document_id=document_id,
            chunk_index=index,
            text=f"Chunk {index} of {document_id} about vectors and lexemes number{index}.",
            embedding=_unit(seed * 1000 + index),
            metadata={"page_number": index + 1},
        )
        for index in range(chunks)
    ]
    return document, records


def _tables(conn, collection: str) -> set[str]:
    rows = conn.execute("SELECT tablename FROM pg_tables WHERE tablename LIKE %s", (f"{collection}%",)).fetchall()
    return {row[0] for row in rows}


@pytest.mark.integration
class TestPgvectorKnowledgeBase:
    @pytest.fixture()
    def store(self, database_url, collection_name):
        store = PgvectorKnowledgeBase(collection_name, url=database_url)
        yield store
        store.drop()
        store.close()

    def test_init_validates_the_collection_name(self, database_url):
        for bad in ("", "1abc", "drop table;", "a-b", "x" * 41, None):
            with pytest.raises(ValueError, match="not allowed"):
                PgvectorKnowledgeBase(bad, url=database_url)  # type: ignore[arg-type]
        assert validate_collection("Research_2024") == "Research_2024"
        with pytest.raises(ValueError, match="dimension"):
            PgvectorKnowledgeBase("fine", url=database_url, dimension=0)

    def test_two_collections_have_their_own_index_names(self, database_url, collection_name):
        first = PgvectorKnowledgeBase(collection_name, url=database_url)
        second = PgvectorKnowledgeBase(f"{collection_name}_b", url=database_url)
        try:
            for store in (first, second):
                store.upsert_document(*_document("a", 2))
                assert store.ensure_vector_index() is True
            with first._connection() as conn:
                indexes = {
                    row[0]
                    for row in conn.execute(
                        "SELECT indexname FROM pg_indexes WHERE tablename LIKE %s", (f"{collection_name}%",)
                    ).fetchall()
                }
            for prefix in (collection_name, f"{collection_name}_b"):
                assert f"{prefix}_chunks_embedding_hnsw" in indexes and f"{prefix}_chunks_tsv_idx" in indexes
        finally:
            second.drop()
            first.drop()

    def test_the_vector_index_is_built_after_loading_not_before(self, store):
        for number in range(3):
            store.upsert_document(*_document(f"d{number}", 3, seed=number))
        with store._connection() as conn:
            assert store._index_exists(conn) is False  # writes into a fresh collection are not slowed by HNSW
        hits = store.dense_search(_unit(1001), 2)
        assert hits[0].chunk.chunk_id == "d1-1" and hits[0].raw_score == pytest.approx(1.0, abs=1e-5)
        assert store.wait_for_vector_index(5) is False  # a small collection is searched exactly
        # A bulk load past 1,000 chunks: the next dense search builds the index beside itself.
        for number in range(3, 103):
            store.upsert_document(*_document(f"d{number}", 10, seed=number))
        store._next_index_check = 0.0
        assert store.dense_search(_unit(50_007), 1)[0].chunk.chunk_id == "d50-7"
        assert store.wait_for_vector_index(60) is True
        with store._connection() as conn:
            assert store._index_exists(conn) is True
        assert store.dense_search(_unit(1001), 2)[0].chunk.chunk_id == "d1-1"
        assert store.ensure_vector_index() is True  # idempotent

    def test_filtered_search_with_the_index_still_fills_the_limit(self, store):
        # 40 documents of 5 chunks; only one document is a pdf, so the HNSW candidates alone would rarely hold it.
        for number in range(40):
            store.upsert_document(*_document(f"d{number}", 5, doc_type="pdf" if number == 17 else "md", seed=number))
        store.ensure_vector_index()
        hits = store.dense_search(_unit(3), 5, SearchFilters(doc_types=("pdf",)))
        assert [h.document.document_id for h in hits] == ["d17"] * 5
        scores = [h.raw_score for h in hits]
        assert scores == sorted(scores, reverse=True)

    def test_searches_never_load_embeddings(self, store):
        store.upsert_document(*_document("a", 2))
        dense = store.dense_search(_unit(0), 2)
        keyword = store.keyword_search("vectors", 2, query_embedding=_unit(0))
        assert all(hit.chunk.embedding is None for hit in dense + keyword)
        assert keyword[0].cosine is not None and keyword[0].score_kind is ScoreKind.TS_RANK
        assert dense[0].cosine == pytest.approx(dense[0].raw_score) and dense[0].score_kind is ScoreKind.COSINE

    def test_keyword_query_syntax_is_never_an_error(self, store):
        store.upsert_document(*_document("a", 2))
        for query in ("it's O'Brien's: a & b | !c", "back\\slash (vectors", "'''", "<-> :* number1"):
            hits = store.keyword_search(query, 5)
            assert isinstance(hits, list)
        assert [h.chunk.chunk_id for h in store.keyword_search("(number1) & !", 5)] == ["a-1"]

    def test_also_runs_in_the_same_transaction(self, store):
        def fail(conn) -> None:
            conn.execute("SELECT 1")
            raise RuntimeError("graph facts could not be written")

        with pytest.raises(RuntimeError):
            store.upsert_document(*_document("a", 2), also=fail)
        assert store.count_documents() == 0 and store.count_chunks() == 0  # rolled back together

        seen = []
        store.upsert_document(*_document("a", 2), also=lambda conn: seen.append(conn.info.transaction_status.name))
        assert seen == ["INTRANS"] and store.count_chunks() == 2
        with pytest.raises(RuntimeError):
            store.delete_document("a", also=fail)
        assert store.count_documents() == 1
        assert store.delete_document("a", also=lambda conn: None) is True and store.count_chunks() == 0

    def test_same_source_under_a_new_id_replaces_the_old_document(self, store):
        document, chunks = _document("old", 2)
        store.upsert_document(document, chunks)
        newer, new_chunks = _document("new", 1)
        newer.source = document.source
        store.upsert_document(newer, new_chunks)
        assert store.get_document("old") is None and store.find_by_source(document.source).document_id == "new"
        assert store.count_chunks() == 1

    def test_bad_chunks_are_refused_before_writing(self, store):
        document, chunks = _document("a", 2)
        chunks[1].embedding = np.ones(10, dtype=np.float32)
        with pytest.raises(ValueError, match="10 embedding dimensions"):
            store.upsert_document(document, chunks)
        chunks[1].embedding, chunks[1].document_id = _unit(5), "other"
        with pytest.raises(ValueError, match="belongs to"):
            store.upsert_document(document, chunks)
        with pytest.raises(ValueError, match="query embedding has 3 dimensions"):
            store.dense_search(np.ones(3), 3)
        assert store.count_documents() == 0

    def test_another_dimension_or_model_is_a_clear_refusal(self, store, database_url, collection_name):
        with pytest.raises(KnowledgeBaseMismatch, match="384-dimensional embeddings") as caught:
            PgvectorKnowledgeBase(collection_name, url=database_url, dimension=768)
        assert isinstance(caught.value, KnowledgeBaseUnavailable)
        with pytest.raises(KnowledgeBaseMismatch, match="use another collection"):
            PgvectorKnowledgeBase(collection_name, url=database_url, embedding_model="other/model")
        same = PgvectorKnowledgeBase(collection_name, url=database_url)
        assert same.dimension == 384

    def test_list_documents_is_newest_first_and_escapes_the_search(self, store):
        for number, day in enumerate((3, 1, 2)):
            document, chunks = _document(f"d{number}", number + 1)
            document.ingested_at = dt.datetime(2024, 1, day, tzinfo=dt.UTC)
            store.upsert_document(document, chunks)
        summaries, total = store.list_documents(limit=10)
        assert total == 3 and [s.document.document_id for s in summaries] == ["d0", "d2", "d1"]
        assert [s.chunk_count for s in summaries] == [1, 3, 2]
        assert store.list_documents(search="%")[1] == 0 and store.list_documents(search="_")[1] == 0
        assert store.list_documents(search="TITLE D2")[0][0].document.document_id == "d2"

    def test_iter_chunks_pages_through_everything_with_embeddings(self, store):
        for number in range(5):
            store.upsert_document(*_document(f"d{number}", 2, seed=number))
        pairs = list(store.iter_chunks(batch_size=2))
        assert [d.document_id for d, _ in pairs] == [f"d{n}" for n in range(5)]
        assert pairs[0][0].text == "Full text of d0."
        first = pairs[3][1][1]
        assert first.chunk_id == "d3-1" and np.allclose(first.embedding, _unit(3001), atol=1e-6)

    def test_unreachable_server_is_one_sentence(self):
        with pytest.raises(KnowledgeBaseUnavailable, match="Cannot connect"):
            PgvectorKnowledgeBase("kb", url=f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2")
