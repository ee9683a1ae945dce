"""The one data model: every source emits `ContextChunk`s, carried through pipelines as Haystack `Document`s."""

from components.contracts.chunk import (
    ArxivMetadata,
    ContextChunk,
    GraphMetadata,
    KnowledgeBaseMetadata,
    MemoryMetadata,
    ScoreKind,
    SourceType,
    WebMetadata,
    chunk_to_document,
    chunks_to_documents,
    document_to_chunk,
    documents_to_chunks,
)
from components.contracts.selection import source_selected
from components.contracts.status import SourceStatus, StatusKind

__all__ = [
    "ArxivMetadata",
    "ContextChunk",
    "GraphMetadata",
    "KnowledgeBaseMetadata",
    "MemoryMetadata",
    "ScoreKind",
    "SourceStatus",
    "SourceType",
    "StatusKind",
    "WebMetadata",
    "chunk_to_document",
    "chunks_to_documents",
    "document_to_chunk",
    "documents_to_chunks",
    "source_selected",
]
