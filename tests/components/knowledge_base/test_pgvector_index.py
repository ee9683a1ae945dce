"""`PgvectorChunkIndex` (through the `KnowledgeBase` over it) against the session's embedded PostgreSQL: what the
conformance suite cannot see."""

from __future__ import annotations

import datetime as dt

import numpy as np
import psycopg
import pytest
from haystack.utils import Secret

from components.contracts import ScoreKind
from components.knowledge_base.factory import knowledge_base_for
from components.knowledge_base.pgvector_index import CONNECTION_ENV_VARS
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


def _store(table: str, dimension: int = 384, **kwargs):  # noqa: ANN202 - the integration's class
    from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

    return PgvectorDocumentStore(
        connection_string=Secret.from_env_var(CONNECTION_ENV_VARS, strict=False),
        table_name=table,
        embedding_dimension=dimension,
        keyword_index_name=f"{table}_keyword",
        hnsw_index_name=f"{table}_hnsw",
        **kwargs,
    )


def _users_store(database_url: str, table: str):  # noqa: ANN202 - the integration's class
    """The integration's store as a team configures it for itself: its own connection and index names."""
    from haystack_integrations.document_stores.pgvector import PgvectorDocumentStore

    return PgvectorDocumentStore(
        connection_string=Secret.from_token(database_url),
        table_name=table,
        embedding_dimension=384,
        keyword_index_name=f"{table}_kw",
        hnsw_index_name=f"{table}_vec",
    )


def _indexes(kb, pattern: str) -> set[str]:
    with kb.registry.connection() as conn:
        rows = conn.execute("SELECT indexname FROM pg_indexes WHERE tablename LIKE %s", (pattern,)).fetchall()
    return {row[0] for row in rows}


@pytest.mark.integration
class TestPgvectorChunkIndex:
    @pytest.fixture()
    def kb(self, database_url, collection_name):
        kb = knowledge_base_for(_store(collection_name))
        yield kb
        kb.drop()
        kb.close()

    def test_the_table_is_haystacks_own_and_its_retriever_reads_it(self, kb):
        from haystack_integrations.components.retrievers.pgvector import PgvectorEmbeddingRetriever

        kb.upsert_document(*_document("a", 3))
        found = PgvectorEmbeddingRetriever(document_store=kb.index.document_store, top_k=1).run(
            query_embedding=_unit(2).tolist()
        )["documents"]
        assert found[0].id == "a-2" and found[0].meta["document_id"] == "a" and found[0].meta["page_number"] == 3
        # The evidence sits beside the table, never in it.
        with kb.registry.connection() as conn:
            columns = {
                row[0]
                for row in conn.execute(
                    "SELECT attname FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attnum > 0",
                    (f'"{kb.collection}"',),
                ).fetchall()
            }
        assert columns == {"id", "embedding", "content", "blob_data", "blob_meta", "blob_mime_type", "meta"}

    def test_embedded_database_is_given_to_the_store_without_leaking_into_its_dict(self, kb, database_url):
        store = kb.index.document_store
        assert store.connection_string.database_url == database_url
        assert store.to_dict()["init_parameters"]["connection_string"] == {
            "type": "env_var",
            "env_vars": CONNECTION_ENV_VARS,
            "strict": False,
        }
        # The integration's own connection to the embedded server (made from what its secret resolves to) does not
        # wait for the WAL flush per row.
        kb.upsert_document(*_document("a", 1))
        with psycopg.connect(store.connection_string.resolve_value()) as conn:
            assert conn.execute("SHOW synchronous_commit").fetchone()[0] == "off"

    def test_the_fast_write_path_stores_what_the_integration_stores_for_plain_documents(
        self, kb, collection_name, database_url
    ):
        from haystack.document_stores.types import DuplicatePolicy

        from components.knowledge_base.chunk_index import record_to_document

        document, chunks = _document("a", 3, date=dt.date(2021, 5, 6))
        kb.upsert_document(document, chunks)
        plain = _store(f"{collection_name}_plain")
        plain.connection_string = Secret.from_token(database_url)
        try:
            written = [record_to_document(document, chunk) for chunk in chunks]
            plain.write_documents(written, policy=DuplicatePolicy.FAIL)
            rows = {}
            with kb.registry.connection() as conn:
                for table in (kb.collection, f"{collection_name}_plain"):
                    rows[table] = conn.execute(
                        f'SELECT id, content, meta, embedding::text, blob_data IS NULL FROM "{table}" ORDER BY id'
                    ).fetchall()
            assert rows[kb.collection] == rows[f"{collection_name}_plain"] and len(rows[kb.collection]) == 3
            stored = {doc.id: doc for doc in kb.index.document_store.filter_documents()}
            assert np.array_equal(np.asarray(stored["a-1"].embedding, dtype=np.float32), chunks[1].embedding)
        finally:
            plain.delete_table()
            plain.close()

    def test_two_collections_have_their_own_index_names(self, kb, collection_name):
        other = knowledge_base_for(_store(f"{collection_name}_b"))
        try:
            for store in (kb, other):
                store.upsert_document(*_document("a", 2))
                assert store.ensure_vector_index() is True
            indexes = _indexes(kb, f"{collection_name}%")
            for prefix in (collection_name, f"{collection_name}_b"):
                assert {f"{prefix}_hnsw", f"{prefix}_keyword", f"{prefix}_chunk_terms_tsv"} <= indexes
        finally:
            other.drop()

    def test_the_vector_index_is_built_after_loading_not_before(self, kb):
        for number in range(3):
            kb.upsert_document(*_document(f"d{number}", 3, seed=number))
        assert f"{kb.collection}_hnsw" not in _indexes(kb, kb.collection)  # bulk writes are not slowed by HNSW
        hits = kb.dense_search(_unit(1001), 2)
        assert hits[0].chunk.chunk_id == "d1-1" and hits[0].raw_score == pytest.approx(1.0, abs=1e-5)
        assert kb.index.wait_for_vector_index(5) is False  # a small collection is searched exactly
        # A bulk load past 1,000 chunks: the next dense search builds the index beside itself.
        for number in range(3, 103):
            kb.upsert_document(*_document(f"d{number}", 10, seed=number))
        kb.index._next_index_check = 0.0
        assert kb.dense_search(_unit(50_007), 1)[0].chunk.chunk_id == "d50-7"
        assert kb.index.wait_for_vector_index(60) is True
        assert f"{kb.collection}_hnsw" in _indexes(kb, kb.collection)
        assert kb.dense_search(_unit(1001), 2)[0].chunk.chunk_id == "d1-1"
        assert kb.ensure_vector_index() is True  # idempotent

    def test_a_table_made_here_keeps_vectors_in_the_row_and_a_found_one_is_left_as_it_is(
        self, kb, collection_name, database_url
    ):
        def storage(store) -> str:
            with store.registry.connection() as conn:
                return conn.execute(
                    "SELECT attstorage FROM pg_attribute WHERE attrelid = to_regclass(%s) AND attname = 'embedding'",
                    (f'"{store.collection}"',),
                ).fetchone()[0]

        kb.upsert_document(*_document("a", 2))
        assert storage(kb) == "m"  # MAIN: no TOAST row per write, none to read per HNSW build step
        assert f"{kb.collection}_chunk_terms_tsv" not in _indexes(kb, f"{kb.collection}%")  # built in the seal
        assert kb.ensure_vector_index() is True
        assert {f"{kb.collection}_chunk_terms_tsv", f"{kb.collection}_hnsw"} <= _indexes(kb, f"{kb.collection}%")
        # A table the integration made first (a user's) keeps pgvector's own storage; its side GIN is made at once.
        name = f"{collection_name}_found"
        first = _users_store(database_url, name)
        first.count_documents()
        first.close()
        other = knowledge_base_for(_store(name))
        try:
            assert storage(other) == "e"
            assert f"{other.collection}_chunk_terms_tsv" in _indexes(other, f"{other.collection}%")
        finally:
            other.drop()
            first.delete_table()

    def test_an_attached_table_gets_no_index_until_asked(self, collection_name, database_url):
        """A table Haystack's writer filled (1,000+ chunks) is searched exactly, however often: neither opening nor
        searching nor the seal adds an index to it; `ensure_vector_index(users_table=True)` adds one HNSW index."""
        from haystack import Document
        from haystack.document_stores.types import DuplicatePolicy

        name = f"{collection_name}_team"
        team = _users_store(database_url, name)
        documents = [Document(id=f"t{i}", content=f"note {i}", embedding=_unit(i).tolist()) for i in range(1000)]
        team.write_documents(documents, policy=DuplicatePolicy.FAIL)
        team.close()
        kb = knowledge_base_for(_store(name))
        try:
            users = _indexes(kb, name)
            assert users == {f"{name}_pkey", f"{name}_kw"}  # the integration's keyword index was not added
            for _ in range(2):
                kb.index._next_index_check = 0.0
                assert kb.index.dense(_unit(7), 1)[0].document.id == "t7"
            assert kb.index.wait_for_vector_index(5) is False and kb.ensure_vector_index() is False
            assert _indexes(kb, name) == users
            seen: list[tuple[int, int]] = []
            assert kb.index.ensure_vector_index(users_table=True, progress=lambda *step: seen.append(step)) is True
            assert _indexes(kb, name) == users | {f"{name}_hnsw"}
            assert all(0 <= done <= total for done, total in seen)
            assert kb.index.dense(_unit(7), 1)[0].document.id == "t7"
        finally:
            kb.drop()
            kb.close()
            team.delete_table()
            team.close()

    def test_filtered_search_with_the_index_still_fills_the_limit(self, kb):
        # 40 documents of 5 chunks; only one document is a pdf, so the HNSW candidates alone would rarely hold it.
        for number in range(40):
            kb.upsert_document(*_document(f"d{number}", 5, doc_type="pdf" if number == 17 else "md", seed=number))
        kb.ensure_vector_index()
        hits = kb.dense_search(_unit(3), 5, SearchFilters(doc_types=("pdf",)))
        assert [h.document.document_id for h in hits] == ["d17"] * 5
        scores = [h.raw_score for h in hits]
        assert scores == sorted(scores, reverse=True)

    def test_searches_never_load_embeddings(self, kb):
        kb.upsert_document(*_document("a", 2))
        dense = kb.dense_search(_unit(0), 2)
        keyword = kb.keyword_search("vectors", 2, query_embedding=_unit(0))
        assert all(hit.chunk.embedding is None for hit in dense + keyword)
        assert keyword[0].cosine is not None and keyword[0].score_kind is ScoreKind.BM25
        assert dense[0].cosine == pytest.approx(dense[0].raw_score) and dense[0].score_kind is ScoreKind.COSINE

    def test_keyword_query_syntax_is_never_an_error(self, kb):
        kb.upsert_document(*_document("a", 2))
        for query in ("it's O'Brien's: a & b | !c", "back\\slash (vectors", "'''", "<-> :* number1"):
            assert isinstance(kb.keyword_search(query, 5), list)
        assert [h.chunk.chunk_id for h in kb.keyword_search("(number1) & !", 5)] == ["a-1"]

    def test_a_failed_graph_write_leaves_the_previous_version(self, kb):
        kb.upsert_document(*_document("a", 2))

        def fail(conn) -> None:
            conn.execute("SELECT 1")
            raise RuntimeError("graph facts could not be written")

        document, chunks = _document("a", 1)
        document.content_hash = "v2"
        with pytest.raises(RuntimeError):
            kb.upsert_document(document, chunks, also=fail)
        stored, kept = kb.get_document("a")
        assert stored.content_hash == "hash-a" and [c.chunk_id for c in kept] == ["a-0", "a-1"]
        with pytest.raises(RuntimeError):
            kb.delete_document("a", also=fail)
        assert kb.count_documents() == 1 and kb.count_chunks() == 2
        assert kb.delete_document("a", also=lambda conn: None) is True and kb.count_chunks() == 0

    def test_another_dimension_or_model_is_a_clear_refusal(self, kb, collection_name):
        kb.upsert_document(*_document("a", 1))
        with pytest.raises(KnowledgeBaseMismatch, match="384-dimensional embeddings") as caught:
            knowledge_base_for(_store(collection_name, dimension=768))
        assert isinstance(caught.value, KnowledgeBaseUnavailable)
        with pytest.raises(KnowledgeBaseMismatch, match="use another collection"):
            knowledge_base_for(_store(collection_name), embedding_model="other/model")
        assert knowledge_base_for(_store(collection_name)).dimension == 384

    def test_a_base_from_before_analyses_were_recorded_opens_unchecked_and_stays_unrecorded(
        self, kb, collection_name, monkeypatch
    ):
        import json

        from components.knowledge_base import chunk_index

        kb.upsert_document(*_document("a", 1))
        table = f"{collection_name}_chunk_terms"
        comment = "SELECT obj_description(%s::regclass, 'pg_class')"
        with kb.registry.connection() as conn:
            marker = json.loads(conn.execute(comment, (table,)).fetchone()[0])
            assert marker["text_analysis"] == chunk_index.text_analysis()
            del marker["text_analysis"]
            conn.execute(f'COMMENT ON TABLE "{table}" IS {psycopg.sql.quote(json.dumps(marker))}')
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: "another_pipeline 1.0 / 000000000000")
        assert knowledge_base_for(_store(collection_name)).count_chunks() == 1  # cannot be checked: a warning
        with kb.registry.connection() as conn:
            marker = json.loads(conn.execute(comment, (table,)).fetchone()[0])
        assert "text_analysis" not in marker  # not certified by an analysis that did not count it

    def test_list_documents_is_newest_first(self, kb):
        for number, day in enumerate((3, 1, 2)):
            document, chunks = _document(f"d{number}", number + 1)
            document.ingested_at = dt.datetime(2024, 1, day, tzinfo=dt.UTC)
            kb.upsert_document(document, chunks)
        summaries, total = kb.list_documents(limit=10)
        assert total == 3 and [s.document.document_id for s in summaries] == ["d0", "d2", "d1"]
        assert [s.chunk_count for s in summaries] == [1, 3, 2]
        assert kb.list_documents(search="%")[1] == 0 and kb.list_documents(search="_")[1] == 0

    def test_iter_chunks_pages_through_everything_with_embeddings(self, kb):
        for number in range(5):
            kb.upsert_document(*_document(f"d{number}", 2, seed=number))
        pairs = list(kb.iter_chunks(batch_size=20))
        assert [d.document_id for d, _ in pairs] == [f"d{n}" for n in range(5)]
        assert pairs[0][0].text == "Full text of d0."
        chunk = pairs[3][1][1]
        assert chunk.chunk_id == "d3-1" and np.allclose(chunk.embedding, _unit(3001), atol=1e-6)
        assert chunk.metadata == {"page_number": 2}

    def test_unreachable_server_is_one_sentence(self, monkeypatch):
        monkeypatch.setenv("DATABASE_URL", f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2")
        with pytest.raises(KnowledgeBaseUnavailable, match="Cannot connect"):
            knowledge_base_for(_store("kb"))

    @pytest.mark.parametrize(
        ("variable", "value"),
        [("DATABASE_URL", "notaurl"), ("DATABASE_URL", "mysql://kb@127.0.0.1/kb"), ("PG_CONN_STR", "notaurl")],
    )
    def test_a_value_that_is_no_postgresql_url_names_its_setting(self, monkeypatch, variable, value):
        monkeypatch.delenv("DATABASE_URL", raising=False)
        monkeypatch.setenv(variable, value)
        with pytest.raises(KnowledgeBaseUnavailable, match=f"^{variable} is not a PostgreSQL URL: ") as refused:
            knowledge_base_for(_store("kb"))
        assert value not in str(refused.value)  # the value may hold a password
