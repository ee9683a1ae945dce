"""One conformance suite for every knowledge-base backend: the store interface and the components over it.

Runs once per `kb_backend` (see conftest.py) on a small written corpus embedded with the real MiniLM model.
"""

from __future__ import annotations

import datetime as dt
import json
import textwrap
import uuid

import numpy as np
import pytest
from haystack import Pipeline

from components.contracts import ScoreKind, SourceType, StatusKind, document_to_chunk
from components.knowledge_base import GetDocument, KnowledgeBaseSearch, ListDocuments
from components.knowledge_base.store import ChunkRecord, DocumentRecord, KnowledgeBaseMismatch, SearchFilters
from components.text.language import chunk_sentence_spans
from tests.components.knowledge_base.kb_corpus import CONFORMANCE_DOCUMENTS, conformance_corpus
from tests.fresh_process import reported, run_python

CORPUS = CONFORMANCE_DOCUMENTS
ALL_CHUNKS = sum(len(chunks) for *_, chunks in CORPUS)
# The sentence spans ingestion stores in a chunk's metadata (two pieces here, to see that every pair comes back).
HNSW_SPANS = CORPUS[0][-1][0][1]["sentence_spans"]


@pytest.fixture(scope="module")
def corpus(embedding_model):
    return conformance_corpus(embedding_model)


@pytest.fixture(scope="module")
def loaded(kb_backend, corpus):
    """The backend with the corpus ingested, in a collection of its own for the module."""
    collection = f"conf_{uuid.uuid4().hex[:8]}"
    store = kb_backend.store(collection)
    for document, chunks in corpus:
        store.upsert_document(document, chunks)
    return collection


def _search(mode: str, collection: str, **kwargs):
    component = KnowledgeBaseSearch(mode=mode, collection=collection)
    return component.run(**kwargs)


def _ids(result) -> list[str]:
    return [document.id for document in result["documents"]]


def _doc_ids(result) -> set[str]:
    return {document.meta["document_id"] for document in result["documents"]}


@pytest.mark.integration
class TestKnowledgeBaseConformance:
    def test_dense_finds_the_answer_with_complete_attribution(self, loaded, kb_backend, embedding_model):
        query = "How does a graph index find nearest neighbours without comparing every vector?"
        result = _search("dense", loaded, query=query, query_embedding=embedding_model.embed_one(query).tolist())
        assert result["status"].status is StatusKind.SUCCESS
        assert result["status"].source == "kb_dense" and result["status"].total_found == len(result["documents"])
        top = result["documents"][0]
        assert top.id == "hnsw-0"
        chunk = document_to_chunk(top)  # validates against the one data model
        assert chunk.source_type is SourceType.KB
        assert chunk.source_id == "hnsw" and chunk.source_title == "Approximate nearest neighbour indexes"
        assert chunk.source_date == dt.date(2024, 2, 1) and chunk.source_url is None
        assert chunk.score_kind is ScoreKind.COSINE and chunk.ranks == {"kb_dense": 1}
        assert chunk.metadata["document_id"] == "hnsw"
        assert chunk.metadata["document_title"] == "Approximate nearest neighbour indexes"
        assert chunk.metadata["collection_name"] == loaded
        assert chunk.metadata["chunk_index"] == 0 and chunk.metadata["document_total_chunks"] == 2
        assert chunk.metadata["embedding_model"] == kb_backend.store(loaded).embedding_model
        assert chunk.metadata["section_title"] == "HNSW" and chunk.metadata["doc_type"] == "md"
        # The chunk's stored sentences come back with it, so the question's steps need not split it again.
        assert chunk.metadata["sentence_spans"] == HNSW_SPANS
        assert chunk_sentence_spans(top.content, top.meta) == [tuple(span) for span in HNSW_SPANS]
        assert chunk.metadata["similarity_score"] == pytest.approx(chunk.raw_score)
        # Dense relevance is the cosine itself, computed by the backend.
        assert chunk.semantic_relevance == pytest.approx(
            float(np.dot(embedding_model.embed_one(query), embedding_model.embed_one(top.content))), abs=2e-3
        )
        assert [d.meta["ranks"]["kb_dense"] for d in result["documents"]] == list(
            range(1, len(result["documents"]) + 1)
        )

    def test_dense_embeds_the_question_itself_when_no_embedding_is_given(self, loaded, embedding_model):
        query = "wild yeast starter for bread"
        given = _search("dense", loaded, query=query, query_embedding=embedding_model.embed_one(query).tolist())
        own = _search("dense", loaded, query=query)
        assert _ids(own) == _ids(given) and _ids(own)[0] == "sourdough-0"

    def test_keyword_matches_any_term_and_ranks_on_the_terms(self, loaded, embedding_model):
        # No chunk holds both words: AND semantics would find nothing.
        query = "sourdough photovoltaic"
        result = _search("keyword", loaded, query=query, query_embedding=embedding_model.embed_one(query).tolist())
        assert result["status"].status is StatusKind.SUCCESS
        assert _doc_ids(result) == {"sourdough", "solar"}
        # Full-text rank (PostgreSQL) or BM25 (Milvus, Qdrant): backend-specific raw scores, positive, best first.
        assert len({d.meta["score_kind"] for d in result["documents"]}) == 1
        assert result["documents"][0].meta["score_kind"] in ("ts_rank", "bm25")
        top = _search("keyword", loaded, query="How do stop words and stemming shape lexemes?")["documents"][0]
        assert top.id == "fulltext-1" and top.meta["page_number"] == 2 and top.meta["source_title"]
        # Keyword chunks carry the same relevance scale as dense ones (cosine to the question).
        assert top.meta["semantic_relevance"] > 0.2

    def test_keyword_without_an_embedding_fills_the_same_relevance(self, loaded, embedding_model):
        # Without an embedding, stores that look cosines up by id search first and add the cosines afterwards.
        query = "How do stop words and stemming shape lexemes?"
        own = _search("keyword", loaded, query=query)
        given = _search("keyword", loaded, query=query, query_embedding=embedding_model.embed_one(query).tolist())
        assert _ids(own) == _ids(given) and own["documents"]
        for mine, theirs in zip(own["documents"], given["documents"], strict=True):
            assert mine.meta["semantic_relevance"] == pytest.approx(theirs.meta["semantic_relevance"], abs=2e-3)

    def test_keyword_of_only_stop_words_finds_nothing(self, loaded):
        result = _search("keyword", loaded, query="the of and")
        assert result["documents"] == [] and result["status"].status is StatusKind.SUCCESS

    def test_hybrid_fuses_both_lists(self, loaded, embedding_model):
        query = "Which index finds rows whose lexemes match a tsquery?"
        embedding = embedding_model.embed_one(query).tolist()
        result = _search("hybrid", loaded, query=query, query_embedding=embedding, limit=4)
        top = result["documents"][0]
        assert top.id == "fulltext-0"
        assert top.meta["score_kind"] == "rrf" and top.meta["ranks"]["kb_hybrid"] == 1
        assert "kb_hybrid_dense" in top.meta["ranks"] and "kb_hybrid_keyword" in top.meta["ranks"]
        ranks = top.meta["ranks"]
        assert top.meta["raw_score"] == pytest.approx(
            0.5 / (60 + ranks["kb_hybrid_dense"]) + 0.5 / (60 + ranks["kb_hybrid_keyword"])
        )
        assert len(result["documents"]) == 4

    def test_text_weight_zero_and_one_follow_one_list(self, loaded, embedding_model):
        query = "photovoltaic output in summer heat"
        embedding = embedding_model.embed_one(query).tolist()
        dense = _search("dense", loaded, query=query, query_embedding=embedding, limit=5)
        keyword = _search("keyword", loaded, query=query, query_embedding=embedding, limit=5)
        only_dense = _search("hybrid", loaded, query=query, query_embedding=embedding, limit=5, text_weight=-3)
        only_keyword = _search("hybrid", loaded, query=query, query_embedding=embedding, limit=5, text_weight=7)
        assert _ids(only_dense) == _ids(dense)
        assert _ids(only_keyword)[: len(_ids(keyword))] == _ids(keyword)

    @pytest.mark.parametrize("mode", ["dense", "keyword", "hybrid"])
    def test_scores_are_in_range_and_best_first(self, loaded, embedding_model, mode):
        query = "indexes for searching text and vectors"
        result = _search(mode, loaded, query=query, query_embedding=embedding_model.embed_one(query).tolist(), limit=50)
        documents = result["documents"]
        assert documents
        assert all(
            0.0 <= d.meta["semantic_relevance"] <= 1.0 and d.score == d.meta["semantic_relevance"] for d in documents
        )
        raw = [d.meta["raw_score"] for d in documents]
        assert raw == sorted(raw, reverse=True)
        if mode == "dense":
            assert all(-1.0 <= r <= 1.0 for r in raw)
            relevance = [d.meta["semantic_relevance"] for d in documents]
            assert relevance == sorted(relevance, reverse=True)
        if mode == "keyword":
            assert all(r > 0.0 for r in raw)

    def test_limit_is_clamped(self, loaded, embedding_model):
        query = "bread"
        embedding = embedding_model.embed_one(query).tolist()
        assert len(_search("dense", loaded, query=query, query_embedding=embedding, limit=0)["documents"]) == 1
        assert len(_search("dense", loaded, query=query, query_embedding=embedding, limit=-5)["documents"]) == 1
        assert (
            len(_search("dense", loaded, query=query, query_embedding=embedding, limit=500)["documents"]) == ALL_CHUNKS
        )
        component = KnowledgeBaseSearch(collection=loaded, limit=1000)
        assert component.limit == 50

    def test_min_relevance_drops_weak_chunks_and_is_clamped(self, loaded, embedding_model):
        query = "green tea temperature"
        embedding = embedding_model.embed_one(query).tolist()
        everything = _search("dense", loaded, query=query, query_embedding=embedding, limit=50)
        floor = 0.3
        kept = _search("dense", loaded, query=query, query_embedding=embedding, limit=50, min_relevance=floor)
        expected = [d.id for d in everything["documents"] if d.meta["semantic_relevance"] >= floor]
        assert _ids(kept) == expected and 0 < len(expected) < ALL_CHUNKS
        none = _search("hybrid", loaded, query=query, query_embedding=embedding, min_relevance=5)
        assert none["documents"] == [] and none["status"].status is StatusKind.SUCCESS
        all_ = _search("keyword", loaded, query="tea", query_embedding=embedding, min_relevance=-2)
        assert _ids(all_) == ["undated-0"]

    @pytest.mark.parametrize("mode", ["dense", "keyword", "hybrid"])
    def test_filters_restrict_in_every_mode(self, loaded, embedding_model, mode):
        query = "index search lexemes vectors loaf panels tea"
        embedding = embedding_model.embed_one(query).tolist()

        def found(**kwargs) -> set[str]:
            result = _search(mode, loaded, query=query, query_embedding=embedding, limit=50, **kwargs)
            assert result["status"].status is StatusKind.SUCCESS, result["status"].message
            return _doc_ids(result)

        assert found(filters={"doc_types": ["pdf", "web"]}) == {"fulltext", "sourdough"}
        # Inclusive on both ends; undated documents fall outside any date range.
        assert found(filters={"date_from": "2022-06-30", "date_to": "2023-05-20"}) == {"solar", "fulltext"}
        assert found(filters={"date_from": "2023-05-21"}) == {"hnsw"}
        assert found(filters={"document_ids": ["solar", "undated"]}) == {"solar", "undated"}
        assert found(filters={"doc_types": ["md"], "document_ids": ["solar"]}) == set()
        # as_of caps the date range.
        assert found(as_of="2022-12-31") == {"sourdough", "solar"}
        assert found(filters={"date_to": "2021-12-31"}, as_of="2024-12-31") == {"sourdough"}

    def test_filtered_dense_search_returns_limit_rows_where_they_exist(self, loaded, kb_backend, embedding_model):
        store = kb_backend.store(loaded)
        query = embedding_model.embed_one("bread crust")
        hits = store.dense_search(query, 3, SearchFilters(doc_types=("pdf",)))
        assert len(hits) == 3 and {h.document.doc_type for h in hits} == {"pdf"}
        hits = store.dense_search(query, 10, SearchFilters(document_ids=("solar",)))
        assert [h.chunk.chunk_id for h in hits] in (["solar-0", "solar-1"], ["solar-1", "solar-0"])

    def test_bad_input_gives_a_status_not_an_exception(self, loaded):
        component = KnowledgeBaseSearch(mode="hybrid", collection=loaded)
        cases = {
            "the question is empty": {"query": "   "},
            "longer than 2,000": {"query": "x" * 2001},
            "date_from must be a date": {"query": "tea", "filters": {"date_from": "last spring"}},
            "unknown filter colour": {"query": "tea", "filters": {"colour": "red"}},
            "as_of must be a date": {"query": "tea", "as_of": "2024-13-45"},
            "is after date_to": {"query": "tea", "filters": {"date_from": "2024-01-02", "date_to": "2024-01-01"}},
            "limit must be a number": {"query": "tea", "limit": "many"},
        }
        for expected, kwargs in cases.items():
            result = component.run(**kwargs)
            assert result["documents"] == []
            assert result["status"].status is StatusKind.ERROR and expected in result["status"].message, kwargs

    def test_not_selected_is_skipped(self, loaded):
        result = _search("dense", loaded, query="tea", sources=["web", "arxiv"])
        assert result["documents"] == [] and result["status"].status is StatusKind.SKIPPED
        assert _search("dense", loaded, query="tea", sources=["auto"])["documents"]
        assert _search("dense", loaded, query="tea", sources=["kb"])["documents"]

    async def test_pipeline_run_async_matches_run(self, loaded, embedding_model):
        # The search is sync: `Pipeline.run_async` runs it in its executor, with the same results and statuses.
        query = "wild yeast"
        embedding = embedding_model.embed_one(query).tolist()
        component = KnowledgeBaseSearch(mode="hybrid", collection=loaded)
        pipeline = Pipeline()
        pipeline.add_component("search", component)

        async def run_async(**inputs):
            return (await pipeline.run_async({"search": inputs}))["search"]

        sync = component.run(query=query, query_embedding=embedding, filters={"doc_types": ["web"]})
        result = await run_async(query=query, query_embedding=embedding, filters={"doc_types": ["web"]})
        assert _ids(result) == _ids(sync) and result["status"].status is StatusKind.SUCCESS
        skipped = await run_async(query=query, sources=["memory"])
        assert skipped["status"].status is StatusKind.SKIPPED
        bad = await run_async(query="")
        assert bad["status"].status is StatusKind.ERROR

    def test_a_keyword_index_counted_by_another_text_analysis_is_refused(self, loaded, kb_backend, monkeypatch):
        """A collection records the text analysis that counted its terms; a version that analyses otherwise (other
        stop words, stems or lemma tables) refuses it in one sentence instead of mis-scoring every keyword search."""
        from components.knowledge_base import chunk_index

        assert kb_backend.store(loaded).keyword_search("graph layers", 3)  # the analysis that built it: fine
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: "another_pipeline 1.0 / 000000000000")
        with pytest.raises(KnowledgeBaseMismatch, match="was keyword-indexed by the text analysis .* re-ingest"):
            kb_backend.store(loaded).keyword_search("graph layers", 3)

    def test_readers_that_never_keyword_search_open_a_base_another_analysis_indexed(
        self, loaded, kb_backend, monkeypatch
    ):
        """Listing documents and reading one count no terms: a base whose keyword index another text analysis
        counted (the research pipeline's spacy_model, when SPACY_MODEL names another) is read, and its record is
        kept; what keyword-searches still refuses it."""
        from components.knowledge_base import chunk_index

        built_by = chunk_index.text_analysis()
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: "zorblex_core_lg 9.9 / 000000000000")
        listing = ListDocuments(collection=loaded).run(limit=100)
        assert listing["status"].status is StatusKind.SUCCESS and listing["total"] == len(CORPUS)
        read = GetDocument(collection=loaded).run(document_id="fulltext")
        assert read["status"].status is StatusKind.SUCCESS and read["document"]["chunk_count"] == 3
        with pytest.raises(KnowledgeBaseMismatch, match="was keyword-indexed by the text analysis"):
            kb_backend.store(loaded).keyword_search("graph layers", 3)
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: built_by)
        assert kb_backend.store(loaded).keyword_search("graph layers", 3)  # the readers left its record as it was

    def test_a_reader_opening_a_new_base_first_records_no_analysis_for_it(self, kb_backend, monkeypatch):
        """The analysis of a reader's process is not the one that will count the base's terms: what writes first
        records its own."""
        from components.knowledge_base import chunk_index

        built_by = chunk_index.text_analysis()
        fresh = f"readfirst_{uuid.uuid4().hex[:8]}"
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: "zorblex_core_lg 9.9 / 000000000000")
        assert ListDocuments(collection=fresh).run()["status"].status is StatusKind.SUCCESS
        monkeypatch.setattr(chunk_index, "text_analysis", lambda: built_by)
        assert kb_backend.store(fresh).keyword_search("graph layers", 3) == []

    def test_get_document_returns_fields_and_ordered_chunks(self, loaded):
        result = GetDocument(collection=loaded).run(document_id="fulltext")
        assert result["status"].status is StatusKind.SUCCESS
        document = result["document"]
        assert document["title"] == "Full-text search in PostgreSQL" and document["doc_type"] == "pdf"
        assert document["date"] == "2023-05-20" and document["chunk_count"] == 3
        assert document["text"].startswith("A tsvector holds") and document["metadata"] == {"origin": "conformance"}
        assert [d.meta["chunk_index"] for d in result["chunks"]] == [0, 1, 2]
        assert all(document_to_chunk(d).metadata["document_total_chunks"] == 3 for d in result["chunks"])
        missing = GetDocument(collection=loaded).run(document_id="no-such-doc")
        assert missing["document"] is None and missing["chunks"] == []
        assert (
            missing["status"].status is StatusKind.SUCCESS
            and "no document with id 'no-such-doc'" in missing["status"].message
        )

    def test_list_documents_pages_counts_and_filters(self, loaded):
        listing = ListDocuments(collection=loaded)
        first = listing.run(limit=2, offset=0)
        second = listing.run(limit=2, offset=2)
        rest = listing.run(limit=100, offset=4)
        assert first["total"] == second["total"] == len(CORPUS)
        ids = [d["document_id"] for page in (first, second, rest) for d in page["documents"]]
        assert sorted(ids) == sorted(doc[0] for doc in CORPUS) and len(ids) == len(set(ids))
        counts = {d["document_id"]: d["chunk_count"] for d in listing.run(limit=100)["documents"]}
        assert counts == {doc[0]: len(doc[-1]) for doc in CORPUS}
        assert len(listing.run(limit=0)["documents"]) == 1
        assert listing.run(limit=10, offset=-4)["documents"] == listing.run(limit=10)["documents"]
        found = listing.run(search="sourdough")
        assert [d["document_id"] for d in found["documents"]] == ["sourdough"] and found["total"] == 1
        typed = listing.run(filters={"doc_types": ["pdf", "docx"]})
        assert {d["document_id"] for d in typed["documents"]} == {"fulltext", "solar"}
        bad = listing.run(filters={"date_to": "yesterday"})
        assert bad["status"].status is StatusKind.ERROR and bad["documents"] == [] and bad["total"] == 0

    def test_upsert_replaces_and_delete_removes(self, kb_backend, embedding_model):
        collection = f"conf_{uuid.uuid4().hex[:8]}"
        store = kb_backend.store(collection)
        corpus = conformance_corpus(embedding_model)
        for document, chunks in corpus:
            store.upsert_document(document, chunks)
        assert store.count_documents() == len(CORPUS) and store.count_chunks() == ALL_CHUNKS
        # A new version of "fulltext" with one chunk: the three old chunks must be gone.
        new_text = "Inverted indexes map each lexeme to the rows that contain it."
        document = corpus[1][0]
        document.content_hash, document.text = "v2", new_text
        new_chunk = ChunkRecord("fulltext-v2-0", "fulltext", 0, new_text, embedding_model.embed_one(new_text), {})
        store.upsert_document(document, [new_chunk])
        document_back, chunks_back = store.get_document("fulltext")
        assert document_back.content_hash == "v2" and [c.chunk_id for c in chunks_back] == ["fulltext-v2-0"]
        assert (
            store.count_chunks() == ALL_CHUNKS - 2 and store.find_by_source("papers/fulltext.pdf").content_hash == "v2"
        )
        hits = store.keyword_search("tsvector GIN tsquery inverted lexeme", 10)
        assert "fulltext-0" not in {h.chunk.chunk_id for h in hits}
        assert "fulltext-v2-0" in {h.chunk.chunk_id for h in hits}
        search = KnowledgeBaseSearch(mode="keyword", collection=collection)
        assert search.run(query="inverted lexeme rows")["documents"][0].meta["document_total_chunks"] == 1
        # Delete.
        assert store.delete_document("sourdough") is True
        assert store.delete_document("sourdough") is False
        assert store.get_document("sourdough") is None and store.find_by_source("https://example.org/sourdough") is None
        assert store.count_documents() == len(CORPUS) - 1 and store.count_chunks() == ALL_CHUNKS - 4
        assert "sourdough" not in _doc_ids(search.run(query="sourdough starter bread loaf"))
        # Copying between backends sees everything, embeddings included.
        copied = {doc.document_id: chunks for doc, chunks in store.iter_chunks(batch_size=2)}
        assert set(copied) == {"hnsw", "fulltext", "solar", "undated"}
        assert all(
            len(c.embedding) == 384 and abs(float(np.linalg.norm(c.embedding)) - 1) < 1e-3
            for cs in copied.values()
            for c in cs
        )

    def test_ranking_evidence_is_its_two_lookups_on_every_backend(self, kb_backend, embedding_model):
        # The ranker asks `ranking_evidence` only: pgvector answers it on one connection, Qdrant and Milvus through
        # the shared method (the statistics in a worker thread); each must equal the two lookups it stands for.
        from components.text.analyzer import term_counts

        store = kb_backend.store(f"conf_{uuid.uuid4().hex[:8]}")
        texts = ["Otters float on kelp. Otters sleep holding paws.", "Herons wade in marsh water."]
        for number, text in enumerate(texts):
            spans = chunk_sentence_spans(text)
            chunk = ChunkRecord(
                f"notes{number}-0",
                f"notes{number}",
                0,
                text,
                embedding_model.embed_one(text),
                {},
                sentence_spans=spans,
                sentence_embeddings=embedding_model.embed([text[start:end] for start, end in spans]),
                term_counts=term_counts(text),
            )
            document = DocumentRecord(f"notes{number}", "Notes", f"notes/{number}.md", "md", f"h{number}", text=text)
            store.upsert_document(document, [chunk])
        query, asked = embedding_model.embed_one("Where do otters sleep?"), ["otter", "sleep", "unheard"]
        ids = ["notes1-0", "missing", "notes0-0"]
        sentences, statistics = store.ranking_evidence(ids, query, asked)
        assert (sentences, statistics) == (store.sentence_similarities(ids, query), store.term_statistics(asked))
        assert [len(sentences[chunk_id]) for chunk_id in ("notes0-0", "notes1-0")] == [2, 1]
        assert statistics.n_chunks == 2 and statistics.df == {"otter": 1, "sleep": 1, "unheard": 0}
        assert store.ranking_evidence([], query, ["otter"]) == ({}, store.term_statistics(["otter"]))
        store.drop()

    def test_a_fresh_process_sees_the_data(self, loaded, kb_backend, embedding_model):
        from components.knowledge_base.factory import close_knowledge_bases

        close_knowledge_bases()  # embedded engines lock their files to one process
        query = "wild yeast starter"
        script = textwrap.dedent(
            """
            import json, sys
            from components.knowledge_base import KnowledgeBaseSearch, ListDocuments, open_knowledge_base
            collection, embedding = sys.argv[1], json.loads(sys.argv[2])
            store = open_knowledge_base(collection=collection)
            result = KnowledgeBaseSearch(mode="hybrid", collection=collection).run(
                query="wild yeast starter", query_embedding=embedding)
            listing = ListDocuments(collection=collection).run(limit=100)
            print(json.dumps({"chunks": store.count_chunks(), "top": [d.id for d in result["documents"]][:1],
                              "status": result["status"].status.value, "total": listing["total"]}))
            """
        )
        embedding = json.dumps(embedding_model.embed_one(query).tolist())
        seen = reported(run_python(script, loaded, embedding, env=kb_backend.env(), timeout=180))
        assert seen == {"chunks": ALL_CHUNKS, "top": ["sourdough-0"], "status": "success", "total": len(CORPUS)}

    def test_unreachable_backend_gives_a_status(self, unreachable):
        for mode in ("dense", "keyword", "hybrid"):
            result = KnowledgeBaseSearch(mode=mode, collection="conf_unreachable").run(
                query="tea", query_embedding=[0.05] * 384
            )
            assert result["documents"] == [] and result["status"].status is StatusKind.ERROR
            assert result["status"].message
        got = GetDocument(collection="conf_unreachable").run(document_id="tea")
        assert got["status"].status is StatusKind.ERROR and got["document"] is None
        listed = ListDocuments(collection="conf_unreachable").run()
        assert listed["status"].status is StatusKind.ERROR and listed["total"] == 0
