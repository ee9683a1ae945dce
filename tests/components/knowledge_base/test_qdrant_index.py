"""`QdrantChunkIndex` on qdrant-haystack's `QdrantDocumentStore` in local mode (real folders, real Haystack
documents laid out by `record_to_document`, Haystack filter dicts from `search_filters_to_haystack`)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from haystack import Document
from haystack.components.writers import DocumentWriter
from haystack.document_stores.types import DuplicatePolicy
from haystack_integrations.document_stores.qdrant import QdrantDocumentStore
from qdrant_client import QdrantClient, models

from components.contracts import ScoreKind
from components.knowledge_base import qdrant_adapter
from components.knowledge_base.chunk_index import (
    ChunkEvidence,
    cosine,
    record_to_document,
    search_filters_to_haystack,
)
from components.knowledge_base.keyword_terms import query_sparse_vector
from components.knowledge_base.qdrant_index import CLIENTS, QdrantChunkIndex, _local_key
from components.knowledge_base.store import KnowledgeBaseMismatch, KnowledgeBaseUnavailable, SearchFilters
from components.text.analyzer import term_counts
from components.text.language import sentence_spans
from tests.components.knowledge_base.conftest import closed_port
from tests.components.knowledge_base.kb_corpus import KEYWORD_QUERY, assert_keyword_ranking, corpus
from tests.fresh_process import run_python

MODEL = "all-MiniLM-L6-v2"


def _store(path: Path, index: str, **kwargs) -> QdrantDocumentStore:
    options = {"embedding_dim": 384, "use_sparse_embeddings": True, "sparse_idf": True, "progress_bar": False}
    options.update(kwargs)
    return QdrantDocumentStore(path=str(path), index=index, **options)


def _unit(seed: int) -> np.ndarray:
    vector = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _evidence(chunk_id: str, text: str, seed: int) -> ChunkEvidence:
    spans = sentence_spans(text)
    return ChunkEvidence(
        chunk_id=chunk_id,
        sentence_spans=spans,
        sentence_embeddings=np.stack([_unit(seed * 10 + k) for k in range(len(spans))]),
        term_counts=term_counts(text),
    )


def _read_postings(index: QdrantChunkIndex) -> None:
    """Wait until local mode answers keyword queries from the in-memory postings it reads in the background."""
    index.count()
    deadline = time.monotonic() + 30
    while index._postings() is None:
        assert time.monotonic() < deadline, "the keyword postings were not read in 30 s"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def documents(embedding_model):
    return corpus(embedding_model)


@pytest.fixture()
def index(tmp_path, collection_name):
    index = QdrantChunkIndex(_store(tmp_path / "qdrant", collection_name), embedding_model=MODEL)
    yield index
    index.close()


@pytest.fixture()
def loaded(index, documents):
    for document, chunks in documents:
        index.write([record_to_document(document, chunk) for chunk in chunks], [])
    return index


@pytest.mark.integration
class TestQdrantChunkIndex:
    def test_dense_search_keeps_the_chunk_layout_and_the_cosine(self, loaded, documents, embedding_model):
        query = embedding_model.embed_one("How do I bake a loaf of sourdough bread?")
        hits = loaded.dense(query, 4)
        top = hits[0]
        assert top.document.meta["document_id"] == "doc-bread" and top.kind is ScoreKind.COSINE
        assert top.document.meta["title"] == "Baking sourdough bread" and top.document.meta["doc_type"] == "html"
        assert top.document.meta["date"] == "2022-03-15"
        assert top.document.meta["date_ordinal"] == dt.date(2022, 3, 15).toordinal()
        assert top.document.meta["section_title"] in ("Starter", "Baking")
        assert top.document.embedding is None and top.document.content
        stored = {c.chunk_id: c.embedding for _, cs in documents for c in cs}[top.document.id]
        assert top.cosine == pytest.approx(float(np.dot(stored, query)), abs=1e-4)
        assert [hit.cosine for hit in hits] == sorted((hit.cosine for hit in hits), reverse=True)

    def test_filters_are_haystack_filter_dicts(self, loaded, embedding_model):
        query = embedding_model.embed_one("search indexes")

        def ids(filters: SearchFilters, keyword: str | None = None) -> set[str]:
            haystack = search_filters_to_haystack(filters)
            hits = loaded.keyword(keyword, 10, haystack) if keyword else loaded.dense(query, 10, haystack)
            return {hit.document.meta["document_id"] for hit in hits}

        assert ids(SearchFilters(doc_types=("pdf",))) == {"doc-milvus"}
        assert ids(SearchFilters(date_from=dt.date(2023, 1, 1))) == {"doc-vectors", "doc-milvus"}
        assert ids(SearchFilters(date_to=dt.date(2023, 1, 1)), "sourdough bread loaf") == {"doc-bread"}
        assert ids(SearchFilters(date_to=dt.date(2030, 1, 1))) == {"doc-vectors", "doc-milvus", "doc-bread"}
        assert ids(SearchFilters(document_ids=("doc-vectors",)), "hnsw index") == {"doc-vectors"}
        assert ids(SearchFilters(doc_types=("docx",))) == set()

    def test_keyword_search_is_bm25_over_any_term_with_cosines(self, loaded, embedding_model):
        embedding = embedding_model.embed_one(KEYWORD_QUERY)
        hits = loaded.keyword(KEYWORD_QUERY, 5, query_embedding=embedding)
        assert_keyword_ranking([h.document.id for h in hits], [h.kind for h in hits], [h.raw_score for h in hits])
        ids = [hit.document.id for hit in hits]
        stored = {doc.id: doc.embedding for doc in loaded.fetch(ids, with_embeddings=True)}
        assert [hit.cosine for hit in hits] == pytest.approx([cosine(stored[i], embedding) for i in ids], abs=1e-5)
        assert all(hit.document.embedding is None and hit.document.sparse_embedding is None for hit in hits)
        without = loaded.keyword(KEYWORD_QUERY, 5)
        assert [hit.document.id for hit in without] == [hit.document.id for hit in hits]
        assert all(hit.cosine is None for hit in without)
        # One matching term is enough (terms are ORed), and stop words alone match nothing.
        assert {hit.document.id for hit in loaded.keyword("photovoltaic zebra", 5)} == {"doc-solar:0"}
        assert loaded.keyword("the of and", 5) == [] and loaded.keyword("  ", 5) == []

    def test_local_keyword_postings_score_as_qdrants_scan_and_follow_writes(self, loaded, documents):
        def scan(query: str) -> list[tuple[str, float]]:
            indices, values = query_sparse_vector(query)
            found = qdrant_adapter.query_sparse(loaded.client, loaded.document_store, indices, values, None, 10)
            return sorted((doc.id, round(doc.score, 5)) for doc in found)

        def postings(query: str) -> list[tuple[str, float]]:
            return sorted((hit.document.id, round(hit.raw_score, 5)) for hit in loaded.keyword(query, 10))

        _read_postings(loaded)
        queries = [KEYWORD_QUERY, "sourdough starter", "milvus bm25 index", "rye crumb", "photovoltaic zebra"]
        assert all(postings(query) == scan(query) for query in queries) and postings("sourdough starter")
        document, chunks = documents[2]
        loaded.write([record_to_document(document, dataclasses.replace(chunks[0], text="Rye flour, crumb."))], [])
        loaded.delete(["doc-milvus:0"])
        assert all(postings(query) == scan(query) for query in queries) and postings("rye crumb")

    def test_fetch_count_iterate_and_delete(self, loaded, documents):
        found = loaded.fetch(["doc-milvus:2", "missing", "doc-bread:0"])
        assert [doc.id for doc in found] == ["doc-milvus:2", "doc-bread:0"]
        assert found[0].meta["page_number"] == 3 and found[0].embedding is None
        assert len(loaded.fetch(["doc-bread:0"], with_embeddings=True)[0].embedding) == 384
        assert loaded.count() == 8
        batches = list(loaded.iter_documents(batch_size=3, with_embeddings=True))
        assert [len(batch) for batch in batches] == [3, 3, 2]
        assert all(len(doc.embedding) == 384 for batch in batches for doc in batch)
        loaded.delete(["doc-milvus:0", "doc-milvus:1", "never-written"])
        assert loaded.count() == 6 and loaded.fetch(["doc-milvus:0"]) == []
        assert all(hit.document.id != "doc-milvus:0" for hit in loaded.keyword("milvus bm25", 10))

    def test_overwriting_a_chunk_replaces_its_keyword_vector(self, loaded, documents):
        document, chunks = documents[2]
        chunk = dataclasses.replace(chunks[0], text="Rye flour changes the crumb.")
        loaded.write([record_to_document(document, chunk)], [])
        assert loaded.count() == 8
        assert all(hit.document.id != "doc-bread:0" for hit in loaded.keyword("sourdough starter", 5))
        assert loaded.keyword("rye crumb", 5)[0].document.id == "doc-bread:0"

    def test_chunks_without_embeddings_or_of_another_size_are_refused(self, index):
        with pytest.raises(ValueError, match="no embedding"):
            index.write([Document(id="x", content="text")], [])
        with pytest.raises(ValueError, match="dimensions"):
            index.write([Document(id="x", content="text", embedding=[0.1] * 5)], [])
        with pytest.raises(ValueError, match="dimensions"):
            index.dense(np.ones(5, dtype=np.float32), 3)

    def test_limits_are_clamped(self, loaded, embedding_model):
        query = embedding_model.embed_one("anything")
        assert len(loaded.dense(query, 0)) == 1 and len(loaded.dense(query, 100_000)) == 8


@pytest.mark.integration
class TestEvidence:
    def test_sentences_and_terms_follow_write_replace_and_delete(self, index):
        first = "Cats chase mice. Cats sleep."
        chunks = [
            Document(id="a-0", content=first, embedding=_unit(1).tolist(), meta={"document_id": "a"}),
            Document(id="a-1", content="Dogs chase cats.", embedding=_unit(2).tolist(), meta={"document_id": "a"}),
            Document(id="b-0", content="Dogs bark loudly.", embedding=_unit(3).tolist(), meta={"document_id": "b"}),
        ]
        evidence = [_evidence(doc.id, doc.content, seed) for seed, doc in enumerate(chunks, start=1)]
        index.write(chunks, evidence)
        query = _unit(99)
        found = index.sentence_similarities(["a-0", "b-0", "missing"], query)
        assert set(found) == {"a-0", "b-0"}
        assert [(start, end) for start, end, _ in found["a-0"]] == sentence_spans(first)
        expected = evidence[0].sentence_embeddings @ query
        assert [cosine for *_, cosine in found["a-0"]] == pytest.approx(expected.tolist(), abs=1e-5)
        stored = index.evidence(["a-1"])["a-1"]
        assert stored.term_counts == term_counts("Dogs chase cats.")
        assert stored.sentence_embeddings.shape == (1, 384)

        stats = index.term_statistics(["cat", "dog", "chase", "whale"])
        assert stats.n_chunks == 3 and stats.df == {"cat": 2, "dog": 2, "chase": 2, "whale": 0}
        total = sum(sum(term_counts(doc.content).values()) for doc in chunks)
        assert stats.avg_terms == pytest.approx(total / 3)

        # Overwriting a chunk with fewer sentences and other terms: nothing of the old evidence stays.
        replaced = Document(id="a-0", content="Whales sing.", embedding=_unit(4).tolist(), meta={"document_id": "a"})
        index.write([replaced], [_evidence("a-0", replaced.content, 7)])
        assert len(index.sentence_similarities(["a-0"], query)["a-0"]) == 1
        stats = index.term_statistics(["cat", "whale", "mice"])
        assert stats.n_chunks == 3 and stats.df == {"cat": 1, "whale": 1, "mice": 0}

        # A chunk written again without evidence loses its old evidence.
        index.write([chunks[2]], [])
        assert index.evidence(["b-0"]) == {} and index.term_statistics(["bark"]).df == {"bark": 0}

        index.delete(["a-0", "a-1"])
        assert index.sentence_similarities(["a-0", "a-1"], query) == {}
        assert index.term_statistics(["cat"]) is None  # nothing with term counts is left

    def test_unusual_terms_are_read_from_the_whole_table(self, index):
        chunk = Document(id="c", content="x", embedding=_unit(5).tolist())
        index.write([chunk], [ChunkEvidence("c", term_counts={"e.g": 1, "naïve": 2})])
        assert index.term_statistics(["e.g", "naïve", "other"]).df == {"e.g": 1, "naïve": 1, "other": 0}

    def test_mismatched_sentence_rows_are_refused(self, index):
        chunk = Document(id="c", content="One. Two.", embedding=_unit(5).tolist())
        bad = ChunkEvidence("c", [(0, 4), (5, 9)], np.stack([_unit(1)]))
        with pytest.raises(ValueError, match="2 sentence spans but 1"):
            index.write([chunk], [bad])


@pytest.mark.integration
class TestSharedLocalClient:
    def test_two_store_objects_for_one_folder_share_one_client(self, tmp_path, collection_name, documents):
        store = _store(tmp_path / "q", collection_name)
        first = QdrantChunkIndex(store, embedding_model=MODEL)
        # YAML deserialisation makes a second store object with the same settings.
        second = QdrantChunkIndex(QdrantDocumentStore.from_dict(store.to_dict()), embedding_model=MODEL)
        other = QdrantChunkIndex(_store(tmp_path / "q", collection_name + "_b"), embedding_model=MODEL)
        document, chunks = documents[0]
        first.write([record_to_document(document, chunk) for chunk in chunks], [])
        assert second.count() == 2 and other.count() == 0
        assert first.client is second.client is other.client
        first.close()
        assert second.fetch(["doc-vectors:0"])[0].content.startswith("pgvector")
        second.close()
        other.close()
        # The last user closed the client: the folder is free for another client.
        QdrantClient(path=str(tmp_path / "q")).close()
        assert not CLIENTS.holds(_local_key(store))

    def test_a_second_process_gets_one_sentence(self, index):
        index.count()
        script = textwrap.dedent(
            """
            import sys
            from haystack_integrations.document_stores.qdrant import QdrantDocumentStore
            from components.knowledge_base.qdrant_index import QdrantChunkIndex
            from components.knowledge_base.store import KnowledgeBaseUnavailable
            store = QdrantDocumentStore(path=sys.argv[1], index=sys.argv[2], embedding_dim=384)
            try:
                QdrantChunkIndex(store, embedding_model="m").count()
            except KnowledgeBaseUnavailable as exc:
                print(exc)
            """
        )
        done = run_python(script, index.document_store.path, index.collection)
        assert "Traceback" not in done.stderr, done.stderr[-2000:]
        message = done.stdout.strip()
        assert "open in another process" in message and "KB_BACKEND=pgvector" in message
        assert message.count(". ") == 0 and "\n" not in message

    def test_an_unreachable_server_is_one_sentence(self):
        store = QdrantDocumentStore(
            url=f"http://127.0.0.1:{closed_port()}",
            index="x",
            embedding_dim=384,
            timeout=2,
            client_kwargs={"check_compatibility": False},
        )
        index = QdrantChunkIndex(store, embedding_model=MODEL)
        with pytest.raises(KnowledgeBaseUnavailable, match="Cannot reach Qdrant"):
            index.count()


@pytest.mark.integration
class TestCollectionsOfOthers:
    def test_a_collection_written_by_haystack_is_read_and_never_modified(self, tmp_path, collection_name, documents):
        user_store = _store(tmp_path / "q", collection_name, use_sparse_embeddings=False, sparse_idf=False)
        written = [
            Document(id=f"user-{k}", content=text, embedding=chunk.embedding.tolist(), meta={"topic": "user"})
            for k, (text, chunk) in enumerate((c.text, c) for _, cs in documents for c in cs)
        ]
        DocumentWriter(user_store, policy=DuplicatePolicy.OVERWRITE).run(written)
        before = {doc.id: (doc.content, doc.meta, doc.embedding) for doc in user_store.filter_documents()}
        user_store.close()

        index = QdrantChunkIndex(_store(tmp_path / "q", collection_name, use_sparse_embeddings=False), MODEL)
        try:
            assert index.count() == 8
            _read_postings(index)  # keyword search below reads the side collection's postings in memory
            hits = index.dense(np.asarray(written[5].embedding, dtype=np.float32), 1)
            assert hits[0].document.id == "user-5" and hits[0].document.meta == {"topic": "user"}
            # The assistant's chunks in this collection get keyword vectors in the side collection.
            mine = Document(id="mine", content="Sourdough keeps for a week.", embedding=_unit(3).tolist())
            index.write([mine], [_evidence("mine", mine.content, 1)])
            assert [hit.document.id for hit in index.keyword("sourdough week", 5)] == ["mine"]
            assert index.keyword("sourdough week", 5, {"field": "meta.topic", "operator": "==", "value": "x"}) == []
            # Rewritten with no keyword left, it leaves no stale keyword vector behind.
            index.write([Document(id="mine", content="Of the.", embedding=_unit(3).tolist())], [])
            assert index.keyword("sourdough week", 5) == []
            index.write([mine], [])
            # Enrichment: keyword vectors and evidence for the user's chunks go beside them.
            theirs = [doc for batch in index.iter_documents() for doc in batch if doc.id != "mine"]
            index.add_evidence(theirs, [ChunkEvidence(doc.id, term_counts=term_counts(doc.content)) for doc in theirs])
            assert index.keyword("sourdough starter", 3)[0].document.id == "user-5"
            assert index.term_statistics(["sourdough"]).n_chunks == 8
            after = {
                doc.id: (doc.content, doc.meta, doc.embedding)
                for batch in index.iter_documents(with_embeddings=True)
                for doc in batch
                if doc.id != "mine"
            }
            assert after.keys() == before.keys()
            for key, (content, meta, embedding) in before.items():
                assert after[key][:2] == (content, meta)
                assert after[key][2] == pytest.approx(embedding, abs=1e-6)
        finally:
            index.close()

    def test_a_dot_product_collection_still_gives_cosines(self, tmp_path, collection_name):
        index = QdrantChunkIndex(_store(tmp_path / "q", collection_name, similarity="dot_product"), MODEL)
        try:
            vectors = [_unit(1) * 3, _unit(2)]  # not unit length: dot product and cosine differ
            index.write([Document(id=f"c{k}", content="x", embedding=v.tolist()) for k, v in enumerate(vectors)], [])
            hits = index.dense(_unit(1), 2)
            assert hits[0].document.id == "c0" and hits[0].kind is ScoreKind.NONE
            assert hits[0].cosine == pytest.approx(1.0, abs=1e-5) and hits[0].raw_score == pytest.approx(3.0, abs=1e-4)
        finally:
            index.close()

    def test_another_dimension_or_model_is_a_mismatch(self, index, tmp_path):
        index.count()
        index.close()
        path = Path(index.document_store.path)
        with pytest.raises(KnowledgeBaseMismatch, match="384-dimensional"):
            QdrantChunkIndex(_store(path, index.collection, embedding_dim=8), MODEL).count()
        with pytest.raises(KnowledgeBaseMismatch, match="from all-MiniLM-L6-v2"):
            QdrantChunkIndex(_store(path, index.collection), "another-model").count()
        with pytest.raises(KnowledgeBaseMismatch, match="use_sparse_embeddings=true"):
            QdrantChunkIndex(_store(path, index.collection, use_sparse_embeddings=False), MODEL).count()

    def test_a_collection_of_the_earlier_layout_is_one_sentence(self, tmp_path, collection_name):
        client = QdrantClient(path=str(tmp_path / "old"))
        client.create_collection(
            collection_name,
            vectors_config={"dense": models.VectorParams(size=384, distance=models.Distance.COSINE)},
        )
        client.close()
        index = QdrantChunkIndex(_store(tmp_path / "old", collection_name), MODEL)
        with pytest.raises(KnowledgeBaseMismatch, match="earlier version of the research assistant; re-ingest"):
            index.count()
        index.close()

    def test_a_knowledge_base_of_the_earlier_layout_is_not_shadowed_by_an_empty_one(self, tmp_path, collection_name):
        client = QdrantClient(path=str(tmp_path / "old"))
        for suffix in ("_chunks", "_documents"):
            client.create_collection(collection_name + suffix, vectors_config={})
        client.close()
        index = QdrantChunkIndex(_store(tmp_path / "old", collection_name), MODEL)
        with pytest.raises(KnowledgeBaseMismatch, match=r"earlier version .*; re-ingest into a new collection"):
            index.count()
        index.close()
        client = QdrantClient(path=str(tmp_path / "old"))
        names = {c.name for c in client.get_collections().collections}
        client.close()
        assert names == {collection_name + "_chunks", collection_name + "_documents"}  # nothing was created

    def test_drop_removes_the_side_collections_and_starts_afresh(self, loaded):
        client = loaded.client
        loaded.drop()
        names = {c.name for c in client.get_collections().collections}
        assert not names & {loaded.collection, loaded.sentences_name, loaded.terms_name}
        assert loaded.count() == 0
        meta = json.dumps(client.get_collection(loaded.collection).config.metadata)
        assert "keyword_terms" in meta


@pytest.mark.integration
class TestFactoryHooks:
    def test_the_settings_store_round_trips_without_a_secret(self, tmp_path, monkeypatch):
        from components.knowledge_base.qdrant_index import document_store_for
        from components.settings import Settings

        local = document_store_for(Settings(research_data_dir=tmp_path), "research", 384)
        assert local.path == str(tmp_path / "qdrant") and local.use_sparse_embeddings and local.sparse_idf
        monkeypatch.setenv("QDRANT_API_KEY", "very-secret")
        remote = document_store_for(Settings(qdrant_url="http://127.0.0.1:6333"), "research", 384)
        data = remote.to_dict()
        assert "very-secret" not in json.dumps(data) and data["init_parameters"]["recreate_index"] is False
        assert QdrantDocumentStore.from_dict(data).api_key.resolve_value() == "very-secret"

    def test_closing_the_shared_clients_frees_the_folder_and_indexes_reopen(self, tmp_path, collection_name):
        from components.knowledge_base.qdrant_index import CLIENTS, open_chunk_index

        index = open_chunk_index(_store(tmp_path / "q", collection_name), MODEL)
        index.write([Document(id="c", content="Lone chunk.", embedding=_unit(1).tolist())], [])
        CLIENTS.close_all()
        QdrantClient(path=str(tmp_path / "q")).close()  # the folder is free
        assert index.count() == 1  # and the index opens it again
        index.close()
