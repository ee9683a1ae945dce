"""Knowledge-base chunks as the sources emit them, for tests of the stages after retrieval."""

from __future__ import annotations

import dataclasses

from haystack import Document

from components.contracts import ContextChunk, chunk_to_document


def kb_document(
    chunk_id: str,
    text: str,
    relevance: float | None = 0.5,
    *,
    title: str | None = None,
    ranks: dict[str, int] | None = None,
    score: float | None = None,
    date: str | None = None,
) -> Document:
    """A kb chunk as `KnowledgeBaseSearch` returns it; `relevance=None` drops `semantic_relevance` from meta."""
    chunk = ContextChunk(
        id=chunk_id,
        source_type="kb",
        text=text,
        semantic_relevance=relevance if relevance is not None else 0.0,
        source_id=f"doc-{chunk_id}",
        source_title=title or f"Document {chunk_id}",
        source_url=f"https://example.org/{chunk_id}",
        source_date=date,
        ranks=dict(ranks or {}),
        metadata={
            "document_id": f"doc-{chunk_id}",
            "document_title": title or f"Document {chunk_id}",
            "collection_name": "tests",
            "chunk_index": 0,
            "document_total_chunks": 1,
            "embedding_model": "sentence-transformers/all-MiniLM-L6-v2",
        },
    )
    document = chunk_to_document(chunk)
    if relevance is None:
        document.meta.pop("semantic_relevance")
    return document if score is None else dataclasses.replace(document, score=score)
