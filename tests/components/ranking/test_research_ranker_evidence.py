"""`ResearchRanker` with the knowledge base's evidence: a real pgvector store, the real model, real searches."""

from __future__ import annotations

import dataclasses
from unittest.mock import Mock

import pytest
from haystack.components.joiners import DocumentJoiner

from components.contracts import ContextChunk, chunk_to_document
from components.knowledge_base import KnowledgeBaseSearch, open_knowledge_base
from components.knowledge_base.knowledge_base import KnowledgeBase
from components.knowledge_base.store import ChunkRecord, DocumentRecord
from components.ranking import ResearchRanker, evidence_scorer
from components.text import analyzer
from components.text.analyzer import SENTENCE_TERMS_KEY, analyze, sentence_terms_record, term_counts
from components.text.language import SENTENCE_SPANS_KEY, sentence_spans

QUESTION = "Which river flows through Warsaw?"
TEXTS = {
    # The answer sits in one sentence of a chunk about other things, so the chunk's own cosine is diluted.
    "answer": "The city's economy grew quickly after 1990, and new office towers changed the skyline. Its universities "
    "attract students from across Europe. The Vistula river flows through Warsaw from south to north. Tourists "
    "visit the rebuilt Old Town.",
    "rivers": "Rivers of Poland drain into the Baltic Sea. Many of them flow through large cities, and their valleys "
    "shaped the country's landscape.",
    "capital": "Warsaw is the capital of Poland and its largest city, with about 1.8 million inhabitants.",
}
FILLER = [
    "Paris is the capital of France.",
    "The Danube flows through Vienna and Budapest.",
    "Berlin is known for its museums.",
    "The Thames flows through London.",
    "Prague lies on the Vltava.",
]


@pytest.fixture()
def knowledge_base(database_url, collection_name, embedding_model):
    """A pgvector collection holding the chunks above (and some filler), with the evidence ingestion wrote before it
    stored each chunk's sentences and their terms in its metadata."""
    store = open_knowledge_base(collection=collection_name)
    _write(store, embedding_model, with_sentence_terms=False)
    yield store
    store.drop()


@pytest.fixture()
def knowledge_base_with_terms(database_url, collection_name, embedding_model):
    """The same collection written the way ingestion writes it now: the chunks' sentences and their terms in their
    metadata."""
    store = open_knowledge_base(collection=collection_name)
    _write(store, embedding_model, with_sentence_terms=True)
    yield store
    store.drop()


def _write(store: KnowledgeBase, embedding_model, with_sentence_terms: bool) -> None:
    texts = {**TEXTS, **{f"filler{i}": text for i, text in enumerate(FILLER)}}
    vectors, sentence_vectors, kept = embedding_model.embed_with_sentence_spans(
        list(texts.values()), [sentence_spans(text) for text in texts.values()]
    )
    for (name, text), vector, sentences, spans in zip(texts.items(), vectors, sentence_vectors, kept, strict=True):
        document = DocumentRecord(
            document_id=name, title="Cities", source=f"notes/{name}.txt", doc_type="txt", content_hash=name, text=text
        )
        cut = sentence_spans(text)
        metadata = {
            SENTENCE_SPANS_KEY: [list(span) for span in cut],
            SENTENCE_TERMS_KEY: sentence_terms_record(text, cut),
        }
        chunk = ChunkRecord(
            chunk_id=name,
            document_id=name,
            chunk_index=0,
            text=text,
            embedding=vector,
            metadata=metadata if with_sentence_terms else {},
            sentence_spans=spans,
            sentence_embeddings=sentences,
            term_counts=term_counts(f"Cities {text}"),
        )
        store.upsert_document(document, [chunk])


def _retrieve(collection: str, embedding_model) -> tuple[list, list, list]:
    vector = embedding_model.embed_one(QUESTION).tolist()
    branches = []
    for mode in ("dense", "keyword"):
        search = KnowledgeBaseSearch(mode=mode, collection=collection, limit=10)
        result = search.run(query=QUESTION, query_embedding=vector)
        assert result["status"].status.value == "success", result["status"]
        branches.append(result["documents"])
    fused = DocumentJoiner(join_mode="reciprocal_rank_fusion").run(branches)["documents"]
    return fused, branches, vector


@pytest.mark.integration
class TestEvidenceRanking:
    def test_sentence_and_term_evidence_move_the_answer_to_rank_one(self, knowledge_base, embedding_model):
        fused, branches, vector = _retrieve(knowledge_base.collection, embedding_model)
        dense = branches[0]
        assert dense[0].id == "rivers" and dense[1].id == "answer"  # the embedding alone prefers the wrong chunk

        ranker = ResearchRanker(top_k=3, document_store=knowledge_base.index.document_store)
        ranked = ranker.run(query=QUESTION, documents=fused, query_embedding=vector, branch_documents=branches)[
            "documents"
        ]
        assert [document.id for document in ranked][:1] == ["answer"]
        evidence = ranked[0].meta["evidence"]
        assert evidence["idf"] == "collection"
        assert evidence["sentence"] > evidence["dense"] + 0.1  # the in-context sentence vector found the answer
        start, end = evidence["best_span"]
        assert TEXTS["answer"][start:end] == "The Vistula river flows through Warsaw from south to north."
        # semantic relevance stays the chunk's cosine (the contract); the ranks say where the chunk came from.
        assert ranked[0].meta["semantic_relevance"] == pytest.approx(evidence["dense"], abs=1e-3)
        assert ranked[0].meta["ranks"]["kb_dense"] == 2 and ranked[0].meta["ranks"]["ranked"] == 1

    def test_stored_sentence_terms_are_read_and_rank_the_same(
        self, knowledge_base_with_terms, embedding_model, monkeypatch
    ):
        fused, branches, vector = _retrieve(knowledge_base_with_terms.collection, embedding_model)
        # Every hit carries its sentences' terms, as ingestion stored them.
        assert all(document.meta[SENTENCE_TERMS_KEY] for document in fused)
        ranker = ResearchRanker(top_k=8, document_store=knowledge_base_with_terms.index.document_store)

        def without_terms(documents: list) -> list:
            return [
                dataclasses.replace(document, meta={k: v for k, v in document.meta.items() if k != SENTENCE_TERMS_KEY})
                for document in documents
            ]

        expected = ranker.run(
            query=QUESTION,
            documents=without_terms(fused),
            query_embedding=vector,
            branch_documents=[without_terms(branch) for branch in branches],
        )

        def no_analysis(*_args, **_kwargs):
            raise AssertionError("analysed a chunk whose sentence terms were stored")

        term_counts_before = {document.id: term_counts(document.content) for document in fused}
        monkeypatch.setattr(evidence_scorer, "_text_terms", no_analysis)
        ranked = ranker.run(query=QUESTION, documents=fused, query_embedding=vector, branch_documents=branches)
        assert [(d.id, d.score, d.meta) for d in ranked["documents"]] == [
            (d.id, d.score, d.meta) for d in expected["documents"]
        ]
        # The answer and what reads it do not carry the terms on.
        assert not any(SENTENCE_TERMS_KEY in document.meta for document in ranked["documents"])
        # The citation check finds the ranked chunks analysed, as when the ranker analysed them.
        monkeypatch.setattr(analyzer, "terms", no_analysis)
        for document in ranked["documents"]:
            assert analyze(document.content).counts == term_counts_before[document.id]

    def test_without_store_evidence_the_ranker_still_ranks(self, knowledge_base, embedding_model):
        fused, branches, vector = _retrieve(knowledge_base.collection, embedding_model)
        ranked = ResearchRanker(top_k=5, use_store_evidence=False).run(
            query=QUESTION, documents=fused, query_embedding=vector
        )["documents"]
        assert len(ranked) == 5
        for document in ranked:
            evidence = document.meta["evidence"]
            assert evidence["idf"] == "candidates"
            assert evidence["sentence"] == pytest.approx(evidence["dense"])  # the chunk cosine stands in
        # Lexical evidence alone still lifts the chunk that holds all the question's terms.
        assert ranked[0].id == "answer"

    def test_chunks_from_other_sources_compete_on_the_same_scale(self, knowledge_base, embedding_model):
        fused, branches, vector = _retrieve(knowledge_base.collection, embedding_model)
        web_text = "Travel guide: the Vistula river flows through Warsaw, and boat trips leave from the boulevards."
        web = ContextChunk(
            id="web-1",
            source_type="web",
            text=web_text,
            semantic_relevance=float(embedding_model.embed_one(web_text) @ embedding_model.embed_one(QUESTION)),
            source_id="https://example.org/warsaw",
            source_title="Warsaw travel guide",
            metadata={"domain": "example.org", "page_url": "https://example.org/warsaw", "fetch_timestamp": "2026"},
        )
        documents = [*fused, chunk_to_document(web)]
        ranker = ResearchRanker(top_k=4, document_store=knowledge_base.index.document_store)
        ranked = ranker.run(query=QUESTION, documents=documents, query_embedding=vector)["documents"]
        by_id = {document.id: document for document in ranked}
        assert "web-1" in by_id and "answer" in by_id
        assert by_id["web-1"].meta["evidence"]["idf"] == "collection"  # the knowledge base's IDF weighs its terms
        assert by_id["web-1"].meta["evidence"]["coverage"] == pytest.approx(1.0)
        assert {ranked[0].id, ranked[1].id} == {"answer", "web-1"}


class TestGracefulDegradation:
    def _documents(self):
        from tests.components.ranking.chunks import kb_document

        return [
            kb_document("a", "The Vistula river flows through Warsaw.", 0.5),
            kb_document("b", "Warsaw is the capital of Poland.", 0.6),
        ]

    @staticmethod
    def _ranker(store) -> ResearchRanker:
        ranker = ResearchRanker(top_k=2)
        ranker._kb.get = lambda: store  # the knowledge base it would open at warm-up
        return ranker

    def test_a_store_without_evidence_support(self):
        plain = Mock(spec=KnowledgeBase)
        plain.collection = "tests"
        plain.ranking_evidence.return_value = ({}, None)
        ranked = self._ranker(plain).run(query=QUESTION, documents=self._documents(), query_embedding=[0.0] * 384)[
            "documents"
        ]
        assert [document.id for document in ranked] == ["a", "b"]
        assert plain.ranking_evidence.call_count == 1  # both lookups asked together, once per question
        assert ranked[0].meta["evidence"]["idf"] == "candidates"

    def test_a_failing_store_is_logged_and_skipped(self, caplog):
        broken = Mock(spec=KnowledgeBase)
        broken.collection = "tests"
        broken.ranking_evidence.side_effect = RuntimeError("connection reset")
        ranked = self._ranker(broken).run(query=QUESTION, documents=self._documents(), query_embedding=[0.0] * 384)[
            "documents"
        ]
        assert [document.id for document in ranked] == ["a", "b"]
        assert "connection reset" in caplog.text

    def test_chunks_of_another_collection_ask_nothing_of_the_store(self):
        other = Mock(spec=KnowledgeBase)
        other.collection = "another_collection"
        ranked = self._ranker(other).run(query=QUESTION, documents=self._documents())["documents"]
        assert len(ranked) == 2 and ranked[0].meta["evidence"]["idf"] == "candidates"
        other.ranking_evidence.assert_not_called()

    def test_an_unreachable_knowledge_base_is_logged_and_skipped(self, monkeypatch, caplog):
        from tests.components.knowledge_base.conftest import closed_port

        monkeypatch.setenv("DATABASE_URL", f"postgresql://kb@127.0.0.1:{closed_port()}/kb?connect_timeout=2")
        ranker = ResearchRanker(top_k=2)
        ranker.warm_up()
        ranked = ranker.run(query=QUESTION, documents=self._documents())["documents"]
        assert len(ranked) == 2 and ranked[0].meta["evidence"]["idf"] == "candidates"
        assert "Cannot connect" in caplog.text


class TestCandidatePool:
    def test_only_the_head_of_the_fused_pool_is_scored(self):
        from components.ranking.research_ranker import ResearchRanker

        with pytest.raises(ValueError, match="max_candidates"):
            ResearchRanker(max_candidates=5)
        ranker = ResearchRanker(top_k=50, max_candidates=10, use_store_evidence=False)
        assert ResearchRanker.from_dict(ranker.to_dict()).max_candidates == 10
        from tests.components.ranking.chunks import kb_document

        # Fifteen fused candidates; the one the fusion put last holds the answer verbatim, but is outside the head.
        documents = [
            kb_document(f"c{i}", f"Unrelated passage number {i} about gardening.", 0.3, score=1.0 - i / 100)
            for i in range(14)
        ]
        documents.append(kb_document("tail", "pgvector 0.5.0 added the HNSW index in August 2023.", 0.9, score=0.01))
        ranked = ranker.run(query="When did pgvector add HNSW?", documents=documents)["documents"]
        assert len(ranked) == 10 and "tail" not in {document.id for document in ranked}
        wide = ResearchRanker(top_k=50, max_candidates=20, use_store_evidence=False)
        assert wide.run(query="When did pgvector add HNSW?", documents=documents)["documents"][0].id == "tail"
