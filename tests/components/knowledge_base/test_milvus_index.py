"""`MilvusChunkIndex` on milvus-haystack's `MilvusDocumentStore`, against real milvus-lite files in tmp folders."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from haystack import Document
from haystack.components.writers import DocumentWriter
from haystack.document_stores.types import DuplicatePolicy

from components.contracts import ScoreKind
from components.knowledge_base.chunk_index import (
    ChunkEvidence,
    document_to_record,
    record_to_document,
    search_filters_to_haystack,
)
from components.knowledge_base.milvus_index import CLIENTS, MilvusChunkIndex, open_milvus_document_store
from components.knowledge_base.store import (
    ChunkRecord,
    DocumentRecord,
    KnowledgeBaseMismatch,
    KnowledgeBaseUnavailable,
    SearchFilters,
)
from tests.contract_servers import free_port

DIM = 8
TEXTS = [
    "Sourdough bread rises with wild yeast and lactic bacteria.",
    "A starter is flour and water fermented for days.",
    "Milvus keeps dense vectors and sparse BM25 vectors side by side.",
    "Qdrant stores points with payloads in collections.",
    "PostgreSQL with pgvector answers nearest-neighbour queries in SQL.",
    "Rye flour ferments faster than wheat flour in a starter.",
]


def _unit(rng: np.random.Generator, n: int) -> np.ndarray:
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _corpus(seed: int = 3) -> tuple[list[Document], list[ChunkEvidence], np.ndarray]:
    """Three documents of two chunks each, as the assistant writes them, with sentence vectors and term counts."""
    rng = np.random.default_rng(seed)
    vectors = _unit(rng, len(TEXTS))
    docs, evidence = [], []
    for i, text in enumerate(TEXTS):
        record = DocumentRecord(
            document_id=f"doc{i // 2}",
            title=f"Title {i // 2}",
            source=f"/notes/{i // 2}.md",
            doc_type="pdf" if i // 2 == 1 else "md",
            content_hash=f"h{i // 2}",
            date=dt.date(2020 + i // 2, 1, 1) if i // 2 < 2 else None,
        )
        half = len(text) // 2
        chunk = ChunkRecord(
            chunk_id=f"doc{i // 2}:{i % 2}",
            document_id=record.document_id,
            chunk_index=i % 2,
            text=text,
            embedding=vectors[i],
            metadata={"page_number": i + 1, "section_title": None},
            sentence_spans=[(0, half), (half, len(text))],
            sentence_embeddings=_unit(rng, 2),
            term_counts={word: 1 for word in {w.strip(".").lower() for w in text.split()}},
        )
        docs.append(record_to_document(record, chunk))
        evidence.append(ChunkEvidence.of(chunk))
    return docs, evidence, vectors


def _store(tmp_path, collection: str = "kb", **kwargs):
    return open_milvus_document_store(collection, uri=str(tmp_path / "milvus.db"), **kwargs)


@pytest.fixture()
def index(tmp_path):
    index = MilvusChunkIndex(_store(tmp_path), embedding_model="test-model", dimension=DIM)
    yield index
    index.close()


@pytest.fixture()
def loaded(index):
    docs, evidence, vectors = _corpus()
    index.write(docs, evidence)
    index.vectors = vectors
    return index


@pytest.mark.integration
class TestMilvusChunkIndex:
    def test_fetch_keeps_the_chunk_meta_layout_and_the_order_asked(self, loaded):
        found = loaded.fetch(["doc2:1", "missing", "doc0:0"])
        assert [doc.id for doc in found] == ["doc2:1", "doc0:0"]
        first = found[1]
        assert first.content == TEXTS[0]
        assert first.embedding is None
        assert first.meta["document_id"] == "doc0" and first.meta["chunk_index"] == 0
        assert first.meta["date"] == "2020-01-01" and first.meta["date_ordinal"] == dt.date(2020, 1, 1).toordinal()
        assert first.meta["page_number"] == 1 and "section_title" not in first.meta
        chunk = document_to_record(first)
        assert chunk.document_id == "doc0" and chunk.metadata == {"page_number": 1}
        with_vector = loaded.fetch(["doc0:0"], with_embeddings=True)[0]
        assert np.allclose(with_vector.embedding, loaded.vectors[0], atol=1e-6)
        assert loaded.count() == len(TEXTS)

    def test_dense_gives_cosines_and_honours_haystack_filters(self, loaded):
        query = loaded.vectors[2]
        hits = loaded.dense(query, 3)
        assert hits[0].document.id == "doc1:0"
        assert [hit.kind for hit in hits] == [ScoreKind.COSINE] * 3
        for hit in hits:
            row = TEXTS.index(hit.document.content)
            assert hit.cosine == pytest.approx(float(loaded.vectors[row] @ query), abs=1e-5)
            assert hit.document.embedding is None
        pdf = loaded.dense(query, 6, search_filters_to_haystack(SearchFilters(doc_types=("pdf",))))
        assert {hit.document.meta["doc_type"] for hit in pdf} == {"pdf"} and len(pdf) == 2
        dated = search_filters_to_haystack(SearchFilters(date_from=dt.date(2020, 6, 1), date_to=dt.date(2022, 1, 1)))
        assert {hit.document.meta["document_id"] for hit in loaded.dense(query, 6, dated)} == {"doc1"}
        # Undated documents fall out of any range ending somewhere.
        until = search_filters_to_haystack(SearchFilters(date_to=dt.date(2030, 1, 1)))
        assert {hit.document.meta["document_id"] for hit in loaded.dense(query, 6, until)} == {"doc0", "doc1"}
        by_id = search_filters_to_haystack(SearchFilters(document_ids=("doc2",)))
        assert {hit.document.id for hit in loaded.dense(query, 6, by_id)} == {"doc2:0", "doc2:1"}

    def test_keyword_matches_any_term_with_positive_bm25_and_cosines(self, loaded):
        query_vector = loaded.vectors[5]
        hits = loaded.keyword("rye sourdough", 5, query_embedding=query_vector)
        assert {hit.document.id for hit in hits} == {"doc2:1", "doc0:0"}  # either term suffices
        assert all(hit.kind is ScoreKind.BM25 and hit.raw_score > 0 for hit in hits)
        assert [hit.raw_score for hit in hits] == sorted((hit.raw_score for hit in hits), reverse=True)
        for hit in hits:
            row = TEXTS.index(hit.document.content)
            assert hit.cosine == pytest.approx(float(loaded.vectors[row] @ query_vector), abs=1e-5)
            assert hit.document.embedding is None
        assert loaded.keyword("the and of", 5) == []  # only stop words
        starter = loaded.keyword("starter", 5, search_filters_to_haystack(SearchFilters(doc_types=("md",))))
        assert {hit.document.id for hit in starter} == {"doc0:1", "doc2:1"}
        assert loaded.keyword("starter", 5, search_filters_to_haystack(SearchFilters(doc_types=("pdf",)))) == []
        only = loaded.keyword("starter", 5, search_filters_to_haystack(SearchFilters(document_ids=("doc0",))))
        assert [hit.document.id for hit in only] == ["doc0:1"]
        assert all(hit.cosine is None for hit in loaded.keyword("starter", 5))

    def test_evidence_sentences_terms_and_cosines_by_id(self, loaded):
        docs, evidence, vectors = _corpus()
        query = vectors[1]
        similarities = loaded.sentence_similarities(["doc0:1", "doc2:0", "nope"], query)
        assert set(similarities) == {"doc0:1", "doc2:0"}
        for chunk_id, rows in similarities.items():
            expected = next(item for item in evidence if item.chunk_id == chunk_id)
            assert [(start, end) for start, end, _ in rows] == expected.sentence_spans
            assert [value for _, _, value in rows] == pytest.approx(  # sentence vectors are kept as float16
                list(expected.sentence_embeddings @ query), abs=2e-3
            )
        stored = loaded.evidence(["doc1:1"])["doc1:1"]
        assert stored.term_counts == evidence[3].term_counts
        assert np.allclose(stored.sentence_embeddings, evidence[3].sentence_embeddings, atol=1e-3)
        stats = loaded.term_statistics(["flour", "starter", "milvus", "unseen"])
        assert stats.n_chunks == len(TEXTS)
        assert stats.df == {"flour": 2, "starter": 2, "milvus": 1, "unseen": 0}
        total = sum(len(item.term_counts) for item in evidence)
        assert stats.avg_terms == pytest.approx(total / len(TEXTS))

    def test_rewrites_and_deletes_keep_evidence_and_statistics_exact(self, loaded):
        docs, evidence, vectors = _corpus()
        rewritten = Document(id="doc2:1", content="Barley malt.", embedding=vectors[5].tolist(), meta=docs[5].meta)
        loaded.write([rewritten], [ChunkEvidence("doc2:1", [], None, {"barley": 1, "malt": 1})])
        assert loaded.fetch(["doc2:1"])[0].content == "Barley malt."
        assert loaded.keyword("rye", 5) == []
        stats = loaded.term_statistics(["flour", "barley", "rye"])
        assert stats.df == {"flour": 1, "barley": 1, "rye": 0}
        assert loaded.sentence_similarities(["doc2:1"], vectors[0]) == {}
        loaded.delete(["doc0:0", "doc0:1", "never-there"])
        assert loaded.count() == len(TEXTS) - 2
        assert loaded.fetch(["doc0:0"]) == [] and loaded.evidence(["doc0:0", "doc0:1"]) == {}
        stats = loaded.term_statistics(["starter", "sourdough"])
        assert stats.n_chunks == len(TEXTS) - 2 and stats.df == {"starter": 0, "sourdough": 0}
        assert [hit.document.id for hit in loaded.keyword("barley", 5)] == ["doc2:1"]

    def test_iter_documents_pages_through_every_chunk(self, loaded):
        batches = list(loaded.iter_documents(batch_size=4, with_embeddings=True))
        assert [len(batch) for batch in batches] == [4, 2]
        ids = sorted(doc.id for batch in batches for doc in batch)
        assert ids == sorted(f"doc{i // 2}:{i % 2}" for i in range(len(TEXTS)))
        assert all(doc.embedding is not None and len(doc.embedding) == DIM for batch in batches for doc in batch)

    def test_two_store_objects_for_one_file_share_one_client(self, tmp_path, loaded):
        # What YAML deserialisation does: a second store object for the same file, made after the first wrote.
        other_store = _store(tmp_path)
        other = MilvusChunkIndex(other_store, embedding_model="test-model", dimension=DIM)
        try:
            assert other.client is loaded.client  # the indexes of one file call one client
            assert other.count() == len(TEXTS)
            assert other.dense(loaded.vectors[3], 1)[0].document.id == "doc1:1"
            docs, evidence, _ = _corpus()
            other.delete(["doc1:1"])
            assert loaded.fetch(["doc1:1"]) == [] and loaded.count() == len(TEXTS) - 1
        finally:
            other.close()
        # The first index still works after the second let go.
        assert loaded.dense(loaded.vectors[0], 1)[0].document.id == "doc0:0"

    def test_a_store_made_before_the_collection_existed_sees_it(self, tmp_path):
        reader = MilvusChunkIndex(_store(tmp_path, "late"), embedding_model="test-model", dimension=DIM)
        writer = MilvusChunkIndex(_store(tmp_path, "late"), embedding_model="test-model", dimension=DIM)
        try:
            assert reader.count() == 0 and reader.dense(np.ones(DIM) / np.sqrt(DIM), 3) == []
            docs, evidence, vectors = _corpus()
            writer.write(docs, evidence)
            assert reader.count() == len(TEXTS)
            assert reader.keyword("milvus", 3)[0].document.id == "doc1:0"
        finally:
            reader.close()
            writer.close()

    def test_l2_collection_reopened_without_index_params_still_gives_cosines(self, tmp_path):
        store = _store(tmp_path, "l2", metric="L2")
        index = MilvusChunkIndex(store, embedding_model="test-model", dimension=DIM)
        docs, evidence, vectors = _corpus()
        index.write(docs, evidence)
        first = index.dense(vectors[4], 3)
        from milvus_haystack import MilvusDocumentStore

        plain = MilvusDocumentStore(collection_name="l2", connection_args={"uri": str(tmp_path / "milvus.db")})
        reopened = MilvusChunkIndex(plain, dimension=DIM)
        try:
            again = reopened.dense(vectors[4], 3)
            assert [hit.kind for hit in again] == [ScoreKind.L2] * 3
            assert [hit.document.id for hit in again] == [hit.document.id for hit in first]
            for hit in again:
                row = TEXTS.index(hit.document.content)
                assert hit.cosine == pytest.approx(float(vectors[row] @ vectors[4]), abs=1e-4)
                assert hit.raw_score == pytest.approx(2.0 - 2.0 * hit.cosine, abs=1e-4)
        finally:
            reopened.close()
            index.close()

    def test_a_collection_written_by_haystacks_document_writer_is_read_and_left_unchanged(self, tmp_path):
        from milvus_haystack import MilvusDocumentStore

        uri = str(tmp_path / "milvus.db")
        user_store = MilvusDocumentStore(collection_name="theirs", connection_args={"uri": uri})
        rng = np.random.default_rng(9)
        vectors = _unit(rng, 3)
        user_docs = [
            Document(id=f"u{i}", content=text, embedding=vectors[i].tolist(), meta={"author": f"a{i}"})
            for i, text in enumerate(TEXTS[:3])
        ]
        DocumentWriter(user_store, policy=DuplicatePolicy.OVERWRITE).run(user_docs)
        before = sorted(user_store.filter_documents(), key=lambda doc: doc.id)
        index = MilvusChunkIndex(user_store, dimension=DIM)
        try:
            hits = index.dense(vectors[1], 2)
            assert hits[0].document.id == "u1" and hits[0].document.meta == {"author": "a1"}
            assert hits[0].cosine == pytest.approx(1.0, abs=1e-5)
            assert index.keyword("starter", 3) == []  # no BM25 function on their collection, nothing copied yet
            for batch in index.iter_documents(batch_size=2):
                index.add_evidence(batch, [])  # what enrichment does
            found = index.keyword("starter flour", 3, query_embedding=vectors[1])
            assert [hit.document.id for hit in found] == ["u1"] and found[0].raw_score > 0
            assert found[0].document.meta == {"author": "a1"} and found[0].cosine == pytest.approx(1.0, abs=1e-5)
            only = {"field": "meta.author", "operator": "==", "value": "a0"}
            assert [hit.document.id for hit in index.keyword("sourdough starter", 3, only)] == ["u0"]
        finally:
            index.close()
        reopened = MilvusDocumentStore(collection_name="theirs", connection_args={"uri": uri})
        after = sorted(reopened.filter_documents(), key=lambda doc: doc.id)
        assert {name for name in reopened.client.list_collections() if name.startswith("theirs")} == {
            "theirs",
            "theirs_evidence",
            "theirs_terms",
            "theirs_keywords",
        }
        assert [(d.id, d.content, d.meta, d.embedding) for d in after] == [
            (d.id, d.content, d.meta, d.embedding) for d in before
        ]

    def test_old_layout_and_other_models_are_one_sentence(self, tmp_path):
        from pymilvus import DataType, MilvusClient

        client = MilvusClient(uri=str(tmp_path / "milvus.db"))
        schema = client.create_schema(auto_id=False)
        schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=DIM)
        index_params = client.prepare_index_params()
        index_params.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
        for name in ("old_chunks", "old_documents", "not_haystack"):  # as the old store made them
            client.create_collection(name, schema=schema, index_params=index_params)
        for name, expected in (("old", "earlier version's layout"), ("not_haystack", "not a Haystack collection")):
            with pytest.raises(KnowledgeBaseMismatch, match=expected):
                MilvusChunkIndex(_store(tmp_path, name), dimension=DIM)
        index = MilvusChunkIndex(_store(tmp_path, "kb"), embedding_model="test-model", dimension=DIM)
        docs, evidence, _ = _corpus()
        index.write(docs, evidence)
        index.close()
        with pytest.raises(KnowledgeBaseMismatch, match="another-model"):
            MilvusChunkIndex(_store(tmp_path, "kb"), embedding_model="another-model", dimension=DIM)
        with pytest.raises(KnowledgeBaseMismatch, match="8-dimensional"):
            MilvusChunkIndex(_store(tmp_path, "kb"), embedding_model="test-model", dimension=16)
        with pytest.raises(ValueError, match="65,535-byte"):
            MilvusChunkIndex(_store(tmp_path, "kb3"), dimension=DIM).write(
                [Document(id="x", content="é" * 40_000, embedding=[0.1] * DIM)], []
            )
        with pytest.raises(ValueError, match="dimensions"):
            MilvusChunkIndex(_store(tmp_path, "kb2"), dimension=DIM).write(
                [Document(id="x", content="x", embedding=[0.1, 0.2])], []
            )

    def test_the_store_round_trips_without_dropping_and_a_dead_server_is_one_sentence(self, tmp_path, monkeypatch):
        from milvus_haystack import MilvusDocumentStore

        store = _store(tmp_path)
        data = store.to_dict()
        assert data["init_parameters"]["drop_old"] is False
        assert data["init_parameters"]["index_params"]["metric_type"] == "COSINE"
        function = data["init_parameters"]["builtin_function"][0]["init_parameters"]
        assert "the" in function["analyzer_params"]["filter"][1]["stop_words"]
        again = MilvusDocumentStore.from_dict(data)
        index = MilvusChunkIndex(again, embedding_model="test-model", dimension=DIM)
        try:
            docs, evidence, vectors = _corpus()
            index.write(docs, evidence)
            assert index.keyword("milvus", 1)[0].document.id == "doc1:0"
        finally:
            index.close()
        monkeypatch.setenv("MILVUS_TOKEN", "very-secret-token")
        with pytest.raises(KnowledgeBaseUnavailable, match="Cannot reach Milvus at http://127.0.0.1") as error:
            open_milvus_document_store("kb", uri=f"http://127.0.0.1:{free_port()}")
        assert "very-secret-token" not in str(error.value)

    def test_a_folder_open_in_another_process_is_one_sentence(self, tmp_path):
        folder = tmp_path / "busy.db"
        folder.mkdir()
        (folder / "LOCK").touch()
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                textwrap.dedent(
                    f"""
                    import fcntl, os, sys, time
                    fd = os.open({str(folder / "LOCK")!r}, os.O_RDWR)
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    print("locked", flush=True)
                    time.sleep(60)
                    """
                ),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline().strip() == "locked"
            with pytest.raises(KnowledgeBaseUnavailable, match="open in another process"):
                open_milvus_document_store("kb", uri=str(folder))
            assert not CLIENTS.holds(str(folder))
        finally:
            holder.kill()
            holder.wait()
