import copy
import dataclasses
import datetime as dt

import pytest
from haystack import Document
from pydantic import ValidationError

from components.contracts import (
    BranchDocuments,
    ContextChunk,
    RankedDocuments,
    ScoreKind,
    SourceStatus,
    SourceType,
    StatusKind,
    chunk_to_document,
    document_to_chunk,
    documents_of,
)

KB_META = {
    "document_id": "doc-1",
    "document_title": "PostgreSQL history",
    "collection_name": "research",
    "chunk_index": 2,
    "document_total_chunks": 5,
    "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
    "similarity_score": 0.42,
    "page_number": 3,
}


def kb_chunk(**overrides) -> ContextChunk:
    values = {
        "id": "doc-1:2",
        "source_type": "kb",
        "text": "PostgreSQL 16 was released in September 2023.",
        "semantic_relevance": 0.71,
        "source_id": "doc-1",
        "source_title": "PostgreSQL history",
        "source_url": "https://example.org/pg",
        "source_date": "2023-09-14",
        "raw_score": 0.42,
        "score_kind": "cosine",
        "ranks": {"kb_dense": 1},
        "metadata": dict(KB_META),
    }
    values.update(overrides)
    return ContextChunk(**values)


class TestContextChunk:
    def test_parses_and_types_fields(self):
        chunk = kb_chunk()
        assert chunk.source_type is SourceType.KB
        assert chunk.score_kind is ScoreKind.COSINE
        assert chunk.source_date == dt.date(2023, 9, 14)
        assert chunk.metadata["page_number"] == 3  # source-specific extras survive

    def test_relevance_noise_is_clamped_into_range(self):
        assert kb_chunk(semantic_relevance=1.0000001).semantic_relevance == 1.0
        assert kb_chunk(semantic_relevance=-0.2).semantic_relevance == 0.0

    def test_kb_chunk_without_its_metadata_is_rejected(self):
        with pytest.raises(ValidationError, match="document_id"):
            kb_chunk(metadata={"document_title": "x"})

    def test_empty_text_is_rejected(self):
        with pytest.raises(ValidationError):
            kb_chunk(text="")

    def test_unknown_source_type_is_rejected(self):
        with pytest.raises(ValidationError):
            kb_chunk(source_type="fax")

    def test_datetime_source_date_becomes_a_date(self):
        chunk = kb_chunk(source_date=dt.datetime(2020, 1, 2, 3, 4))
        assert chunk.source_date == dt.date(2020, 1, 2)

    def test_web_metadata_is_validated(self):
        with pytest.raises(ValidationError, match="page_url"):
            ContextChunk(
                id="w1", source_type="web", text="t", semantic_relevance=0.5, source_id="u", metadata={"domain": "x"}
            )


class TestDocumentConversion:
    def test_round_trip_is_lossless(self):
        chunk = kb_chunk()
        document = chunk_to_document(chunk)
        assert isinstance(document, Document)
        assert document.id == chunk.id
        assert document.content == chunk.text
        assert document.score == pytest.approx(0.71)
        assert document.meta["source_type"] == "kb"
        assert document.meta["source_date"] == "2023-09-14"
        assert document.meta["document_id"] == "doc-1"  # flat, so Haystack filters see it
        assert document_to_chunk(document) == chunk

    def test_round_trip_survives_json(self):
        chunk = kb_chunk()
        document = Document.from_dict(chunk_to_document(chunk).to_dict())
        assert document_to_chunk(document) == chunk

    def test_what_only_the_pipeline_reads_is_not_part_of_the_chunk_shown(self):
        # The sentence terms ingestion stores for the ranker travel in the Document, not in the chunk a tool or an API
        # shows; the rest of the metadata (the sentence spans among it) stays.
        chunk = kb_chunk(metadata={**KB_META, "sentence_spans": [[0, 10]], "sentence_terms": "postgresql 16 releas|"})
        shown = document_to_chunk(chunk_to_document(chunk))
        assert "sentence_terms" not in shown.metadata
        assert shown.metadata == {**KB_META, "sentence_spans": [[0, 10]]}

    def test_document_without_relevance_uses_its_score(self):
        document = chunk_to_document(kb_chunk())
        meta = {key: value for key, value in document.meta.items() if key != "semantic_relevance"}
        document = dataclasses.replace(document, meta=meta, score=0.33)
        assert document_to_chunk(document).semantic_relevance == pytest.approx(0.33)

    def test_foreign_document_is_rejected_clearly(self):
        with pytest.raises(ValidationError):
            document_to_chunk(Document(content="no attribution"))


class TestSourceStatus:
    def test_skipped_factory(self):
        status = SourceStatus.skipped("web", "not selected")
        assert status.status is StatusKind.SKIPPED
        assert not status.ok
        assert status.to_dict()["status"] == "skipped"

    def test_negative_time_is_rejected(self):
        with pytest.raises(ValidationError):
            SourceStatus(source="kb", status="success", execution_time_ms=-1)

    def test_a_status_is_immutable_and_copies_as_itself(self):
        status = SourceStatus(source="kb", status="success", execution_time_ms=3.5, total_found=2)
        with pytest.raises(ValidationError):
            status.message = "changed"  # type: ignore[misc]
        assert copy.deepcopy(status) is status  # Haystack's copy of a component's input hands it on as it is
        changed = status.model_copy(update={"status": StatusKind.ERROR})
        assert changed.status is StatusKind.ERROR and status.status is StatusKind.SUCCESS


class TestRankedDocuments:
    def test_is_handed_on_as_itself_and_read_as_a_new_list(self):
        documents = (chunk_to_document(kb_chunk()), chunk_to_document(kb_chunk(id="doc-1:3")))
        ranked = RankedDocuments(documents)
        assert copy.deepcopy(ranked) is ranked  # one value, never copied chunk by chunk
        with pytest.raises(dataclasses.FrozenInstanceError):
            ranked.documents = ()  # type: ignore[misc]
        read = documents_of(ranked)
        assert read == list(documents) and read[0] is documents[0]
        read.pop()  # the reader's own list
        assert len(ranked.documents) == 2
        # Like the other read-only views it is one value, compared by identity; its contents compare as documents.
        assert RankedDocuments(documents) != ranked and RankedDocuments(documents).documents == ranked.documents

    def test_every_form_a_documents_socket_receives_reads_the_same(self):
        documents = [chunk_to_document(kb_chunk())]
        assert documents_of(documents) == documents and documents_of(documents) is not documents
        assert documents_of(BranchDocuments(tuple(documents))) == documents
        assert documents_of(RankedDocuments(tuple(documents))) == documents
        assert documents_of(None) == [] and documents_of(RankedDocuments()) == []
