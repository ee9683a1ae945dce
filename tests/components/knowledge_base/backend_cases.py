"""Behaviour every vector-engine backend (Milvus, Qdrant) must show, run against the real embedded engine.

A test module subclasses `BackendCases` and provides the `backend_settings` (module scope) and `open_store`
fixtures; the cases below then run on that backend with the real MiniLM embeddings of `kb_corpus`.
"""

from __future__ import annotations

import datetime as dt
import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from components.contracts import ScoreKind
from components.knowledge_base import store as kb
from tests.components.knowledge_base.kb_corpus import KEYWORD_QUERY, assert_keyword_ranking, corpus
from tests.fresh_process import reported, run_python

_SUBPROCESS = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from components.settings import Settings
    from components.knowledge_base.factory import open_knowledge_base
    from components.knowledge_base.store import KnowledgeBaseUnavailable
    backend, collection, query = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    try:
        store = open_knowledge_base(Settings(kb_backend=backend), collection)
    except KnowledgeBaseUnavailable as exc:
        print(json.dumps({"unavailable": str(exc)}))
        sys.exit(0)
    hits = store.dense_search(np.asarray(query, dtype=np.float32), 3)
    keyword = store.keyword_search("sourdough starter", 3)
    found = store.get_document("doc-milvus")
    print(json.dumps({
        "chunks": store.count_chunks(), "documents": store.count_documents(),
        "dense": [[h.chunk.chunk_id, h.cosine, h.document.title, h.total_chunks] for h in hits],
        "keyword": [h.chunk.chunk_id for h in keyword],
        "milvus_chunks": [c.chunk_index for c in found[1]] if found else None,
    }))
    store.close()
    """
)


def run_in_fresh_process(
    backend: str, data_dir: Path, collection: str, query: np.ndarray, database_url: str | None = None
) -> dict:
    """Open the store from a new Python process and report what it sees (or the sentence it got); the documents are
    in the registry at `database_url`."""
    env = {"RESEARCH_DATA_DIR": str(data_dir), **({"DATABASE_URL": database_url} if database_url else {})}
    done = run_python(_SUBPROCESS, backend, collection, json.dumps(query.tolist()), env=env)
    seen = reported(done)
    assert "Traceback" not in done.stderr
    return seen


class BackendCases:
    """The cases; subclasses set `backend` and the fixtures `backend_settings` and `open_store`."""

    backend = ""

    @pytest.fixture(scope="class")
    def documents(self, embedding_model):
        return corpus(embedding_model)

    @pytest.fixture()
    def store(self, open_store, collection_name):
        store = open_store(collection_name)
        yield store
        store.close()

    @pytest.fixture()
    def loaded(self, store, documents):
        for document, chunks in documents:
            store.upsert_document(document, chunks)
        return store

    def test_dense_search_returns_the_answer_with_full_attribution(self, loaded, embedding_model):
        hits = loaded.dense_search(embedding_model.embed_one("How do I bake a loaf of sourdough bread?"), 4)
        assert hits[0].document.document_id == "doc-bread"
        top = hits[0]
        assert top.document.title == "Baking sourdough bread"
        assert top.document.doc_type == "html" and top.document.date == dt.date(2022, 3, 15)
        assert top.document.url == "https://example.org/bread.html"
        assert top.total_chunks == 2 and top.chunk.chunk_index in (0, 1)
        assert top.chunk.metadata["section_title"] in ("Starter", "Baking")
        assert top.score_kind in (ScoreKind.COSINE, ScoreKind.L2)
        cosines = [hit.cosine for hit in hits]
        assert all(c is not None and -1.0 <= c <= 1.0001 for c in cosines)
        assert cosines == sorted(cosines, reverse=True)
        assert all(0.0 <= kb.cosine_to_relevance(c) <= 1.0 for c in cosines)
        stored = next(c for d, cs in corpus_by_id(loaded) for c in cs if c.chunk_id == top.chunk.chunk_id)
        expected = float(
            np.dot(stored.embedding, embedding_model.embed_one("How do I bake a loaf of sourdough bread?"))
        )
        assert top.cosine == pytest.approx(expected, abs=1e-3)

    def test_keyword_search_scores_bm25_positive_and_fills_cosine(self, loaded, embedding_model):
        hits = loaded.keyword_search(KEYWORD_QUERY, 5, query_embedding=embedding_model.embed_one(KEYWORD_QUERY))
        assert_keyword_ranking(
            [h.chunk.chunk_id for h in hits], [h.score_kind for h in hits], [h.raw_score for h in hits]
        )
        assert hits[0].cosine is not None and 0.0 < hits[0].cosine <= 1.0
        without = loaded.keyword_search(KEYWORD_QUERY, 5)
        assert [h.chunk.chunk_id for h in without] == [h.chunk.chunk_id for h in hits]
        assert all(h.cosine is None for h in without)

    def test_keyword_search_of_stop_words_finds_nothing(self, loaded):
        assert loaded.keyword_search("the of and", 5) == []
        assert loaded.keyword_search("   ", 5) == []

    def test_filters_restrict_type_dates_and_documents(self, loaded, embedding_model):
        query = embedding_model.embed_one("search indexes")
        pdf = loaded.dense_search(query, 10, kb.SearchFilters(doc_types=("pdf",)))
        assert {h.document.document_id for h in pdf} == {"doc-milvus"} and len(pdf) == 3
        recent = loaded.dense_search(query, 10, kb.SearchFilters(date_from=dt.date(2023, 1, 1)))
        assert {h.document.document_id for h in recent} == {"doc-vectors", "doc-milvus"}
        old = loaded.keyword_search("sourdough bread loaf", 10, kb.SearchFilters(date_to=dt.date(2023, 1, 1)))
        assert {h.document.document_id for h in old} == {"doc-bread"}
        window = loaded.dense_search(
            query, 10, kb.SearchFilters(date_from=dt.date(2023, 1, 1), date_to=dt.date(2023, 12, 31))
        )
        assert {h.document.document_id for h in window} == {"doc-milvus"}
        by_id = loaded.keyword_search("hnsw index", 10, kb.SearchFilters(document_ids=("doc-vectors",)))
        assert by_id and {h.document.document_id for h in by_id} == {"doc-vectors"}
        none = loaded.dense_search(query, 10, kb.SearchFilters(doc_types=("docx",)))
        assert none == []

    def test_limits_are_clamped(self, loaded, embedding_model):
        query = embedding_model.embed_one("anything")
        assert len(loaded.dense_search(query, 0)) == 1
        assert len(loaded.dense_search(query, 100_000)) == 8
        with pytest.raises(ValueError, match="dimensions"):
            loaded.dense_search(np.ones(5, dtype=np.float32), 3)

    def test_get_list_and_find_documents(self, loaded):
        document, chunks = loaded.get_document("doc-milvus")
        assert document.title == "Full-text search in Milvus" and document.text.startswith("Milvus computes BM25")
        assert [c.chunk_index for c in chunks] == [0, 1, 2]
        assert [c.metadata["page_number"] for c in chunks] == [1, 2, 3]
        assert all(c.embedding is None for c in chunks)
        assert loaded.get_document("missing") is None
        page, total = loaded.list_documents(limit=2)
        assert total == 4 and [s.document.document_id for s in page] == ["doc-solar", "doc-bread"]
        assert page[1].chunk_count == 2
        rest, _ = loaded.list_documents(limit=10, offset=2)
        assert [s.document.document_id for s in rest] == ["doc-milvus", "doc-vectors"]
        found, total = loaded.list_documents(search="SOURDOUGH")
        assert total == 1 and found[0].document.document_id == "doc-bread"
        typed, total = loaded.list_documents(filters=kb.SearchFilters(doc_types=("md", "txt")))
        assert total == 2 and {s.document.document_id for s in typed} == {"doc-vectors", "doc-solar"}
        assert loaded.find_by_source("papers/milvus.pdf").document_id == "doc-milvus"
        assert loaded.find_by_source("nowhere") is None
        assert loaded.count_documents() == 4 and loaded.count_chunks() == 8

    def test_replacing_and_deleting_documents(self, loaded, documents, embedding_model):
        document, chunks = documents[1]
        loaded.upsert_document(document, chunks[:1])
        assert loaded.count_chunks() == 6
        assert [c.chunk_id for c in loaded.get_document("doc-milvus")[1]] == ["doc-milvus:0"]
        assert loaded.list_documents(search="milvus")[0][0].chunk_count == 1
        # A new id for the same source replaces the older document.
        renamed = kb.DocumentRecord(
            document_id="doc-milvus-v2",
            title="Milvus, revised",
            source=document.source,
            doc_type="pdf",
            content_hash="new",
            text="Revised.",
            date=document.date,
        )
        chunk = kb.ChunkRecord(
            chunk_id="doc-milvus-v2:0",
            document_id="doc-milvus-v2",
            chunk_index=0,
            text="Revised notes on Milvus.",
            embedding=embedding_model.embed_one("Revised notes on Milvus."),
        )
        loaded.upsert_document(renamed, [chunk])
        assert loaded.get_document("doc-milvus") is None
        assert loaded.find_by_source(document.source).document_id == "doc-milvus-v2"
        assert loaded.count_documents() == 4 and loaded.count_chunks() == 6
        called = []
        assert loaded.delete_document("doc-milvus-v2", also=called.append) is True
        assert len(called) == 1  # once, in the registry's transaction
        assert loaded.delete_document("doc-milvus-v2") is False
        assert loaded.count_chunks() == 5
        hits = loaded.keyword_search("revised milvus", 5)
        assert all(h.document.document_id != "doc-milvus-v2" for h in hits)
        with pytest.raises(ValueError, match="no embedding"):
            loaded.upsert_document(renamed, [kb.ChunkRecord("x", "doc-milvus-v2", 0, "text")])

    def test_iter_chunks_copies_without_reembedding(self, loaded, open_store, collection_name, embedding_model):
        pairs = list(loaded.iter_chunks(batch_size=3))
        assert [d.document_id for d, _ in pairs] == sorted(["doc-vectors", "doc-milvus", "doc-bread", "doc-solar"])
        assert all(c.embedding is not None and c.embedding.shape == (384,) for _, cs in pairs for c in cs)
        copy = open_store(collection_name + "_copy")
        try:
            for document, chunks in pairs:
                copy.upsert_document(document, chunks)
            query = embedding_model.embed_one("keyword queries with sparse indexes")
            original = [(h.chunk.chunk_id, round(h.cosine, 4)) for h in loaded.dense_search(query, 5)]
            copied = [(h.chunk.chunk_id, round(h.cosine, 4)) for h in copy.dense_search(query, 5)]
            assert copied == original
            assert copy.get_document("doc-bread")[0].text == loaded.get_document("doc-bread")[0].text
        finally:
            copy.close()

    def test_other_embedding_shape_is_a_mismatch(self, loaded, open_store):
        with pytest.raises(kb.KnowledgeBaseMismatch, match="384-dimensional"):
            open_store(loaded.collection, dimension=8)

    def test_reopening_from_a_fresh_process(
        self, open_store, collection_name, documents, backend_settings, embedding_model, database_url
    ):
        store = open_store(collection_name)
        for document, chunks in documents:
            store.upsert_document(document, chunks)
        query = embedding_model.embed_one("How do I bake a loaf of sourdough bread?")
        expected = [(h.chunk.chunk_id, h.cosine) for h in store.dense_search(query, 3)]
        store.close()
        seen = run_in_fresh_process(
            self.backend, backend_settings.research_data_dir, collection_name, query, database_url
        )
        assert seen["chunks"] == 8 and seen["documents"] == 4
        assert [row[0] for row in seen["dense"]] == [chunk_id for chunk_id, _ in expected]
        assert [row[1] for row in seen["dense"]] == pytest.approx([c for _, c in expected], abs=1e-4)
        assert seen["dense"][0][2] == "Baking sourdough bread" and seen["dense"][0][3] == 2
        assert seen["keyword"][0] == "doc-bread:0"
        assert seen["milvus_chunks"] == [0, 1, 2]

    def test_a_second_process_gets_one_sentence_while_the_folder_is_open(self, store, backend_settings, database_url):
        seen = run_in_fresh_process(
            self.backend, backend_settings.research_data_dir, store.collection, np.zeros(384), database_url
        )
        message = seen["unavailable"]
        assert "open in another process" in message and "KB_BACKEND=pgvector" in message
        assert message.count(". ") == 0 and "\n" not in message

    def test_an_unreachable_server_is_reported_not_raised_raw(self, unreachable_store):
        with pytest.raises(kb.KnowledgeBaseUnavailable, match="Cannot reach"):
            unreachable_store()


def corpus_by_id(store):
    return list(store.iter_chunks())
